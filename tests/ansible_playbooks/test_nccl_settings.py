"""NCCL settings derived from the resolved fabric: each value, and the fact that chose it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from ansible_helpers import DATA, EXAMPLES
from vendor_tables import (
    TABLES,
    dgx_h100_compute_ports,
    dgx_h100_storage_ports,
    env_file,
    gcp_a3_mega_stage_scripts,
    gcp_a3_mega_tcpxo_install,
    gcp_a3_ultra_gib_install,
)

from generator.emit import nccl
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan


def _group_vars(text: str) -> dict[str, Any]:
    """Generated group_vars as plain data: `!unsafe` (every string; long ones wrapped) read as its string."""
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))  # type: ignore[arg-type]
    doc: dict[str, Any] = yaml.load(text, Loader=_Loader)
    return doc


def _cluster(path: Path):  # type: ignore[no-untyped-def]
    return load_and_resolve(path)[1]


def _pool(cluster, name: str):  # type: ignore[no-untyped-def]
    return next(p for p in cluster.pools if p.name == name)


@pytest.fixture(scope="module")
def superpod():  # type: ignore[no-untyped-def]
    cluster = _cluster(EXAMPLES / "superpod-h100-4su.yaml")
    return cluster, build_plan(cluster)


def test_superpod_ib_settings(superpod) -> None:
    cluster, plan = superpod
    prof = nccl.derive(cluster, _pool(cluster, "dgx"), plan)
    env = prof.env()
    assert prof.transport == "ib"
    # DGX H100/H200 User Guide Table 6 (test data): rail k = the port paired with GPU k
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"{r.rdma}:1" for r in dgx_h100_compute_ports())
    assert prof.devices == tuple(r.rdma for r in dgx_h100_compute_ports())
    # no bootstrap interface: User Guide Table 5 (test data) has two in-band ports (slot 1 and 2 port 2),
    # and the example's InfiniBand storage fabric takes them (IPoIB): no port is the hosts' own
    inband = [dgx_h100_storage_ports()[i] for i in (1, 3)]
    assert [p.port for p in inband] == ["Slot1 P2", "Slot2 P2"]
    assert "NCCL_SOCKET_IFNAME" not in env
    assert any(
        "NCCL_SOCKET_IFNAME left out" in n and "carry a compute or storage fabric" in n for n in prof.notes
    )
    assert env["NCCL_IB_SL"] == "0"
    assert env["NCCL_CROSS_NIC"] == "0"  # rail-optimised fat-tree
    assert env["NCCL_COLLNET_ENABLE"] == "1" and env["SHARP_COLL_ENABLE_SAT"] == "1"  # qm9700 + sm.sharp
    assert prof.plugin == "nccl-rdma-sharp-plugins"
    assert env["NCCL_NVLS_ENABLE"] == "1"  # H100 + NVSwitch
    assert env["NCCL_NET_GDR_LEVEL"] == "PXB"
    assert "NCCL_IB_GID_INDEX" not in env and "NCCL_IB_TC" not in env  # RoCE only
    assert "NCCL_TOPO_FILE" not in env and prof.topology is None  # bare-metal NVSwitch box: sysfs is right
    # the names come with their source; the management (BMC) port is never an mlx5 device
    assert "NVIDIA DGX H100/H200 User Guide" in prof.get("NCCL_IB_HCA").reason
    bmc = _pool(cluster, "dgx").ports_for("management")
    assert [p.plan_port for p in bmc] == ["BMC"] and not bmc[0].has_rdma


def test_every_setting_names_a_real_blueprint_fact(superpod) -> None:
    cluster, plan = superpod
    fields = set(type(cluster.blueprint).model_fields)
    for prof in nccl.profiles(cluster, plan):
        for s in prof.settings:
            assert s.reason and s.source, s
            if s.source.startswith("catalog:"):
                section, key = s.source[len("catalog:") :].split(".")[:2]
                assert key in getattr(cluster.catalog, section), s
            else:
                assert s.source.split(".")[0].split("[")[0] in fields, s


def test_hca_order_follows_the_plans_rails(superpod) -> None:
    """Swap rails 0 and 1 on the first host: NCCL_IB_HCA must follow the cabling."""
    cluster, plan = superpod
    host = _pool(cluster, "dgx").hostnames[0]
    swapped = []
    for link in plan.links:
        if link.fabric == "compute" and host in (link.a.device, link.b.device) and link.rail in (0, 1):
            link = link._replace(rail=1 - link.rail)  # Link is a NamedTuple
        swapped.append(link)
    prof = nccl.derive(cluster, _pool(cluster, "dgx"), replace(plan, links=tuple(swapped)))
    r = dgx_h100_compute_ports()
    assert prof.env()["NCCL_IB_HCA"].startswith(f"={r[1].rdma}:1,{r[0].rdma}:1,{r[2].rdma}:1")


def test_sharp_off_when_the_subnet_manager_does_not_run_it() -> None:
    cluster = _cluster(DATA / "ib-hgx-nfs.yaml")
    prof = nccl.derive(cluster, _pool(cluster, "gpu"))
    env = prof.env()
    assert env["NCCL_COLLNET_ENABLE"] == "0"
    assert "subnet_manager.sharp is off" in prof.get("NCCL_COLLNET_ENABLE").reason
    assert "SHARP_COLL_ENABLE_SAT" not in env and prof.plugin is None
    assert env["NCCL_IB_SL"] == "1"  # fabrics.compute.subnet_manager.service_level
    # HGX H200 (OEM): no published port table, so no guessed device list
    assert "NCCL_IB_HCA" not in env and any("NCCL_IB_HCA left out" in n for n in prof.notes)


def test_tenant_pools_take_their_partitions_p_key_index() -> None:
    """A pool a partition names is a limited member of Default, so NCCL's default P_Key index 0 cannot
    reach its other hosts; the index is the pool's first full-member partition's place in its ports' tables:
    Default at 0, then every partition the pool's ports are in (one for all ports counts; another pool's
    does not) by P_Key in network byte order, as OpenSM orders them (read back from real OpenSM in
    tests/realtools/test_opensm_tenants.py). Pools no partition names keep index 0 (no setting)."""
    from blueprints.models.fabric import Partition, SubnetManager

    parts = [
        Partition(name="everyone", pkey=0x5, membership="limited"),  # no pools: every port (0x0500)
        Partition(name="other", pkey=0x6, pools=["infer"]),  # 0x0600
        Partition(name="observe", pkey=0x105, pools=["train"], membership="limited"),  # 0x0501
        Partition(name="train", pkey=0x10, pools=["train"]),  # 0x1000
        Partition(name="again", pkey=0x11, pools=["train"]),  # 0x1100
    ]
    sm = SubnetManager(partitions=parts)
    assert nccl.tenant_partition(sm, "train") == (3, 3)  # Default, everyone, observe, then train
    assert nccl.tenant_partition(sm, "infer") == (1, 2)  # Default, everyone, other
    assert nccl.tenant_partition(sm, "login") is None  # named nowhere: full in Default
    limited_only = SubnetManager(partitions=[parts[2]])
    assert nccl.tenant_partition(limited_only, "train") is None  # a full member of none
    # file order is not OpenSM's: 0x30 listed first still comes after train's 0x10
    late = SubnetManager(partitions=[Partition(name="shared", pkey=0x30, membership="limited"), parts[3]])
    assert nccl.tenant_partition(late, "train") == (1, 1)


def test_roce_pcie_settings() -> None:
    cluster = _cluster(DATA / "roce-pcie.yaml")
    prof = nccl.derive(cluster, _pool(cluster, "l40s"), build_plan(cluster))
    env = prof.env()
    assert prof.transport == "roce"
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_IB_TC"] == str(24 << 2)  # lossless.dscp 24
    assert "NCCL_IB_SL" not in env
    assert env["NCCL_CROSS_NIC"] == "1"  # not rail-optimised
    assert env["NCCL_NVLS_ENABLE"] == "0"  # L40S: no NVLink SHARP
    assert env["NCCL_NET_GDR_LEVEL"] == "PHB"
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"  # declared in pools[].ports
    # PCIe box: a topology file pins GPU pairs to their NIC, split over two sockets
    assert env["NCCL_TOPO_FILE"] == nccl.TOPO_PATH
    topo = prof.topology
    assert topo is not None and topo.link_speed == "16.0 GT/s PCIe"
    assert [[(s.gpus, s.nics) for s in node] for node in topo.numa_nodes] == [
        [((0, 1), ("mlx5_0",))],
        [((2, 3), ("mlx5_1",))],
    ]
    assert topo.numa_nodes[0][0].nic_mbps == 400_000


def _cloud(tmp_path: Path, target: str, server: str):  # type: ignore[no-untyped-def]
    text = (
        f"apiVersion: cluster-blueprint/v1\nname: c-{target}\npools:\n  - {{name: gpu, count: 4, server: {server}}}\n"
        f"deployment:\n  target: {target}\n  cloud: {{region: r1}}\n"
    )
    p = tmp_path / f"{target}.yaml"
    p.write_text(text)
    cluster = _cluster(p)
    return nccl.derive(cluster, cluster.pools[0])


def test_aws_p5_follows_aws_ofi_nccl(tmp_path: Path) -> None:
    """aws-ofi-nccl doc/efa-env-var.md: with libfabric>=1.18 and aws-ofi-nccl>=1.7 no variable is needed."""
    efa = _cloud(tmp_path, "aws", "aws/p5.48xlarge")
    assert efa.transport == "efa" and efa.plugin == "aws-ofi-nccl"
    assert set(efa.env()) == {"NCCL_NVLS_ENABLE"}  # no FI_PROVIDER / FI_EFA_USE_DEVICE_RDMA guesses


def test_gcp_a3_mega_and_ultra_take_the_cluster_toolkit_settings(tmp_path: Path) -> None:
    tcpxo = _cloud(tmp_path, "gcp", "gcp/a3-megagpu-8g")
    assert tcpxo.transport == "tcpxo" and tcpxo.plugin == "tcpxo"
    mega = env_file("gcp_a3_mega_env.sh")
    assert {k: v for k, v in tcpxo.env().items() if k in mega} == mega
    assert tcpxo.plugin_profile == "/var/lib/tcpxo/lib64/nccl-env-profile.sh"
    ultra = _cloud(tmp_path, "gcp", "gcp/a3-ultragpu-8g")
    assert ultra.transport == "gib" and ultra.plugin == "gib"
    vendor = env_file("gcp_a3_ultra_env.sh")
    assert {k: v for k, v in ultra.env().items() if k in vendor} == vendor
    assert ultra.plugin_profile == "/usr/local/gib/scripts/set_nccl_env.sh"
    assert "NCCL_IB_HCA" not in ultra.env() and "NCCL_IB_GID_INDEX" not in ultra.env()  # gIB sets its own
    assert ultra.interfaces == ("enp0s19", "enp192s20")


def test_gcp_a3_high_without_a_vendor_entry_guesses_nothing(tmp_path: Path) -> None:
    tcpx = _cloud(tmp_path, "gcp", "gcp/a3-highgpu-8g")
    assert tcpx.transport == "tcpx" and not any(k.startswith("NCCL_GPUDIRECTTCPX") for k in tcpx.env())
    assert any("PLT001" in n for n in tcpx.notes)


def test_azure_keeps_the_images_nccl_conf_and_topology(tmp_path: Path) -> None:
    azure = _cloud(tmp_path, "azure", "azure/Standard_ND96isr_H100_v5")
    image = env_file("azure_ndv5_nccl.conf")  # Azure/azhpc-images customizations/ndv5.sh
    assert {k: v for k, v in azure.env().items() if k in image} == image
    assert azure.topology is None  # the image's topology file, not a synthetic one
    assert "/etc/nccl.conf" in azure.keep_files and "/opt/microsoft/ndv5/topo.xml" in azure.keep_files
    assert "NCCL_IB_HCA" not in azure.env()  # device names not published; the image's topology pins them


def test_oci_h100_is_the_oci_hpc_stacks_nccl_conf(tmp_path: Path) -> None:
    oci = _cloud(tmp_path, "oci", "oci/BM.GPU.H100.8")
    vendor = env_file("oci_bm_gpu_h100_8_nccl.conf")  # oci-hpc nccl-conf/files/h100
    assert {k: v for k, v in oci.env().items() if k in vendor} == vendor
    hca = oci.env()["NCCL_IB_HCA"].lstrip("=").split(",")
    assert len(hca) == 16 and "mlx5_2" not in hca and "mlx5_11" not in hca  # the two host NICs stay out
    assert oci.topology is None and oci.env()["NCCL_NET_GDR_LEVEL"] == "PXB"  # bare metal, not a VM


def test_rendered_files_are_deterministic_and_complete(superpod) -> None:
    cluster, plan = superpod
    prof = nccl.derive(cluster, _pool(cluster, "dgx"), plan)
    conf = nccl.render(prof, "nccl.conf.j2")
    assert conf == nccl.render(nccl.derive(cluster, _pool(cluster, "dgx"), plan), "nccl.conf.j2")
    lines = conf.splitlines()
    for s in prof.settings:
        i = lines.index(f"{s.name}={s.value}")
        assert lines[i - 1].startswith("# ") and s.source in lines[i - 1]
    env = nccl.render(prof, "nccl.env.j2")
    assert f"NCCL_IB_HCA=={dgx_h100_compute_ports()[0].rdma}:1" in env


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_no_example_names_a_device_or_interface_nobody_published(example: str) -> None:
    """Every RDMA device / interface an example's NCCL and QoS settings name is published or declared."""
    cluster = _cluster(EXAMPLES / example)
    plan = build_plan(cluster)
    for pool in cluster.gpu_pools:
        prof = nccl.derive(cluster, pool, plan)
        known_rdma = {p.rdma_dev for p in pool.ports if p.rdma_known}
        known_if = {p.netdev for p in pool.ports if p.netdev_known} | {
            n.netdev for n in pool.extra_ports if n.netdev
        }
        for s in prof.settings:
            vendor = s.source.startswith("catalog:platforms.")
            if s.name == "NCCL_IB_HCA" and not vendor:
                devs = {d.split(":")[0] for d in s.value.lstrip("=^").split(",")}
                assert devs <= known_rdma, (example, s)
            if s.name == "NCCL_SOCKET_IFNAME" and not vendor:
                names = {n for n in s.value.lstrip("=^").split(",")}
                assert names <= known_if, (example, s)
        assert set(prof.devices) <= known_rdma and set(prof.interfaces) <= known_if | {
            v for s in prof.settings if s.name == "NCCL_SOCKET_IFNAME" for v in s.value.split(",")
        }


