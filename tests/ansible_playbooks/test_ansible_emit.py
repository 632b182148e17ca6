"""The ansible/ output: inventory groups and addresses, group_vars, determinism, lint, syntax."""

from __future__ import annotations

import filecmp
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
from ansible_helpers import DATA, EXAMPLES, IBSTAT, ansible_bin, build
from ruamel.yaml import YAML
from vendor_tables import dgx_h100_compute_ports, dgx_h100_storage_ports

from blueprints.catalog.perf import perf_data
from generator.emit import nccl
from generator.emit.ansible import inventories as ansible_inventories
from generator.findings import BlueprintError
from generator.pipeline import load_and_resolve
from generator.resources import playbooks_dir

LINT_TIMEOUT = 600


@pytest.fixture(scope="module")
def superpod_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(EXAMPLES / "superpod-h100-4su.yaml", tmp_path_factory.mktemp("superpod"))


def _yaml(path: Path):  # type: ignore[no-untyped-def]
    """The file as plain data; `!unsafe` (every group_vars string) read as the string it marks."""
    yaml = YAML(typ="safe", pure=True)
    yaml.constructor.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(path.read_text())


def _inventory_json(inv: Path) -> dict:  # type: ignore[type-arg]
    proc = subprocess.run(
        [ansible_bin("ansible-inventory"), "-i", str(inv), "--list"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_inventory_groups_and_addresses_as_ansible_reads_them(superpod_build: Path) -> None:
    data = _inventory_json(superpod_build / "ansible" / "inventory.yml")
    hostvars = data["_meta"]["hostvars"]
    # 127 DGX as in NVIDIA's RA: the fourth SU's free node slot carries the UFM appliances (appliances.yml)
    assert len(hostvars) == 127 + 8 + 3
    assert len(data["pool_dgx"]["hosts"]) == 127
    assert data["role_gpu"]["children"] == ["pool_dgx"]
    # cpu-1u management nodes have an NDR200 port on the storage fabric: they need the RDMA stack too
    assert sorted(data["rdma"]["children"]) == ["pool_dgx", "pool_mgmt", "pool_oss"]
    for rail in range(8):  # every DGX has a port on each of the 8 rails
        assert len(data[f"rail{rail}"]["hosts"]) == 127
    assert "rail8" not in data
    for su in range(1, 5):  # 32 node slots per scalable unit, the last one's 32nd for UFM
        assert len(data[f"su{su}"]["hosts"]) == (31 if su == 4 else 32)
    assert sum(len(v.get("hosts", [])) for k, v in data.items() if k.startswith("rack_")) == 138
    # management addresses: 10.10.0.0/16, first 256 reserved, one block per pool
    assert hostvars["dgx001"]["ansible_host"] == "10.10.1.1"
    assert hostvars["dgx127"]["ansible_host"] == "10.10.1.127"
    assert hostvars["oss001"]["ansible_host"] == "10.10.2.1"
    assert hostvars["mgmt003"]["ansible_host"] == "10.10.3.3"
    addrs = [v["ansible_host"] for v in hostvars.values()]
    assert len(set(addrs)) == len(addrs)
    assert hostvars["dgx001"]["cb_rack"] == "r01-01" and hostvars["dgx001"]["cb_su"] == 1
    # IPoIB addresses go to the interface names NVIDIA publishes (Table 6 compute, Table 5 storage cards)
    assert set(hostvars["dgx001"]["cb_fabric_addresses"]) == {r.netdev for r in dgx_h100_compute_ports()} | {
        r.names["infiniband"] for r in dgx_h100_storage_ports()
    }


def test_rack_groups_match_the_plan(superpod_build: Path) -> None:
    from generator.plan.build import build_plan

    cluster = load_and_resolve(EXAMPLES / "superpod-h100-4su.yaml")[1]
    plan = build_plan(cluster)
    inv = _yaml(superpod_build / "ansible" / "inventory.yml")["all"]["children"]
    for node in plan.nodes():
        group = "rack_" + node.rack.replace("-", "_")
        assert node.name in inv[group]["hosts"], node


def test_management_cidr_too_small_is_a_located_error(tmp_path: Path) -> None:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("10.10.0.0/16", "10.10.0.0/25")
    bp = tmp_path / "small.yaml"
    bp.write_text(text)
    cluster = load_and_resolve(bp)[1]
    with pytest.raises(BlueprintError) as exc:
        ansible_inventories.management_addresses(cluster)
    finding = exc.value.findings[0]
    assert finding.path == ("deployment", "maas", "management_cidr")
    assert "128 addresses" in finding.message and finding.hint


def test_group_vars_carry_the_pins_mounts_and_derived_nccl(superpod_build: Path) -> None:
    gv = superpod_build / "ansible" / "group_vars"
    all_vars = _yaml(gv / "all.yml")
    assert all_vars["nvidia_driver_branch"] == "550" and all_vars["nvidia_driver_version"] == "550.127.08"
    assert all_vars["nccl_version"] == "2.21.5" and all_vars["nccl_cuda"] == "12.4"
    assert all_vars["doca_ofed_kind"] == "doca" and all_vars["doca_ofed_version"] == "2.9.1"
    assert all_vars["shared_storage_mounts"] == [
        {
            "name": "scratch",
            "kind": "lustre",
            "src": "mgs01@o2ib:/scratch",
            "path": "/lustre/scratch",
            "fstype": "lustre",
            "opts": "flock,_netdev",
            "server": "mgs01",
        }
    ]
    dgx = _yaml(gv / "pool_dgx.yml")
    # A DGX H100 on a rail-optimised NDR fabric: the 8 compute ports in rail order as NVIDIA's User Guide
    # Table 6 names them (test data), port 1; no bootstrap interface: the two in-band ports (Table 5, slot
    # 1 and 2 port 2) are bonded in a BasePOD and the bond's name is the site's; rings on one NIC index.
    settings = {s["name"]: s for s in dgx["nccl_settings"]}
    assert settings["NCCL_IB_HCA"]["value"] == "=" + ",".join(f"{r.rdma}:1" for r in dgx_h100_compute_ports())
    assert "NCCL_SOCKET_IFNAME" not in settings
    inband = [dgx_h100_storage_ports()[i].names["infiniband"] for i in (1, 3)]  # IB storage fabric
    comments = " ".join(
        line.strip().lstrip("#").strip()
        for line in (gv / "pool_dgx.yml").read_text().splitlines()
        if line.strip().startswith("#")
    )
    assert (
        f"NCCL_SOCKET_IFNAME left out: the in-band ports of `dgx-h100` ({', '.join(sorted(inband))}) carry a "
        "compute or storage fabric" in comments
    )
    assert settings["NCCL_CROSS_NIC"]["value"] == "0"
    # long reasons are folded in the YAML file and must read back whole (one line, ending as written)
    reason = settings["NCCL_IB_HCA"]["reason"]
    assert "Networking [DGXH100-T6])" in reason
    # ... and names the storage cards' devices (Table 5) the exact match keeps out
    storage = sorted((r.rdma for r in dgx_h100_storage_ports()), key=lambda d: int(d.split("_")[1]))
    assert reason.endswith(f"`=` (exact match) keeps {', '.join(storage)} out")
    assert all(s["reason"] and "\n" not in s["reason"] and s["source"] for s in settings.values())
    assert dgx["nvidia_driver_nvswitch"] is True and dgx["cb_compute_transport"] == "ib"
    assert dgx["acceptance_link_gbytes"] == 50.0  # 8 x 400 Gb/s for 8 GPUs
    assert dgx["acceptance_expected_nvlink"] == "NV18"
    # the DGX H100's compute HCAs in rail order: User Guide Table 6 (test data), not mlx5_0..7
    assert [h["dev"] for h in dgx["acceptance_expected_hcas"]] == [r.rdma for r in dgx_h100_compute_ports()]
    assert dgx["nccl_expected_devices"] == [f"{r.rdma}/ports/1" for r in dgx_h100_compute_ports()]
    assert set(dgx["acceptance_predicted_busbw"]) <= {"all_reduce", "all_gather", "alltoall"}
    # the role's margin is acceptance-report's ratio, from the catalogue (one figure for both); the role's
    # own default, for a play run without group_vars, is the same value
    ratio = perf_data().policy.acceptance_ratio.value
    assert dgx["acceptance_prediction_margin"] == ratio
    defaults = YAML(typ="safe").load((playbooks_dir() / "roles/acceptance/defaults/main.yml").read_text())
    assert defaults["acceptance_prediction_margin"] == ratio
    # the comment above each setting names the blueprint fact
    text = (gv / "pool_dgx.yml").read_text()
    assert "# NCCL_CROSS_NIC=0: rail-optimised fat-tree" in text
    assert all(len(line) <= 160 for line in text.splitlines())


def test_nfs_and_roce_vars(tmp_path: Path) -> None:
    out = build(DATA / "roce-pcie.yaml", tmp_path / "b")
    all_vars = _yaml(out / "ansible" / "group_vars" / "all.yml")
    mounts = {m["name"]: m for m in all_vars["shared_storage_mounts"]}
    assert mounts["home"]["src"] == "filer:/vol/home" and mounts["home"]["fstype"] == "nfs"
    assert mounts["data"]["src"] == "beegfs_nodev"
    assert "cfgFile=/etc/beegfs/beegfs-client-data.conf" in mounts["data"]["opts"]
    pool = _yaml(out / "ansible" / "group_vars" / "pool_l40s.yml")
    (qos,) = pool["roce_qos_classes"]
    assert qos["fabric"] == "compute" and qos["pfc_priority"] == 4 and qos["dscp"] == 24
    assert qos["interfaces"] == ["ens1f0np0", "ens2f0np0"]  # declared in pools[].ports
    assert qos["rdma_devices"] == ["mlx5_0", "mlx5_1"]
    assert pool["nccl_topology"]["numa_nodes"][1][0]["gpus"] == [2, 3]


def test_output_is_deterministic(superpod_build: Path, tmp_path: Path) -> None:
    again = build(EXAMPLES / "superpod-h100-4su.yaml", tmp_path / "again")
    cmp = filecmp.dircmp(superpod_build, again)

    def diffs(c: filecmp.dircmp) -> list[str]:  # type: ignore[type-arg]
        out = list(c.diff_files) + list(c.left_only) + list(c.right_only)
        for sub in c.subdirs.values():
            out.extend(diffs(sub))
        return out

    assert diffs(cmp) == []
    # shallow=False: compare bytes, not stat signatures
    for f in ("ansible/inventory.yml", "ansible/group_vars/pool_dgx.yml", "nccl/dgx/nccl.conf"):
        assert filecmp.cmp(superpod_build / f, again / f, shallow=False)


def test_site_yml_syntax(superpod_build: Path) -> None:
    a = superpod_build / "ansible"
    proc = subprocess.run(
        [ansible_bin("ansible-playbook"), "-i", "inventory.yml", "--syntax-check", "site.yml"],
        cwd=a,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _lint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ansible_bin("ansible-lint"), "--offline", "--profile", "production", "--nocolor", "."],
        cwd=path,
        capture_output=True,
        text=True,
        timeout=LINT_TIMEOUT,
    )


def _shipped_files() -> list[Path]:
    """The shipped playbooks and roles, as `generate` copies them (the README is for readers, not Ansible)."""
    root = playbooks_dir()
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.name != "README.md")


