"""The on-prem address plan: one plan for the MAAS program and the inventory, from a /24 lab to a /16 campus.

Expectations are independent of the code: hand-computed addresses for the documented scheme
(docs/pulumi.md "Address plan"), and what the MAAS program registers under Pulumi's mocks.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from ruamel.yaml import YAML

pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")

from pulumi_cases import generate, run_target

LAB = """\
apiVersion: cluster-blueprint/v1
name: lab4
site: {{rows: 40, racks_per_row: 30}}
pools:
  - {{name: gpu, role: gpu, count: {count}, server: hgx-h200, placement: {{nodes_per_rack: 3}},
     ports: [{{role: compute, rdma: mlx5_0, netdev: ib0, gpu: 0}}, {{role: compute, rdma: mlx5_1, netdev: ib1, gpu: 1}}, {{role: compute, rdma: mlx5_2, netdev: ib2, gpu: 2}}, {{role: compute, rdma: mlx5_3, netdev: ib3, gpu: 3}}, {{role: compute, rdma: mlx5_4, netdev: ib4, gpu: 4}}, {{role: compute, rdma: mlx5_5, netdev: ib5, gpu: 5}}, {{role: compute, rdma: mlx5_6, netdev: ib6, gpu: 6}}, {{role: compute, rdma: mlx5_7, netdev: ib7, gpu: 7}}]}}
  - {{name: login, role: login, count: 1, server: cpu-1u}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {{kind: fat-tree, tiers: 2, switch: qm9790, rail_optimized: true}}
    subnet_manager: {{kind: opensm, ha: true}}
software: {{os: ubuntu-22.04, driver_branch: "570", cuda: "12.8", nccl: "2.26.2", ofed: {{kind: inbox, version: "44.0"}}}}
deployment:
  target: maas
  maas: {{management_cidr: {cidr}}}
"""


def _write(tmp: Path, cidr: str, count: int = 4) -> Path:
    path = tmp / "lab.yaml"
    path.write_text(LAB.format(cidr=cidr, count=count))
    return path


def _inventory_hosts(build: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    inv = YAML(typ="safe", pure=True).load((build / "ansible" / "inventory.yml").read_text())
    out: dict[str, dict] = {}  # type: ignore[type-arg]
    for group in inv["all"]["children"].values():
        for host, hv in (group.get("hosts") or {}).items():
            if hv:
                out[host] = hv
    return out


def test_a_four_node_lab_on_a_24_generates(tmp_path: Path) -> None:
    bp = _write(tmp_path, "10.10.0.0/24")
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"))
    assert code == 0, out + err
    hosts = _inventory_hosts(tmp_path / "build")
    # /24: 16 addresses (.0-.15) for infrastructure; 256-alignment does not fit, 16-alignment does:
    # pool gpu = block .16 (16 addresses), hosts .17-.20; pool login = block .32, host .33.
    assert {h: v["ansible_host"] for h, v in hosts.items()} == {
        "gpu001": "10.10.0.17",
        "gpu002": "10.10.0.18",
        "gpu003": "10.10.0.19",
        "gpu004": "10.10.0.20",
        "login001": "10.10.0.33",
    }
    # IPoIB per rail from compute_cidr (default 10.100.0.0/16 in 8 rail subnets /19, first host .10)
    assert hosts["gpu001"]["cb_fabric_addresses"]["ib0"] == "10.100.0.10/19"
    assert hosts["gpu004"]["cb_fabric_addresses"]["ib7"] == "10.100.224.13/19"


def test_validate_reports_what_generate_would_refuse_located(tmp_path: Path) -> None:
    bp = _write(tmp_path, "10.10.0.0/28", count=8)
    code, out, err = run_cli("validate", str(bp), "--format", "json")
    assert code == 1, out + err
    findings = [f for f in json.loads(out)["files"][0]["findings"] if f["rule"] == "DEP010"]
    assert findings, out
    f = findings[0]
    assert f["path"] == "deployment.maas.management_cidr" and f["line"] == 16
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"))
    assert code == 1 and not (tmp_path / "build").exists()


def test_pools_never_overlap_at_the_block_boundary(tmp_path: Path) -> None:
    # 256 GPU nodes: the old scheme gave gpu256 the address of login001. Here the gpu block is 512 wide.
    bp = _write(tmp_path, "10.20.0.0/16", count=256)
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"), "--only", "ansible")
    assert code == 0, out + err
    addrs = {h: v["ansible_host"] for h, v in _inventory_hosts(tmp_path / "build").items()}
    assert addrs["gpu001"] == "10.20.1.1" and addrs["gpu256"] == "10.20.2.0"
    assert addrs["login001"] == "10.20.3.1"
    assert len(set(addrs.values())) == len(addrs) == 257


def test_a_campus_16_keeps_256_blocks(tmp_path: Path) -> None:
    bp = _write(tmp_path, "10.30.0.0/16", count=2000)
    _, out, _ = run_cli("validate", str(bp), "--format", "json")
    assert "DEP010" not in out, out
    from generator.deploy.addresses import onprem_plan
    from generator.load import load_file
    from generator.resolve import resolve

    plan = onprem_plan(resolve(load_file(bp)))
    assert plan.infrastructure == 256 and plan.alignment == 256
    # 2000 hosts + 1 -> 8 blocks of 256 from 10.30.1.0; login starts at 10.30.9.0
    assert plan.management["gpu2000"] == str(ipaddress.ip_address("10.30.1.0") + 2000)
    assert plan.management["login001"] == "10.30.9.1"


MAAS_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.yaml") if "target: maas" in p.read_text())


@pytest.mark.parametrize("path", MAAS_EXAMPLES, ids=lambda p: p.stem)
def test_inventory_addresses_are_the_ones_maas_assigns(path: Path, tmp_path: Path) -> None:
    code, out, err = run_cli("generate", str(path), "-o", str(tmp_path / "build"), "--only", "ansible,pulumi")
    assert code == 0, out + err
    project = tmp_path / "build" / "pulumi"
    cluster = generate(path, project)  # same files; gives the resolved cluster for the runner
    run = run_target(cluster, project)
    data = json.loads((project / "cluster.json").read_text())
    # the port map's in-band interface where published, else the stack setting the test gives
    iface = {
        n["hostname"]: p["management_interface"] or "mgmt-test0" for p in data["pools"] for n in p["nodes"]
    }
    assigned = {}
    for machine in run.of_type("maas:index/instance:Instance"):
        (link,) = machine.inputs["networkInterfaces"]
        assert link["name"] == iface[machine.name]
        assert link["subnetCidr"] == cluster.blueprint.deployment.maas.management_cidr
        assigned[machine.name] = link["ipAddress"]
    hosts = _inventory_hosts(tmp_path / "build")
    assert assigned == {h: v["ansible_host"] for h, v in hosts.items()}
    assert {h: v["address"] for h, v in run.outputs["nodes"].items()} == assigned
    # Fabric addresses: the inventory's per-interface addresses are the ones the program reserves
    for host, node in run.outputs["nodes"].items():
        assert node["fabric_addresses"] == hosts[host].get("cb_fabric_addresses", {})
    # every configured fabric address lies in the range the program reserves for its subnet
    ranges = [
        (ipaddress.ip_address(r.inputs["startIp"]), ipaddress.ip_address(r.inputs["endIp"]))
        for r in run.of_type("maas:index/subnetIpRange:SubnetIpRange")
    ]
    for node in run.outputs["nodes"].values():
        for address in node["fabric_addresses"].values():
            ip = ipaddress.ip_interface(address).ip
            assert any(lo <= ip <= hi for lo, hi in ranges), address


@pytest.mark.parametrize(
    "example", ["maas-onprem-h100", "superpod-h100-4su", "hdr-fat-tree-a100", "ndr-3tier-4096gpu"]
)
def test_the_pxe_interface_is_no_fabric_port(example: str, tmp_path: Path) -> None:
    """MAAS deploys over a pool's `management_interface`: never a port a compute or storage fabric takes.
    With an InfiniBand storage fabric a DGX H100's in-band ports are IPoIB storage ports (MAAS cannot deploy
    over InfiniBand; the storage address and the management address would share one netdev), so the pool
    falls back to the stack's `managementInterface`."""
    out = tmp_path / "build"
    code, stdout, err = run_cli(
        "generate", str(EXAMPLES / f"{example}.yaml"), "-o", str(out), "--only", "pulumi"
    )
    assert code == 0, stdout + err
    data = json.loads((out / "pulumi" / "cluster.json").read_text())
    for pool in data["pools"]:
        fabric = {i["netdev"] for n in pool["nodes"] for i in n["interfaces"]}
        assert pool["management_interface"] is None or pool["management_interface"] not in fabric, pool[
            "name"
        ]
    if (
        example == "ndr-3tier-4096gpu"
    ):  # no storage fabric takes the DGX's in-band port: it stays the PXE port
        (dgx,) = [p for p in data["pools"] if p["server"] == "dgx-h100"]
        assert dgx["management_interface"] == "enp170s0f1np1"


