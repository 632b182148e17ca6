"""Switch and subnet-manager configuration: present for every example that needs it, reproducible, consistent
with the plan's port names, the ASN plan of RFC 7938 and the hosts' RoCE QoS (the real-tool proofs are in
tests/realtools/test_frr_underlay.py and test_opensm_generated.py)."""

from __future__ import annotations

import functools
import ipaddress
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import EXAMPLES, run_cli
from switch_os import with_switch_os
from vendor_tables import dgx_h100_storage_ports

from generator.emit import subnet_manager as sm_emit
from generator.emit import switches as sw_emit
from generator.emit.lldp import render_lldp
from generator.pipeline import check
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster

REPO = Path(__file__).resolve().parents[2]
REALTOOLS = REPO / "tests" / "realtools" / "fixtures"
ROCE_FT = REALTOOLS / "roce-ft2-rail.yaml"
ROCE_DF = REALTOOLS / "roce-dragonfly-small.yaml"
ROCE_PCIE = REPO / "tests" / "ansible_playbooks" / "data" / "roce-pcie.yaml"  # PFC priority 4, DSCP 24
ROCE_STORAGE = REPO / "tests" / "ansible_playbooks" / "data" / "dgx-h100-roce-storage.yaml"  # IB compute
ROLE_DEFAULTS = REPO / "playbooks" / "roles" / "roce_qos" / "defaults" / "main.yml"


class _GroupVarsLoader(yaml.SafeLoader):
    """group_vars mark every string `!unsafe` (never templated); read it as the string it marks."""


_GroupVarsLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _group_vars(text: str) -> dict:  # type: ignore[type-arg]
    return yaml.load(text, Loader=_GroupVarsLoader)


@functools.cache
def built(path: str) -> tuple[ResolvedCluster, Plan]:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    cluster = load_and_resolve(path)[1]
    return cluster, build_plan(cluster)