def test_gcp_a3_ultra_plugin_install_is_the_cluster_toolkits(tmp_path: Path) -> None:
    """The nccl role replays the Cluster Toolkit's gIB install (test data: its install_nccl_gib.yml tasks)."""

    from generator.emit.ansible import group_vars as ansible_group_vars

    cluster = load_and_resolve(EXAMPLES / "gcp-a3-ultra.yaml")[1]
    text = ansible_group_vars.pool_vars(cluster, build_plan(cluster), cluster.pools[0])
    got = _group_vars(text)["nccl_plugin_install"]
    vendor = gcp_a3_ultra_gib_install()
    assert got["apt_keys"] == vendor.apt_keys
    assert [(st["repo"], st["packages"]) for st in got["steps"]] == vendor.steps
    assert got["hold"] == vendor.hold and got["login_profile"] == vendor.login_profile
    # the other platforms ship their plug-in in the image (or need none): nothing to install
    mega = load_and_resolve(EXAMPLES / "superpod-h100-4su.yaml")[1]
    assert "nccl_plugin_install: null" in ansible_group_vars.pool_vars(mega, build_plan(mega), mega.pools[0])


def test_gcp_a3_mega_plugin_install_is_the_slurm_prologs(tmp_path: Path) -> None:
    """The nccl role replays the A3 Mega Slurm prolog's TCPXO install (test data: slurm-gcp's
    receive-data-path-manager-mega lines): the same login, removal, docker command and profile lines."""

    doc = _a3_mega_group_vars(tmp_path)
    got = doc["nccl_plugin_install"]
    vendor = gcp_a3_mega_tcpxo_install()
    box = got["container"]
    assert box["login"] == vendor.login and box["login_path"] == vendor.login_path
    assert box["removes"] == vendor.removes
    assert ["docker", "run", *box["run"], box["image"], *box["args"]] == vendor.installer
    assert got["profile_lines"] == vendor.profile_lines and got["profile_lines_on"] == vendor.profile_lines_on
    # the lines go into the profile the installer writes, which the role checks afterwards
    assert doc["nccl_plugin_profile"] == vendor.profile
    assert got["steps"] == [] and got["apt_keys"] == [] and got["hold"] == [] and got["login_profile"] is None


