"""`compare` (generator/diff/compare.py: passes over every cable in map/zip/compress, Python per cable only
where the plans differ) gives what the plain loops its docstrings describe give, field for field, on real
plan pairs both ways and per fabric."""

from __future__ import annotations

from collections import defaultdict

import pytest
from diff_blueprints import plan_of, variant

from generator.diff import compare
from generator.plan.model import Link, Plan

CHANGED_FIELDS = ("speed_gbps", "medium", "length_m", "part_number")


def _ends(x: Link) -> tuple[tuple[str, str], tuple[str, str]]:
    return (x.a.device, x.a.port), (x.b.device, x.b.port)


def _plain_cables(old: list[Link], new: list[Link]) -> dict[str, tuple[object, ...]]:
    old_by = {x.id: x for x in old}
    new_ids = {x.id for x in new}
    moved, changed = [], []
    for x in new:
        before = old_by.get(x.id)
        if before is None or before == x:
            continue
        ends = tuple(e for e, was, now in zip("ab", _ends(before), _ends(x), strict=True) if was != now)
        fields = tuple(f for f in CHANGED_FIELDS if getattr(before, f) != getattr(x, f))
        if fields:  # a new cable, on the same ports or on others
            changed.append((before, x, fields, ends))
        elif ends:
            moved.append((before, x, ends))
    return {
        "cables_added": tuple(x for x in new if x.id not in old_by),
        "cables_removed": tuple(x for x in old if x.id not in new_ids),
        "cables_moved": tuple(moved),
        "cables_changed": tuple(changed),
    }


def _plain_speeds(old: list[Link], new: list[Link]) -> tuple[tuple[str, str, float, float], ...]:
    def speeds(links: list[Link]) -> dict[tuple[str, str], float]:
        out = {}
        for x in links:
            for end in _ends(x):
                out[end] = x.speed_gbps
        return out

    was, now = speeds(old), speeds(new)
    return tuple(
        (d, p, was[(d, p)], s) for (d, p), s in sorted(now.items()) if (d, p) in was and was[(d, p)] != s
    )


def _plain_down_and_conflicts(
    old: list[Link], names: set[str], cables: dict[str, tuple[object, ...]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    down = {x.id for x in cables["cables_removed"]}
    down |= {m[1].id for m in cables["cables_moved"]} | {c[1].id for c in cables["cables_changed"]}
    by_device: dict[str, list[str]] = defaultdict(list)
    for x in old:
        for ep in (x.a, x.b):
            by_device[ep.device].append(x.id)
    for name in names:
        down.update(by_device.get(name, ()))
    holder_of = {end: x.id for x in old for end in _ends(x)}
    conflicts = [
        f"new cable {x.id} needs {end[0]} port {end[1]}, still used by {holder_of[end]}"
        for x in cables["cables_added"]
        for end in _ends(x)
        if end in holder_of and holder_of[end] not in down
    ]
    return tuple(sorted(down)), tuple(conflicts)


def _plain_racks(old: Plan, new: Plan, d: object, cables: dict[str, tuple[object, ...]]) -> set[str]:
    def racks(plan: Plan, x: Link) -> set[str]:
        return {dev.rack for ep in (x.a, x.b) if (dev := plan.device_by_name.get(ep.device)) and dev.rack}

    out: set[str] = set()
    for x in cables["cables_added"]:
        out |= racks(new, x)
    for x in cables["cables_removed"]:
        out |= racks(old, x)
    for o, n, _ in cables["cables_moved"]:
        out |= racks(old, o) | racks(new, n)
    for o, n, _, ends in cables["cables_changed"]:
        out |= racks(new, n) | (racks(old, o) if ends else set())
    return out


PAIRS = {
    "grow a unit": (dict(dgx=64, growth=128), dict(dgx=96, growth=128)),
    "grow without headroom": (dict(dgx=64), dict(dgx=96)),
    "hdr to ndr": (dict(dgx=40, su=20, hdr=True), dict(dgx=40, su=20)),
    "management pool": (dict(mgmt=3), dict(mgmt=5)),
}


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reversed"])
@pytest.mark.parametrize("scope", [None, ["compute"], ["management"], ["compute", "storage"]], ids=str)
@pytest.mark.parametrize("pair", list(PAIRS))
def test_compare_equals_the_plain_loops(pair: str, scope: list[str] | None, reverse: bool) -> None:
    a_kw, b_kw = PAIRS[pair]
    old = plan_of(variant(f"loops-{pair}-a".replace(" ", "-"), **a_kw))
    new = plan_of(variant(f"loops-{pair}-b".replace(" ", "-"), **b_kw))
    if reverse:
        old, new = new, old
    d = compare(old, new, scope)
    old_links = [x for x in old.links if scope is None or x.fabric in scope]
    new_links = [x for x in new.links if scope is None or x.fabric in scope]
    cables = _plain_cables(old_links, new_links)
    assert d.cables_added == cables["cables_added"] and d.cables_removed == cables["cables_removed"]
    assert [(m.old, m.new, m.ends) for m in d.cables_moved] == list(cables["cables_moved"])
    assert [(c.old, c.new, c.fields, c.ends) for c in d.cables_changed] == list(cables["cables_changed"])
    assert [(p.device, p.port, p.old_gbps, p.new_gbps) for p in d.port_speeds] == list(
        _plain_speeds(old_links, new_links)
    )
    names = {x.name for x in d.devices_removed} | {r.name for r in d.devices_replaced}
    names |= {r.name for r in d.devices_relocated}
    down, conflicts = _plain_down_and_conflicts(old_links, names, cables)
    assert d.links_down == down and d.conflicts == conflicts
    assert _plain_racks(old, new, d, cables) <= set(d.racks_affected)
    assert pair != "grow a unit" or scope is not None or d.cables_added or d.cables_removed  # they differ


def test_a_plan_against_itself_is_identical() -> None:
    p = plan_of(variant("loops-same", dgx=64, growth=128))
    assert compare(p, p).identical
