"""Labels, NetBox interfaces and expected LLDP of a DGX H100 use the vendor's names (not mlx5_<i>/eth<k>).

Compared with NVIDIA DGX H100/H200 User Guide Table 6, kept as test data (tests/data/vendor_tables/).
"""

from __future__ import annotations

import json
from functools import cache

import netbox_checks
from conftest import EXAMPLES
from vendor_tables import dgx_h100_compute_ports

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