def test_generated_output_carries_every_shipped_playbook_unchanged(superpod_build: Path) -> None:
    """So that one ansible-lint run (below) covers both: the shipped playbooks are linted as they are run."""
    out = superpod_build / "ansible"
    shipped = _shipped_files()
    assert len(shipped) > 50 and Path("site.yml") in shipped
    differ = [
        str(f)
        for f in shipped
        if not (out / f).is_file() or not filecmp.cmp(playbooks_dir() / f, out / f, shallow=False)
    ]
    assert differ == []


def test_ansible_lint_production_on_generated_output(superpod_build: Path) -> None:
    """The generated playbooks, inventory and group_vars, and with them every shipped playbook and role
    (the test above): ~60 s of CI for one run, so the shipped tree is not linted a second time on its own."""
    proc = _lint(superpod_build / "ansible")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Profile 'production' was required, and it passed" in proc.stdout + proc.stderr


# ----------------------------------------------------------------- acceptance parsers (the role's filters)
def _parsers():  # type: ignore[no-untyped-def]
    path = playbooks_dir() / "roles" / "acceptance" / "filter_plugins" / "acceptance_parsers.py"
    spec = importlib.util.spec_from_file_location("acceptance_parsers", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


NCCL_TESTS_OUT = """\
# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
  1073741824     268435456     float     sum      -1   5321.2  201.78  378.34      0   5310.9  202.17  379.07      0
  8589934592    2147483648     float     sum      -1    40212  213.61  400.52      0    40190  213.73  400.74      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 389.672
"""
TOPO = """\
\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNV18\tNV18\tPXB\t0-55\t0
GPU1\tNV18\t X \tNV18\tSYS\t0-55\t0
GPU2\tNV18\tPIX\t X \tSYS\t56-111\t1
NIC0\tPXB\tSYS\tSYS\t X
"""


def test_acceptance_parsers() -> None:
    p = _parsers()
    assert p.nccl_busbw(NCCL_TESTS_OUT) == pytest.approx(389.672)
    assert p.nccl_errors(NCCL_TESTS_OUT) == 0
    with pytest.raises(ValueError):
        p.nccl_busbw("mpirun: error")
    port = p.ibstat_port(IBSTAT)
    assert port == {"state": "Active", "physical_state": "LinkUp", "rate": 400.0, "link_layer": "InfiniBand"}
    m = p.nvidia_topo_matrix(TOPO)
    assert m["GPU0"] == {"GPU1": "NV18", "GPU2": "NV18"}
    assert m["GPU2"]["GPU1"] == "PIX"  # a broken NVLink shows up as a PCIe path
    assert "NIC0" not in m


def test_topology_template_renders_valid_nccl_xml() -> None:
    """The nccl role's topo.xml.j2 with the generated layout and bus ids as the role reads them."""
    import xml.etree.ElementTree as ET

    import jinja2

    from generator.plan.build import build_plan

    cluster = load_and_resolve(DATA / "roce-pcie.yaml")[1]
    prof = nccl.derive(cluster, cluster.pools[0], build_plan(cluster))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(playbooks_dir() / "roles" / "nccl" / "templates")),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
    )
    xml = env.get_template("topo.xml.j2").render(
        nccl_pool="l40s",
        nccl_transport=prof.transport,
        nccl_topology=nccl.topology_vars(prof),
        ansible_architecture="x86_64",
        _nccl_cpumaps=["0000ffff", "ffff0000"],
        _nccl_gpu_busids=["0000:17:00.0", "0000:31:00.0", "0000:b1:00.0", "0000:ca:00.0"],
        _nccl_nic_busids={"mlx5_0": "0000:18:00.0", "mlx5_1": "0000:b2:00.0"},
    )
    system = ET.fromstring(xml)
    cpus = system.findall("cpu")
    assert [c.get("affinity") for c in cpus] == ["0000ffff", "ffff0000"]
    second = cpus[1].find("pci")
    assert second is not None and second.get("busid") == "ffff:ff:02.0"
    kids = [(p.get("busid"), p.get("class")) for p in second.findall("pci")]
    assert kids == [("0000:b1:00.0", "0x030200"), ("0000:ca:00.0", "0x030200"), ("0000:b2:00.0", "0x020000")]
    assert second.get("link_speed") == "16.0 GT/s PCIe" and second.get("link_width") == "16"