def test_gcp_a3_mega_job_script_is_staged_as_the_toolkit_does(tmp_path: Path) -> None:
    """The nccl role's job prolog/epilog for A3 Mega is what the Cluster Toolkit's stage_scripts.sh (test
    data) stages: the same slurm-gcp file (pinned to the commit the TCPXO install was read at instead of
    master), the same place, the same modes; platforms without one get none."""
    import re

    from generator.emit.ansible import group_vars as ansible_group_vars

    got = _a3_mega_group_vars(tmp_path)["nccl_job_script"]
    staged = gcp_a3_mega_stage_scripts()
    header = (TABLES / "gcp_a3_mega_rxdm_prolog.sh").read_text().split("\n\n", 1)[0]
    commit = re.search(r"\(commit\s+#\s+([0-9a-f]{40})\)", header)
    assert commit and got["url"] == staged.url.replace("/master/", f"/{commit.group(1)}/")
    assert (got["path"], got["mode"], got["dir_mode"]) == (staged.path, staged.mode, staged.dir_mode)
    for other in ("gcp-a3-ultra.yaml", "superpod-h100-4su.yaml"):
        c = load_and_resolve(EXAMPLES / other)[1]
        assert "nccl_job_script: null" in ansible_group_vars.pool_vars(c, build_plan(c), c.pools[0])


def _a3_mega_group_vars(tmp_path: Path) -> dict:  # type: ignore[type-arg]
    """The GPU pool's group_vars of a two-node GCP A3 Mega cluster, as the play reads them."""
    from generator.emit.ansible import group_vars as ansible_group_vars

    p = tmp_path / "mega.yaml"
    p.write_text(
        "apiVersion: cluster-blueprint/v1\nname: mega\npools:\n"
        "  - {name: gpu, count: 2, server: gcp/a3-megagpu-8g}\n"
        "deployment:\n  target: gcp\n  cloud: {region: us-central1, zone: us-central1-a}\n"
    )
    cluster = load_and_resolve(p)[1]
    return _group_vars(ansible_group_vars.pool_vars(cluster, build_plan(cluster), cluster.pools[0]))