def _examples() -> list[str]:
    return sorted(str(p) for p in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("example", _examples(), ids=lambda p: Path(p).stem)
def test_every_example_gets_sm_and_switch_config_for_its_fabrics(example: str) -> None:
    cluster, plan = built(example)
    sm_files = sm_emit.render(cluster, plan) if sm_emit.applies(cluster) else {}
    sw_files = sw_emit.render(cluster, plan) if sw_emit.applies(cluster) else {}
    for name, fab in cluster.fabrics.items():
        if cluster.is_cloud:
            continue
        if fab.kind == "infiniband" and fab.spec.subnet_manager is not None:
            sm = fab.spec.subnet_manager
            confs = [f for f in sm_files if f.startswith(f"{name}/") and f.endswith("/opensm.conf")]
            assert len(confs) == (2 if sm.ha else 1)
            prios = sorted(int(re.search(r"^sm_priority (\d+)$", sm_files[c], re.M).group(1)) for c in confs)
            assert len(set(prios)) == len(prios)  # a master and a standby, never a tie
            engine = sm.routing_engine or (
                "ftree" if fab.topology_kind in ("fat-tree", "leaf-spine") else "minhop"
            )
            assert all(f"\nrouting_engine {engine}\n" in sm_files[c] for c in confs)
            assert f"{name}/partitions.conf" in sm_files
            assert (f"{name}/sharp_am.cfg" in sm_files) == sm.sharp
        if fab.kind in ("ethernet", "roce") and name != "management" and fab.spec.topology is not None:
            switches = {d.name for d in plan.switches(name)}
            if not switches:  # a direct-attached torus/hypercube: the nodes are the routers
                assert not any(f.startswith(f"{name}/") for f in sw_files)
                continue
            assert {f.split("/")[1] for f in sw_files if f.startswith(f"{name}/")} == switches
            only = {"cumulus": "startup.yaml", "frr": "frr.conf"}[fab.spec.switch_os]  # one file per switch
            for s in switches:
                assert {f.split("/")[2] for f in sw_files if f.startswith(f"{name}/{s}/")} == {only}
    # the Ethernet management fabric: one startup.yaml per switch (VLANs, relay; tests/switches_mgmt/) and
    # its VLAN table, nothing for an InfiniBand or switchless one
    mgmt = cluster.fabrics.get("management")
    switches = {d.name for d in plan.switches("management")}
    if mgmt is not None and mgmt.kind == "ethernet" and switches and not cluster.is_cloud:
        assert {f for f in sw_files if f.startswith("management/")} == {
            *(f"management/{s}/startup.yaml" for s in switches),
            "management/vlans.csv",
        }
    else:
        assert not any(f.startswith("management/") for f in sw_files)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("example", ["maas-onprem-h100", "roce-dragonfly"])
def test_generate_is_byte_identical(example: str, tmp_path: Path) -> None:
    bp = str(EXAMPLES / f"{example}.yaml")
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        code, _, err = run_cli("generate", bp, "-o", str(out), "--quiet", "--only", "subnet_manager,switches")
        assert code == 0, err
    ta, tb = _tree(a), _tree(b)
    assert ta == tb
    if example == "roce-dragonfly":  # 512 routers x 1 startup.yaml + ASN plan + inventory (+ manifest)
        management = sum(1 for f in ta if f.startswith("switches/management/"))  # its switches + vlans.csv
        assert len(ta) == 512 + 3 + management and management == 35 + 1  # 35 management switches


def _startup(files: dict[str, str], rel: str) -> dict:
    doc = yaml.safe_load(files[rel])
    assert isinstance(doc, list) and len(doc) == 1 and set(doc[0]) == {"set"}
    return doc[0]["set"]


def test_asn_plan_follows_rfc7938_and_loopbacks_are_unique() -> None:
    cluster, plan = built(str(ROCE_FT))
    files = sw_emit.render(cluster, plan)
    asn: dict[str, int] = {}
    loopbacks: set[str] = set()
    for d in plan.switches("compute"):
        s = _startup(files, f"compute/{d.name}/startup.yaml")
        asn[d.name] = s["router"]["bgp"]["autonomous-system"]
        loopbacks.add(s["router"]["bgp"]["router-id"])
        assert 4_200_000_000 <= asn[d.name] <= 4_294_967_294  # RFC 6996 private 4-byte range
    spines = {asn[d.name] for d in plan.switches("compute") if d.role == "spine"}
    leaves = [asn[d.name] for d in plan.switches("compute") if d.role == "leaf"]
    assert len(spines) == 1 and len(set(leaves)) == len(leaves) and not spines & set(leaves)
    assert len(loopbacks) == len(asn)
    assert all(ipaddress.IPv4Address(lo) in ipaddress.IPv4Network("10.254.0.0/16") for lo in loopbacks)
    cluster, plan = built(str(ROCE_DF))
    files = sw_emit.render(cluster, plan)
    df = {
        _startup(files, f"compute/{d.name}/startup.yaml")["router"]["bgp"]["autonomous-system"]
        for d in plan.switches("compute")
    }
    assert len(df) == len(plan.switches("compute"))  # dragonfly routers: one ASN each


@pytest.mark.parametrize("blueprint", [ROCE_FT, ROCE_DF], ids=["fat-tree", "dragonfly"])
def test_nvue_and_frr_describe_the_cabling_sheet_ports(blueprint: Path, tmp_path: Path) -> None:
    """The same fabric as a Cumulus fabric (startup.yaml) and as an FRR fabric (frr.conf)."""
    cluster, plan = built(str(blueprint))
    files = sw_emit.render(cluster, plan)
    frr_files = sw_emit.render(*built(str(with_switch_os(blueprint, tmp_path, compute="frr"))))
    lldp = render_lldp(plan, "compute")  # the expected-LLDP files name the ports as the cabling sheets do
    for d in plan.switches("compute"):
        s = _startup(files, f"compute/{d.name}/startup.yaml")
        frr = frr_files[f"compute/{d.name}/frr.conf"]
        cabled = {ifname for ifname, _ in _lldp_ports(lldp[f"{d.name}.json"])}
        ports = {i for i, v in s["interface"].items() if v.get("type") == "swp"}
        assert ports == cabled
        peers = {ifname for ifname, p in _lldp_ports(lldp[f"{d.name}.json"]) if _is_switch(p)}
        assert set(s["vrf"]["default"]["router"]["bgp"]["neighbor"]) == peers
        assert set(re.findall(r"^ neighbor (\S+) interface peer-group fabric$", frr, re.M)) == peers
        assert re.search(rf"^router bgp {s['router']['bgp']['autonomous-system']}$", frr, re.M)
        assert f" bgp router-id {s['router']['bgp']['router-id']}\n" in frr
        for parent in {i[: i.index("s", 3)] for i in ports if re.match(r"^swp\d+s\d+$", i)}:
            assert s["interface"][parent]["link"]["breakout"] == {f"{d.ports_per_cage}x": {}}


def _lldp_ports(text: str) -> list[tuple[str, dict]]:
    import json

    entries = json.loads(text)["lldp"]["interface"]
    out = []
    for entry in entries if isinstance(entries, list) else [entries]:
        for ifname, body in entry.items():
            out.append((ifname, body))
    return out


def _is_switch(body: dict) -> bool:
    return any(c["capability"]["type"] == "Bridge" for c in body["chassis"].values())


def _roce_blueprints() -> list[str]:
    out = []
    for p in [*_examples(), str(ROCE_FT), str(ROCE_DF), str(ROCE_PCIE)]:
        cluster, _ = built(p)
        if sw_emit.applies(cluster) and any(f.kind == "roce" for f in cluster.fabrics.values()):
            out.append(p)
    return out


def _roce_classes(cluster: Any, plan: Any, pool: Any) -> list[dict[str, Any]]:
    """The roce_qos classes of a pool's group_vars, each over the role defaults it falls back on (its MTU)."""
    from generator.emit.ansible.group_vars import pool_vars

    defaults = yaml.safe_load(ROLE_DEFAULTS.read_text())
    classes = _group_vars(pool_vars(cluster, plan, pool)).get("roce_qos_classes") or []
    return [{"mtu": defaults["roce_qos_mtu"], **c} for c in classes]


@pytest.mark.parametrize("blueprint", [*_roce_blueprints(), str(ROCE_STORAGE)], ids=lambda p: Path(p).stem)
def test_host_and_switch_roce_qos_agree(blueprint: str) -> None:
    """What the hosts' roce_qos role applies on each RoCE fabric's ports (the pool's group_vars over the role
    defaults, as the Ansible emitter writes them) and what every switch of that fabric's startup.yaml
    applies."""
    cluster, plan = built(blueprint)
    host_classes = [c for pool in cluster.pools for c in _roce_classes(cluster, plan, pool)]
    assert host_classes, "no pool got a roce_qos class"
    files = sw_emit.render(cluster, plan)
    for fabric in sorted({c["fabric"] for c in host_classes}):
        startups = sorted(f for f in files if f.startswith(f"{fabric}/") and f.endswith("/startup.yaml"))
        assert len(startups) == len(plan.switches(fabric)) > 0
        for rel in startups:
            s = _startup(files, rel)
            for hv in (c for c in host_classes if c["fabric"] == fabric):
                _class_agrees(s, hv)


def _class_agrees(s: dict[str, Any], hv: dict[str, Any]) -> None:
    qos = s["qos"]
    prio, dscp = int(hv["pfc_priority"]), int(hv["dscp"])
    assert qos["mapping"]["default-global"]["dscp"] == {dscp: {"switch-priority": prio}}
    assert qos["mapping"]["default-global"]["trust"] == {"dscp": "l3", "pcp": "l2"}[hv["trust"]]
    assert qos["roce"]["mode"] == ("lossless" if hv["pfc"] else "lossy")
    if hv["pfc"]:
        assert set(qos["pfc"]["default-global"]["switch-priority"]) == {prio}
    ecn_classes = qos.get("congestion-control", {}).get("default-global", {}).get("traffic-class", {})
    assert (3 in ecn_classes) == bool(hv["ecn"])  # RoCE's traffic class
    if hv["pfc"]:
        assert set(qos["traffic-pool"]["roce-lossless"]["switch-priority"]) == {prio}
    if prio != 3:
        assert qos["egress-queue-mapping"]["default-global"]["switch-priority"][prio] == {"traffic-class": 3}
    for ifc in s["interface"].values():
        if ifc.get("type") == "swp":
            assert ifc["link"]["mtu"] >= int(hv["mtu"])  # every host frame fits every switch port


SM_HOSTS = """\
apiVersion: cluster-blueprint/v1
name: sm-placeholder
site: {name: lab, rows: 2, racks_per_row: 8, rack: {units: 48, power_kw: 40}}
pools:
  - {name: gpu, role: gpu, count: 4, server: dgx-a100, placement: {nodes_per_rack: 4}}
  - name: sm
    role: management
    count: 2
    spec:
      gpu: null
      gpus: 0
      gpu_interconnect: none
      nics:
        - {purpose: management, model: x710, count: 1, ports: 1, speed_gbps: 1}
        - {purpose: compute, model: cx6, count: 1, ports: 1, speed_gbps: 200}
      power_kw: 0.8
      rack_units: 1
fabrics:
  compute:
    technology: infiniband-hdr
    topology: {kind: fat-tree, tiers: 2, switch: qm8700, rail_optimized: false}
    subnet_manager: {kind: opensm, ha: true, hosts: [sm001, sm002]}
"""


def test_the_sm_binding_names_only_published_devices(tmp_path: Path) -> None:
    """SM hosts of a `spec` pool with no `ports:` got `rdma_device: mlx5_0`, the plan's placeholder, which the
    opensm role binds OpenSM to (docs/ports.md: placeholders never reach host configuration). Declared, the
    host's own name is written."""

    def devices(text: str) -> list[str | None]:
        path = tmp_path / f"sm{len(list(tmp_path.iterdir()))}.yaml"  # built() caches by path
        path.write_text(text)
        cluster, plan = built(str(path))
        hosts = yaml.safe_load(sm_emit.render(cluster, plan)["inventory.yml"])["all"]["children"]
        return [
            f["rdma_device"] for h in hosts["subnet_manager"]["hosts"].values() for f in h["opensm_fabrics"]
        ]

    assert devices(SM_HOSTS) == [None, None]
    declared = "      rack_units: 1\n    ports:\n      - {role: compute, rdma: mlx5_4, netdev: ibp1s0}\n"
    assert devices(SM_HOSTS.replace("      rack_units: 1\n", declared)) == ["mlx5_4", "mlx5_4"]


def test_the_roce_class_keeps_the_fabric_mtu_on_hosts(tmp_path: Path) -> None:
    """A declared fabrics.compute.mtu is what the hosts end at: netplan sets it, then the roce_qos role's
    script (run after the network is up) sets the class's MTU; the role must get the same value, not its
    4200 default (a 9000-byte fabric was cut to 4200 on every host)."""
    from generator.emit.ansible.group_vars import pool_vars

    doc = yaml.safe_load(ROCE_PCIE.read_text())
    doc["fabrics"]["compute"]["mtu"] = 9000
    path = tmp_path / "roce-9000.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    cluster, plan = built(str(path))
    checked = 0
    for pool in cluster.pools:
        hv = _group_vars(pool_vars(cluster, plan, pool))
        mtu = {c["fabric"]: c["mtu"] for c in _roce_classes(cluster, plan, pool)}
        for nic in hv.get("host_fabric_interfaces") or []:
            if nic["purpose"] == "compute":
                assert nic["mtu"] == 9000 and mtu["compute"] == 9000, (pool.name, nic)
                checked += 1
    assert checked


def test_a_roce_storage_fabric_gets_its_class_on_the_hosts_storage_ports() -> None:
    """A RoCE storage fabric beside an InfiniBand compute fabric (a DGX SuperPOD's Ethernet storage): the
    switches carried its lossless class and the hosts' storage ports did not, so their RDMA left at DSCP 0
    (NET004 said to set it by hand). Every site host cabled to it now gets the class on its storage ports,
    with the Ethernet names of the DGX H100's storage ports (NVIDIA DGX H100/H200 User Guide, Table 6), and
    no compute class: its compute fabric is InfiniBand."""
    cluster, plan = built(str(ROCE_STORAGE))
    by_pool = {p.name: _roce_classes(cluster, plan, p) for p in cluster.pools}
    dgx_ports = dgx_h100_storage_ports()
    assert [c["fabric"] for c in by_pool["dgx"]] == ["storage"]
    (dgx,) = by_pool["dgx"]
    assert dgx["interfaces"] == [p.names["ethernet"] for p in dgx_ports]
    assert dgx["rdma_devices"] == [p.rdma for p in dgx_ports]
    fields = ("pfc_priority", "dscp", "trust", "pfc", "ecn")
    assert [dgx[k] for k in fields] == [4, 32, "dscp", True, True]
    # the head node's one storage port has no published name: the class is there, empty, and the role fails
    # asking for pools[].ports (as for compute ports)
    (head,) = by_pool["head"]
    assert head["fabric"] == "storage" and head["interfaces"] == [] and head["rdma_devices"] == []
    net004 = [f for f in check(ROCE_STORAGE).findings if f.rule == "NET004"]
    assert not net004, [f.message for f in net004]


@pytest.mark.parametrize("blueprint", [ROCE_FT, ROCE_DF, ROCE_PCIE], ids=lambda p: Path(p).stem)
def test_startup_yaml_is_the_document_it_describes(blueprint: Path) -> None:
    """The hand-rolled YAML writer loses nothing: safe_load(text) == the document."""
    from generator.emit.switches.nvue import startup_document
    from generator.emit.switches.qos import lossless_class

    cluster, plan = built(str(blueprint))
    files = sw_emit.render(cluster, plan)
    qos = lossless_class(cluster.fabrics["compute"].spec)
    assert qos is not None
    from generator.deploy.addresses import host_port_addresses

    for sw in sw_emit.underlay(plan, "compute", host_port_addresses(cluster, "compute")):
        text = files[f"compute/{sw.name}/startup.yaml"]
        assert yaml.safe_load(text) == startup_document(sw, qos, qos.switch_mtu)


def ansible_bin(name: str) -> str:
    local = (
        Path(sys.executable).parent / name
    )  # the venv's ansible (as tests/ansible_playbooks/ansible_helpers.py)
    return str(local) if local.exists() else (shutil.which(name) or name)


def test_opensm_and_switch_playbooks_parse_with_generated_inventories(tmp_path: Path) -> None:
    for bp, playbook, inv in (
        (EXAMPLES / "maas-onprem-h100.yaml", "opensm.yml", "subnet_manager"),
        (ROCE_FT, "switches.yml", "switches"),
    ):
        out = tmp_path / Path(bp).stem
        code, _, err = run_cli("generate", str(bp), "-o", str(out), "--quiet", "--only", f"ansible,{inv}")
        assert code == 0, err
        proc = subprocess.run(
            [
                ansible_bin("ansible-playbook"),
                "-i",
                "inventory.yml",
                "-i",
                f"../{inv}/inventory.yml",
                "--syntax-check",
                playbook,
            ],
            cwd=out / "ansible",
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        hosts = subprocess.run(
            [
                ansible_bin("ansible-playbook"),
                "-i",
                "inventory.yml",
                "-i",
                f"../{inv}/inventory.yml",
                "--list-hosts",
                playbook,
            ],
            cwd=out / "ansible",
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert hosts.returncode == 0 and "hosts (0)" not in hosts.stdout, hosts.stdout + hosts.stderr


@pytest.mark.parametrize(
    ("rule", "output"),
    [("NET004", "build/switches/"), ("NET005", "build/subnet_manager/"), ("NET006", "build/subnet_manager/")],
)
def test_lossless_and_sm_rules_point_to_the_generated_files(rule: str, output: str) -> None:
    fail = REPO / "tests" / "rules" / "fixtures" / rule / "fail.yaml"
    _code, out, err = run_cli("validate", str(fail), "--format", "json")
    import json

    findings = [f for file in json.loads(out)["files"] for f in file["findings"] if f["rule"] == rule]
    assert findings, out + err
    assert all(output in f["hint"] for f in findings)


def test_too_small_loopback_block_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    bp = tmp_path / "small-loopbacks.yaml"
    bp.write_text(
        ROCE_FT.read_text().replace(
            "    mtu: 4200\n", "    mtu: 4200\n    underlay: {loopback_cidr: 10.9.0.0/30}\n"
        )
    )
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "--quiet", "--only", "switches")
    assert code == 1  # refused by rule NET017, as validate refuses it (issue 29: one truth)
    assert "NET017 10.9.0.0/30 holds 2 loopbacks; this fabric needs 8 (one per switch)" in err
    assert not (tmp_path / "out").exists()


STORAGE_ONLY_GPUS = REPO / "tests" / "generate" / "data" / "gpu-pool-storage-only.yaml"


def test_a_gpu_pool_without_compute_ports_gets_no_fabric_nccl_settings_or_network_acceptance() -> None:
    """A GPU pool cabled to the RoCE storage fabric only took the InfiniBand compute fabric's transport
    (`ib`, NCCL_IB_SL, NCCL_CROSS_NIC, nvidia_peermem), so NCCL would have used the storage NICs outside
    their lossless class; and the acceptance role failed it for a zero threshold though there is no
    network collective to run. The DGX pool beside it keeps the InfiniBand settings."""
    from generator.emit.ansible.group_vars import pool_vars

    cluster, plan = built(str(STORAGE_ONLY_GPUS))
    by_pool = {p.name: _group_vars(pool_vars(cluster, plan, p)) for p in cluster.pools}
    viz, train = by_pool["viz"], by_pool["train"]
    assert viz["nccl_transport"] == "socket" and viz["cb_compute_transport"] not in ("ib", "roce")
    assert not [s["name"] for s in viz["nccl_settings"] if s["name"].startswith("NCCL_IB_")]
    assert viz["acceptance_run_nccl_tests"] is False and viz["roce_qos_classes"][0]["fabric"] == "storage"
    assert train["nccl_transport"] == "ib" and "acceptance_run_nccl_tests" not in train


TENANT_IPOIB = REPO / "tests" / "generate" / "data" / "tenant-ipoib.yaml"


def test_a_tenant_pools_ipoib_and_nccl_bootstrap_run_in_its_partition() -> None:
    """IPoIB on a tenant pool's ports ran in Default, where the pool is a limited member (its hosts cannot
    reach each other), and NCCL, left to pick an interface, prefers `ib` ones for its bootstrap. The
    addresses go on P_Key children of the pool's partition (full member: 0x8000 | 0x10), NCCL bootstraps
    over them, the MAAS program leaves them to the host role; a partition without IPoIB gets no address
    and a warning."""
    from generator.emit.ansible.group_vars import pool_vars
    from generator.deploy.addresses import onprem_plan
    from generator.emit.pulumi_targets import maas

    cluster, plan = built(str(TENANT_IPOIB))
    by_pool = {p.name: _group_vars(pool_vars(cluster, plan, p)) for p in cluster.pools}
    train = by_pool["train"]["host_fabric_interfaces"]
    assert [i["interface"] for i in train][:2] == ["ibp24s0.8010", "ibp64s0.8010"] and len(train) == 8
    assert all(i["pkey"] == "0x8010" and i["interface"] == f"{i['parent']}.8010" for i in train)
    nccl = {s["name"]: s["value"] for s in by_pool["train"]["nccl_settings"]}
    assert nccl["NCCL_SOCKET_IFNAME"] == "=" + ",".join(i["interface"] for i in train)
    assert by_pool["infer"]["host_fabric_interfaces"] == []
    warned = [f.message for f in check(TENANT_IPOIB).findings if f.rule == "NET020"]
    assert len(warned) == 1 and "pool `infer` runs in partition `infer` (0x0020)" in warned[0]
    node = {"hostname": "train001", "su": None, "rack": None}
    maas._node_row(cluster, onprem_plan(cluster), "train", node)
    assert node["interfaces"] == []  # no child is an interface MAAS commissions


def test_an_ipoib_child_name_past_15_characters_is_not_cut_to_its_parents(tmp_path: Path) -> None:
    """Ports named `ibs-rail-port-0` (15 characters): the child `ibs-rail-port-0.8010` cut to 15 was the
    parent's own name, so the rail addresses went on the parent, in Default. No child then, and a warning."""
    from generator.emit.ansible.group_vars import pool_vars

    doc = yaml.safe_load((REPO / "tests" / "ansible_playbooks" / "data" / "ib-hgx-ports.yaml").read_text())
    for i, port in enumerate(doc["pools"][0]["ports"]):
        port["netdev"] = f"ibs-rail-port-{i}"
    doc["fabrics"]["compute"]["subnet_manager"]["partitions"] = [
        {"name": "train", "pkey": 0x10, "pools": ["gpu"], "membership": "full", "ipoib": True}
    ]
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    cluster, plan = built(str(path))
    gpu = next(p for p in cluster.pools if p.name == "gpu")
    assert [i["interface"] for i in _group_vars(pool_vars(cluster, plan, gpu))["host_fabric_interfaces"]] == []
    warned = [f.message for f in check(path).findings if f.rule == "NET020"]
    assert len(warned) == 1 and "ibs-rail-port-0.8010 and the like" in warned[0] and "8 port(s)" in warned[0]
