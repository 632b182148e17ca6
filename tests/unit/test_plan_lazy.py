"""What `validate` does not pay for (issue 32): the bill of materials and the on-prem host addresses.

No rule reads ``Plan.bom`` or ``Plan.transceivers``, so the plan counts them on first read; DEP010 and
NET019 read the address plan's problems and management addresses, not the 8,192 fabric addresses the
dragonfly example's hosts get. The outputs staying byte-identical is the golden tests' part (tests/golden);
here: validate never calls the expensive builders, the lazy values are read once and kept, values given to
``Plan(...)`` win, and the cheap answers equal the full address plan's on plans that do and do not fit.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import generator.deploy.addresses as addresses
import generator.plan.build as build
from generator.deploy.addresses import management_addresses, onprem_plan, onprem_problems
from generator.pipeline import check, load_and_resolve
from generator.plan.model import BomLine, Plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MAAS = EXAMPLES / "maas-onprem-h100.yaml"


@pytest.fixture
def bom_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = build.bill_of_materials

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "bill_of_materials", counting)
    return calls


@pytest.fixture
def fabric_address_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = addresses._fabric

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(addresses, "_fabric", counting)
    monkeypatch.setattr(addresses, "_LAST", [])  # no plan left over from another test
    return calls


@pytest.mark.parametrize("example", ["roce-dragonfly.yaml", "maas-onprem-h100.yaml"])
def test_validate_builds_no_bom_and_no_host_addresses(
    example: str, bom_calls: list[int], fabric_address_calls: list[int]
) -> None:
    checked = check(EXAMPLES / example)
    assert checked.context.plan is not None  # the plan was built (NET017 and others read it) ...
    assert bom_calls == []  # ... but not its bill of materials
    assert fabric_address_calls == []  # nor the fabric address of every host port


def test_bom_is_counted_once_on_first_read(bom_calls: list[int]) -> None:
    _, cluster = load_and_resolve(MAAS)
    plan = build.build_plan(cluster)
    assert bom_calls == []
    lines, transceivers, by_fabric = plan.bom, plan.transceivers, plan.transceivers_by_fabric
    assert bom_calls == [1]
    assert plan.bom is lines and plan.transceivers is transceivers
    assert plan.transceivers_by_fabric is by_fabric
    assert bom_calls == [1]
    servers = [b for b in lines if b.item == "server"]
    assert sum(b.count for b in servers) == cluster.node_count  # an independent count: the pools'
    assert sum(transceivers.values()) == sum(sum(v.values()) for v in by_fabric.values())
    assert plan.summary()["bom"][0]["item"] == "switch"


def test_given_values_win_and_survive_replace() -> None:
    _, cluster = load_and_resolve(MAAS)
    lines = (BomLine("switch", "qm9700", 2),)
    plan = Plan(cluster, (), (), (), {}, bom=lines, transceivers={"x": 4})
    assert plan.bom is lines and plan.transceivers == {"x": 4}
    assert plan.transceivers_by_fabric == {}  # optional, as before
    copy = dataclasses.replace(plan, devices=())
    assert copy.bom is lines and copy.transceivers == {"x": 4}
    assert copy == plan
    with pytest.raises(TypeError, match="bom"):
        _ = Plan(cluster, (), (), (), {}).bom
    built = build.build_plan(cluster)
    assert dataclasses.replace(built, racks=()).bom == built.bom  # replace reads (and keeps) the BOM


def _maas(tmp_path: Path, **cidrs: str) -> Path:
    text = MAAS.read_text()
    for key, value in cidrs.items():
        start = text.index(f"    {key}: ")
        end = text.index("\n", start)
        text = text[:start] + f"    {key}: {value}" + text[end:]
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "cidrs",
    [
        {},
        {"management_cidr": "10.10.0.0/27"},  # 38 hosts in 3 pools do not fit
        {"management_cidr": "10.10.0.0/26"},  # fits packed (alignment 1)
        {"compute_cidr": "10.100.0.0/27"},  # rails split too small for the nodes
        {"compute_cidr": "10.100.0.0/29"},  # cannot be split into one subnet per rail
        {"storage_cidr": "10.200.0.1/24", "management_cidr": "10.10.0.300/24"},  # host bits; no address
    ],
)
def test_cheap_answers_equal_the_full_address_plan(tmp_path: Path, cidrs: dict[str, str]) -> None:
    _, cluster = load_and_resolve(_maas(tmp_path, **cidrs))
    addresses._LAST.clear()
    problems = onprem_problems(cluster)
    management = management_addresses(cluster)
    addresses._LAST.clear()
    full = onprem_plan(cluster)
    assert problems == full.problems
    assert (problems != []) == bool(cidrs) or cidrs == {"management_cidr": "10.10.0.0/26"}
    assert management == full.management
    assert onprem_problems(cluster) is full.problems  # the full plan, once built, answers