def test_a_plan_the_default_compute_block_cannot_hold_gets_a_larger_one(tmp_path: Path) -> None:
    """8,200 nodes of 8 rails: the default 10.100.0.0/16 holds 8,181 a rail, so the plan could not be
    addressed (`advise --gpus 65536 --write` gave no starter); the default grows to the smallest aligned block
    around it that holds every rail. A compute_cidr the blueprint sets is kept, and refused when too small."""
    from generator.deploy.addresses import onprem_plan
    from generator.pipeline import load_and_resolve

    bp = tmp_path / "lab.yaml"
    bp.write_text(LAB.format(cidr="10.0.0.0/12", count=8200))
    _, cluster = load_and_resolve(bp)
    plan = onprem_plan(cluster)
    assert plan.problems == []
    rails = [ipaddress.IPv4Network(s.cidr) for s in plan.subnets if s.fabric == "compute"]
    # 8,200 + 11 (the infrastructure range and broadcast) > 8,192: a /18 a rail, eight in 10.100.0.0/15
    assert len(rails) == 8 and all(r.prefixlen == 18 for r in rails)
    assert all(r.subnet_of(ipaddress.IPv4Network("10.100.0.0/15")) for r in rails)
    set_by_user = tmp_path / "set.yaml"
    set_by_user.write_text(
        bp.read_text().replace(
            "{management_cidr: 10.0.0.0/12}", "{management_cidr: 10.0.0.0/12, compute_cidr: 10.100.0.0/16}"
        )
    )
    _, cluster = load_and_resolve(set_by_user)
    assert any("holds 8181 node addresses, 8200 needed" in m for _, m in onprem_plan(cluster).problems)
