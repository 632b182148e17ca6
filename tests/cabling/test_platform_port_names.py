"""Labels, NetBox interfaces and expected LLDP of a DGX H100 use the vendor's names (not mlx5_<i>/eth<k>).

Compared with NVIDIA DGX H100/H200 User Guide Table 6 (compute) and Table 5 (storage / in-band cards), kept as
test data (tests/data/vendor_tables/).
"""

from __future__ import annotations

import json
from functools import cache

import netbox_checks
from pathlib import Path

from conftest import EXAMPLES, run_cli
from vendor_tables import DgxMappedPort, dgx_h100_compute_ports, dgx_h100_storage_ports

from generator.deploy.addresses import onprem_plan
from generator.emit import lldp
from generator.emit.cabling import render_format
from generator.emit.cabling.rows import cable_rows
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan


@cache
def _plan() -> Plan:
    return build_plan(load_and_resolve(EXAMPLES / "superpod-h100-4su.yaml")[1])


def _node_ends(plan: Plan, fabric: str, host: str):  # type: ignore[no-untyped-def]
    return [e for link in plan.links_of(fabric) for e in (link.a, link.b) if e.device == host]


def test_compute_labels_carry_the_faceplate_names() -> None:
    plan = _plan()
    ends = _node_ends(plan, "compute", "dgx001")
    table = dgx_h100_compute_ports()
    assert sorted(e.label_port for e in ends) == sorted(r.port for r in table)
    # the faceplate, RDMA device and interface of each end are one row of Table 6
    assert {(e.label_port, e.port, e.netdev) for e in ends} == {
        (r.port, f"{r.rdma}/1", r.netdev) for r in table
    }
    labels = [r for r in cable_rows(plan.cluster, plan) if r.fabric == "compute" and r.a.device == "dgx001"]
    assert {r.a.label.rsplit("-", 1)[1] for r in labels} == {r.port for r in table}


def test_netbox_interfaces_are_the_os_names() -> None:
    plan = _plan()
    t = netbox_checks.read(render_format(plan.cluster, plan, "netbox"))
    names = {
        (r["side_a_name"] if r["side_a_device"] == "dgx001" else r["side_b_name"])
        for r in t["cables.csv"]
        if "dgx001" in (r["side_a_device"], r["side_b_device"])
    }
    table = dgx_h100_compute_ports()
    assert {r.netdev for r in table} <= names
    assert "BMC" in names  # the out-of-band port (DGX BasePOD deployment guide): never an mlx5 device
    assert not any(n.startswith(("eth", "ib0", "mlx5_")) for n in names), names


def _faceplate(row: DgxMappedPort) -> str:
    """The catalogue's faceplate label for a Table 5 row (``Slot1 P2`` -> ``slot1-port2``)."""
    slot, port = row.port.split()
    return f"{slot.lower()}-port{port[1:]}"


def _storage_expected(link: str) -> set[tuple[str, str, str]]:
    """(faceplate, RDMA port, interface) of the storage cards' ports on a ``link`` fabric, from Table 5."""
    return {(_faceplate(r), f"{r.rdma}/1", r.names[link]) for r in dgx_h100_storage_ports()}


def test_storage_ports_carry_table_5_names() -> None:
    plan = _plan()
    assert plan.cluster.fabrics["storage"].kind == "infiniband"  # so every card port has its IPoIB name
    ends = _node_ends(plan, "storage", "dgx001")
    assert {(e.label_port, e.port, e.netdev) for e in ends} == _storage_expected("infiniband")
    labels = [r for r in cable_rows(plan.cluster, plan) if r.fabric == "storage" and r.a.device == "dgx001"]
    faceplates = [_faceplate(r) for r in dgx_h100_storage_ports()]
    assert sorted(next(f for f in faceplates if r.a.label.endswith("-" + f)) for r in labels) == sorted(
        faceplates
    )


