"""Plan-vs-discovered comparison, from both ends of every cable."""

from __future__ import annotations

import operator

from generator.verify.diff import compare
from generator.verify.model import End, ExpectedCable, FoundLink


def sw(name: str, port: int) -> End:
    return End(name, str(port), "switch")


def host(name: str, dev: str = "mlx5_0", port: int = 1) -> End:
    return End(name, f"{dev}/{port}", "node")


LEAF, SPINE = "c-leaf-su1-r3", "c-spine-001"
PLAN = [
    ExpectedCable("C-NL-000001", host("dgx041", "mlx5_3"), sw(LEAF, 17), "4xNDR"),
    ExpectedCable("C-NL-000002", host("dgx042", "mlx5_3"), sw(LEAF, 18), "4xNDR"),
    ExpectedCable("C-LS-000001", sw(LEAF, 33), sw(SPINE, 1), "4xNDR"),
    ExpectedCable("C-LS-000002", sw(LEAF, 34), sw(SPINE, 2), "4xNDR"),
    ExpectedCable("C-LS-000003", sw(LEAF, 35), sw(SPINE, 3), "4xNDR"),
    ExpectedCable("C-NL-000003", host("dgx043", "mlx5_3"), sw(LEAF, 19), "4xNDR"),
    ExpectedCable("C-NL-000004", host("dgx044", "mlx5_3"), sw(LEAF, 20), "4xNDR"),
    ExpectedCable("C-NL-000005", host("dgx045", "mlx5_3"), sw(LEAF, 21), "4xNDR"),
]


def test_everything_present_is_clean_and_rates_are_case_insensitive() -> None:
    found = [FoundLink(c.b, c.a, "4XNDR" if i % 2 else c.rate) for i, c in enumerate(PLAN)]
    v = compare(PLAN, found)
    assert v.clean and v.counts["ok"] == len(PLAN) and v.discrepancies == []


def test_each_fault_reported_with_both_ends() -> None:
    unknown = End(
        'unidentified switch 0x0000000000000099 "Quantum Mellanox Technologies"', "1", "switch", known=False
    )
    found = [
        FoundLink(sw(LEAF, 17), host("dgx042", "mlx5_3"), "4xNDR"),  # the two host cables swapped
        FoundLink(host("dgx041", "mlx5_3"), sw(LEAF, 18), "4xNDR"),
        FoundLink(sw(LEAF, 33), sw(SPINE, 2), "4xNDR"),  # parallel uplinks crossed (same GUID pair)
        FoundLink(sw(SPINE, 1), sw(LEAF, 34), "4xNDR"),
        # C-LS-000003 missing
        FoundLink(host("dgx043", "mlx5_3"), sw(LEAF, 19), "4xHDR"),  # came up at HDR
        FoundLink(host("dgx044", "mlx5_3"), sw(LEAF, 40), "4xNDR"),  # moved to a free port
        FoundLink(host("dgx045", "mlx5_3"), sw(LEAF, 21), None),  # dump without width/speed
        FoundLink(sw(SPINE, 10), unknown, "4xNDR"),  # cabled but not planned
    ]
    v = compare(PLAN, found, fabric="compute", source="x")
    assert not v.clean
    assert v.counts == {"miswired": 5, "missing": 1, "rate": 1, "unexpected": 1, "ok": 1}
    assert v.rate_unchecked == 1
    msg = {r.cable: r.message for r in v.results}
    assert msg["C-NL-000001"] == (
        "dgx041 mlx5_3/1 goes to c-leaf-su1-r3 port 18, plan says c-leaf-su1-r3 port 17; "
        "c-leaf-su1-r3 port 17 goes to dgx042 mlx5_3/1, plan says dgx041 mlx5_3/1"
    )
    assert msg["C-LS-000001"] == (
        "c-leaf-su1-r3 port 33 goes to c-spine-001 port 2, plan says c-spine-001 port 1; "
        "c-spine-001 port 1 goes to c-leaf-su1-r3 port 34, plan says c-leaf-su1-r3 port 33"
    )
    assert msg["C-LS-000003"] == "c-leaf-su1-r3 port 35 — c-spine-001 port 3: no link at either end"
    assert msg["C-NL-000003"] == "dgx043 mlx5_3/1 — c-leaf-su1-r3 port 19 came up 4xHDR, plan says 4xNDR"
    assert msg["C-NL-000004"] == (
        "dgx044 mlx5_3/1 goes to c-leaf-su1-r3 port 40, plan says c-leaf-su1-r3 port 20; "
        "c-leaf-su1-r3 port 20 is not connected, plan says dgx044 mlx5_3/1"
    )
    unexpected = [r for r in v.results if r.status == "unexpected"]
    assert [(r.a, r.b) for r in unexpected] == [(sw(SPINE, 10), unknown)]
    assert unexpected[0].message.startswith("c-spine-001 port 10 — unidentified switch 0x0000000000000099")
    by_cable = {r.cable: r for r in v.results}
    assert by_cable["C-NL-000001"].found_a == sw(LEAF, 18) and by_cable["C-NL-000001"].found_b == host(
        "dgx042", "mlx5_3"
    )
    assert by_cable["C-LS-000003"].found_a is None and by_cable["C-LS-000003"].found_b is None
    # discrepancies first, in a stable order
    assert [r.status for r in v.results] == ["miswired"] * 5 + ["missing", "rate", "unexpected", "ok"]


def test_both_ends_reporting_one_link_counts_once() -> None:
    plan = PLAN[2:3]
    found = [FoundLink(sw(LEAF, 33), sw(SPINE, 1)), FoundLink(sw(SPINE, 1), sw(LEAF, 33))]
    v = compare(plan, found)
    assert v.clean and v.discovered == 1