def test_cloud_inventory_has_no_invented_addresses(tmp_path: Path) -> None:
    bp = tmp_path / "aws.yaml"
    bp.write_text(
        "apiVersion: cluster-blueprint/v1\nname: c-aws\npools:\n  - {name: gpu, count: 2, server: aws/p5.48xlarge}\n"
        "storage:\n  - {name: fsx, kind: managed, mount: /fsx}\n"
        "deployment:\n  target: aws\n  cloud: {region: us-east-1}\n"
    )
    out = build(bp, tmp_path / "b")
    data = _inventory_json(out / "ansible" / "inventory.yml")
    assert data["_meta"]["hostvars"].get("gpu001", {}).get("ansible_host") is None
    assert "rdma" not in data  # EFA is not a verbs fabric: no OFED stack
    pool = _yaml(out / "ansible" / "group_vars" / "pool_gpu.yml")
    assert pool["cb_compute_transport"] == "efa" and pool["nccl_plugin"] == "aws-ofi-nccl"
    # aws-ofi-nccl doc/efa-env-var.md: with libfabric>=1.18 / aws-ofi-nccl>=1.7 none of these is needed
    assert not {s["name"] for s in pool["nccl_settings"]} & {
        "FI_PROVIDER",
        "FI_EFA_USE_DEVICE_RDMA",
        "NCCL_PROTO",
    }
    all_vars = (out / "ansible" / "group_vars" / "all.yml").read_text()
    assert "not in fstab: fsx (managed): created by `pulumi up`" in all_vars
    assert "shared_storage_managed_mounts" in all_vars  # where the mount comes from after `pulumi up`


