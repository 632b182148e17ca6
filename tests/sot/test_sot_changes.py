"""The change set rules: what is adopted, what is updated, what a status does, how values compare."""

from __future__ import annotations

from generator.sot.build import Record
from generator.sot.changes import Found, Pending, describe, diff_kind, same


def rec(kind: str, name: str, **fields: object) -> tuple[Record, dict]:
    return Record(kind, (name,), dict(fields)), {"name": name, **fields}


def test_values_compare_as_the_api_means_them() -> None:
    assert same(None, "") and same("", None)
    assert same(48.0, 48) and same("1.0", 1) and not same("1.5", 1)
    assert same({"a": [1, 2.0]}, {"a": [1, 2]}) and not same([1], [1, 2])
    assert not same(True, 1) and same(False, False)  # a flag is not a number
    assert not same("R01-01", "R01-02")
    assert not same(Pending("rack", ("r1",)), 7)  # a rack still to create differs from any id


def test_adopted_kinds_are_never_updated() -> None:
    record, payload = rec("role", "gpu-node", color="9c27b0")
    changes = diff_kind("role", [(record, payload)], {("gpu-node",): Found(3, {"name": "gpu-node", "color": "000000"})})
    assert changes.updates == [] and changes.unchanged == 1 and changes.creates == []


def test_plan_kinds_update_only_what_differs_and_never_the_status() -> None:
    record, payload = rec("device", "gpu001", position=9, status="planned", rack=4)
    found = Found(11, {"name": "gpu001", "position": 9.0, "status": "active", "rack": 3})
    changes = diff_kind("device", [(record, payload)], {("gpu001",): found})
    assert [(u.id, u.changed) for u in changes.updates] == [(11, {"rack": (3, 4)})]
    assert changes.updates[0].payload() == {"id": 11, "rack": 4}


def test_missing_objects_are_created_and_described() -> None:
    planned = [rec("rack", f"r{i}", u_height=48) for i in range(30)]
    changes = diff_kind("rack", planned, {("r0",): Found(1, {"name": "r0", "u_height": 48})})
    assert len(changes.creates) == 29 and changes.unchanged == 1
    text = describe([changes], limit=5)
    assert text[0] == "rack: 29 to create, 0 to update, 1 unchanged"
    assert "  + r1" in text and "  + ... 24 more" in text