def test_link_between_unplanned_ports_is_unexpected_not_miswired() -> None:
    v = compare(
        PLAN[:1],
        [
            FoundLink(host("dgx041", "mlx5_3"), sw(LEAF, 17), "4xNDR"),
            FoundLink(sw(LEAF, 60), sw(LEAF, 61), "4xNDR"),
        ],
    )
    assert v.counts == {"miswired": 0, "missing": 0, "rate": 0, "unexpected": 1, "ok": 1}


def test_unnamed_speed_gets_a_hint() -> None:
    plan = [ExpectedCable("C-NL-000001", host("n1"), sw(LEAF, 1), "4xXDR")]
    v = compare(plan, [FoundLink(host("n1"), sw(LEAF, 1), "4x???")])
    assert v.counts["rate"] == 1
    assert v.results[0].message.endswith(
        "came up 4x???, plan says 4xXDR (this infiniband-diags cannot name the "
        "speed: XDR needs a newer rdma-core)"
    )


def test_an_end_is_its_device_and_port() -> None:
    """Ends compare, hash and sort by (device, port) alone: the plan's end and the discovered one are the
    same port however each is labelled."""
    planned = End(LEAF, "17", "switch", True, "P09/1")
    seen = End(LEAF, "17")
    assert planned == seen and operator.ne(planned, seen) is False and hash(planned) == hash(seen)
    assert End(LEAF, "18", "switch") != seen and len({planned, seen, End(LEAF, "18")}) == 2
    ends = [End("b", "1"), End("a", "2", "node"), End("a", "10", known=False), End("a", "1", sheet="P01/1")]
    assert [(e.device, e.port) for e in sorted(ends)] == [("a", "1"), ("a", "10"), ("a", "2"), ("b", "1")]
    assert End("a", "1") < End("a", "2") <= End("a", "2", "node") and End("b", "1") > End("a", "9") >= End(
        "a", "9"
    )


def test_findings_are_listed_by_status_then_cable_then_ends() -> None:
    unknown = End("unidentified switch 0x99", "4", "switch", known=False)
    found = [
        FoundLink(sw(LEAF, 40), host("dgx044", "mlx5_3"), "4xNDR"),  # C-NL-000004 moved: miswired
        FoundLink(sw(SPINE, 10), unknown, "4xNDR"),  # unexpected, no cable id
        FoundLink(sw(SPINE, 11), sw(LEAF, 60), "4xNDR"),  # unexpected
        FoundLink(host("dgx041", "mlx5_3"), sw(LEAF, 17), "4xHDR"),  # rate
        *[FoundLink(c.a, c.b, c.rate) for c in PLAN if c.id in ("C-NL-000002", "C-LS-000003", "C-NL-000005")],
    ]
    v = compare(PLAN, found)
    listed = [(r.status, r.cable, r.a.device, r.a.port) for r in v.results]
    assert listed == [
        ("miswired", "C-NL-000004", "dgx044", "mlx5_3/1"),
        ("missing", "C-LS-000001", LEAF, "33"),
        ("missing", "C-LS-000002", LEAF, "34"),
        ("missing", "C-NL-000003", "dgx043", "mlx5_3/1"),
        ("rate", "C-NL-000001", "dgx041", "mlx5_3/1"),
        ("unexpected", None, LEAF, "60"),  # an unexpected link's ends: known first, then by name
        ("unexpected", None, SPINE, "10"),
        ("ok", "C-LS-000003", LEAF, "35"),
        ("ok", "C-NL-000002", "dgx042", "mlx5_3/1"),
        ("ok", "C-NL-000005", "dgx045", "mlx5_3/1"),
    ]


def test_an_infiniband_port_reported_with_two_peers_is_not_ok() -> None:
    """A dump holding a planned cable and, for one of its ports, another peer (two dumps joined, a cable moved
    during the sweep): the cable counted as ok and the other link as unexpected. An InfiniBand port has one
    peer, so the cable is not verified; LLDP, which may hear two agents on one port, keeps the old reading."""
    found = [FoundLink(c.a, c.b, c.rate, "f:1") for c in PLAN]
    found.append(FoundLink(sw(LEAF, 17), host("dgx099", "mlx5_3"), "4xNDR", "f:90"))
    ib = compare(PLAN, found, single_peer=True)
    assert ib.counts == {"miswired": 1, "missing": 0, "rate": 0, "unexpected": 0, "ok": len(PLAN) - 1}
    bad = ib.discrepancies[0]
    assert bad.cable == "C-NL-000001" and bad.where == ("f:1", "f:90")
    assert bad.message == (
        "dgx041 mlx5_3/1 — c-leaf-su1-r3 port 17 found, but c-leaf-su1-r3 port 17 is also reported connected "
        "to dgx099 mlx5_3/1: the discovery contradicts itself at this port (re-run it on a settled fabric)"
    )
    assert bad.found_a == sw(LEAF, 17) and bad.found_b == host("dgx099", "mlx5_3")
    lldp = compare(PLAN, found)
    assert lldp.counts["ok"] == len(PLAN) and lldp.counts["unexpected"] == 1
    # a port claimed many times is named five times and counted
    many = found + [FoundLink(sw(LEAF, 17), host(f"x{i:03}", "mlx5_0"), None, "f:2") for i in range(40)]
    text = compare(PLAN, many, single_peer=True).discrepancies[0].message
    assert "and 36 more" in text and text.count("mlx5_0/1") == 4