def test_weka_and_gpfs_say_what_the_user_must_supply(tmp_path: Path) -> None:
    """WEKA is written to fstab only with what docs.weka.io requires (`net=` on-premises, none on AWS);
    IBM Storage Scale is joined with mmaddnode/mmmount, never fstab: the generated vars say so."""
    text = (DATA / "ib-hgx-ports.yaml").read_text()
    text = text.replace("options: [num_cores=1, net=ib0]", "options: [num_cores=1]")
    text = text.replace(
        "software:",
        "  - {name: gpfs1, kind: gpfs, mount: /gpfs/fs1, server: nsd01}\nsoftware:",
        1,
    )
    bp = tmp_path / "storage.yaml"
    bp.write_text(text)
    out = build(bp, tmp_path / "b")
    all_vars = (out / "ansible" / "group_vars" / "all.yml").read_text()
    mounts = {m["name"] for m in _yaml(out / "ansible" / "group_vars" / "all.yml")["shared_storage_mounts"]}
    assert mounts == {"home", "scratch"}
    assert "not in fstab: weights (weka): on-premises WEKA clients need `net=<netdev>`" in all_vars
    assert "not in fstab: gpfs1 (gpfs): IBM Storage Scale clients are not mounted from fstab" in all_vars
    assert "`mmaddnode -N <nodes>`" in all_vars and "supply it" in all_vars