def test_storage_netbox_interfaces_and_fabric_addresses_use_table_5_names() -> None:
    plan = _plan()
    expected = {r.names["infiniband"] for r in dgx_h100_storage_ports()}
    t = netbox_checks.read(render_format(plan.cluster, plan, "netbox"))
    names = {
        (r["side_a_name"] if r["side_a_device"] == "dgx001" else r["side_b_name"])
        for r in t["cables.csv"]
        if "dgx001" in (r["side_a_device"], r["side_b_device"])
    }
    assert expected <= names
    addressed = {a.interface for a in onprem_plan(plan.cluster).fabric["dgx001"] if a.purpose == "storage"}
    assert addressed == expected


def test_catalogue_storage_rows_match_table_5() -> None:
    dgx = _plan().cluster.pools[0]
    assert dgx.server_id == "dgx-h100"
    storage = dgx.ports_for("storage")
    table = dgx_h100_storage_ports()
    assert [p.faceplate for p in storage] == [_faceplate(r) for r in table]
    assert [p.rdma_dev for p in storage] == [r.rdma for r in table]
    assert all(p.rdma_known and p.netdev_known for p in storage)


def test_management_lldp_names_the_bmc() -> None:
    plan = _plan()
    files = lldp.render_lldp(plan, "management")
    seen = []
    for text in files.values():
        for item in json.loads(text)["lldp"]["interface"]:
            body = next(iter(item.values()))
            if "dgx001" in body["chassis"]:
                seen.append(body["port"]["id"]["value"])
    assert seen == ["BMC"]


DUAL_PORT = Path(__file__).parent / "data" / "dual-port-device-two-roles.yaml"


def test_one_device_named_under_two_roles_gets_one_port_each() -> None:
    """mlx5_1 declared as a compute rail and as the storage port: each NIC entry counted its own ports, so
    both ends were `mlx5_1/1`, one label for two cables (generate exit 3). The device's ports count up
    across the node: compute mlx5_1/1, storage mlx5_1/2."""
    _, cluster = load_and_resolve(DUAL_PORT)
    plan = build_plan(cluster)
    ends = {(f, e.port) for f in ("compute", "storage") for e in _node_ends(plan, f, "l40s001")}
    assert ("compute", "mlx5_1/1") in ends and ("storage", "mlx5_1/2") in ends, ends
    rows = cable_rows(cluster, plan)
    node_ends = [(e.device, e.port) for r in rows for e in (r.a, r.b) if e.kind == "node"]
    assert len(node_ends) == len(set(node_ends))


def test_one_interface_declared_twice_is_refused_where_it_is(tmp_path: Path) -> None:
    """The same netdev as a compute rail and as the storage port validated, then addressed it twice (the
    compute address lost) and put it in two RoCE QoS classes: refused at the pool's ports."""
    text = DUAL_PORT.read_text().replace("netdev: ens2f1np1}", "netdev: ens2f0np0}")
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    code, out, err = run_cli("validate", str(path))
    assert code == 2 and "pools[0].ports" in out + err and "already ports[1]'s (compute)" in out + err


DECLARED_DGX = Path(__file__).parent / "data" / "dgx-h100-declared-ports.yaml"


def test_declared_dgx_ports_keep_the_vendors_cages() -> None:
    """Declaring a DGX H100's compute ports (to label them HCA-1..8) put them in cages by counting: mlx5_0 in
    cage 1 port 1 where NVIDIA's table has it at OSFP4 port 2, so the cage columns crossed rails. A declared
    port that is a row of the catalogue's map (the same RDMA device) takes that row's cage."""
    catalogue = {(e.port, e.cage, e.cage_port) for e in _node_ends(_plan(), "compute", "dgx001")}
    _, cluster = load_and_resolve(DECLARED_DGX)
    declared = {(e.port, e.cage, e.cage_port) for e in _node_ends(build_plan(cluster), "compute", "gpu001")}
    assert declared == catalogue and ("mlx5_0/1", 4, 2) in declared
