"""`plan` counts the appliances' cables and the switch ports they take, as the cabling plan pulls them.

The SuperPOD example's 4 UFM cables sit on compute leaf ports: `plan` said "2040 used, 8 free" and had no
row for them while cables.csv cabled 2,044 of the 2,048 leaf ports, and an appliance of `ports: 5` was
refused ("no free leaf port left") under a plan that showed 8 free.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from conftest import EXAMPLES, run_cli

from generator.plan.model import Plan

SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"
UFM02 = "  - {name: ufm02, model: ufm-enterprise-appliance-3, fabric: compute, ports: 2}\n"
# one appliance on each of the other two fabrics, so every fabric an appliance attaches to is counted
OTHERS = (
    "  - {name: nas01, fabric: storage, ports: 2, rack_units: 1, power_w: 500}\n"
    "  - {name: oob01, fabric: management, ports: 3, rack_units: 1, power_w: 300}\n"
)


def _variant(tmp_path: Path, extra: str) -> Path:
    text = SUPERPOD.read_text()
    assert UFM02 in text
    out = tmp_path / "variant.yaml"
    out.write_text(text.replace(UFM02, UFM02 + extra))
    return out


def _plan(path: Path) -> Plan:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(path)[1])


def _cables_csv(tmp_path: Path, bp: Path) -> list[dict[str, str]]:
    code, _out, err = run_cli("cabling", str(bp), "-o", str(tmp_path / "cab"))
    assert code == 0, err
    with (tmp_path / "cab" / "cables.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def _plan_json(bp: Path) -> dict:  # type: ignore[type-arg]
    code, out, err = run_cli("plan", str(bp), "--format", "json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_plan_json_counts_every_cable_and_port_of_the_cabling_plan(tmp_path: Path) -> None:
    bp = _variant(tmp_path, OTHERS)
    rows = _cables_csv(tmp_path, bp)
    plan = _plan(bp)
    role = {d.name: d.role for d in plan.devices if d.kind == "switch"}
    layers = Counter((r["fabric"], r["layer"]) for r in rows)
    used: Counter[tuple[str, str]] = Counter()  # (fabric, tier) -> switch ports cabled in cables.csv
    for r in rows:
        for end in ("a", "b"):
            if r[f"{end}_device"] in role:
                used[(r["fabric"], role[r[f"{end}_device"]])] += 1
    capacity = Counter((d.fabric, d.role) for d in plan.devices if d.kind == "switch" for _ in range(d.ports))
    summary = _plan_json(bp)
    assert {f: layers[(f, "appliance_switch")] for f in ("compute", "storage", "management")} == {
        "compute": 4,
        "storage": 2,
        "management": 3,
    }
    for fabric, m in summary["fabrics"].items():
        assert m["cables"] == {layer: n for (f, layer), n in layers.items() if f == fabric}, fabric
        for tier in m["switches"]:
            assert m["ports_used"][tier] == used[(fabric, tier)], (fabric, tier)
            assert m["ports_free"][tier] == capacity[(fabric, tier)] - used[(fabric, tier)], (fabric, tier)
    assert summary["cables"]["appliance_switch"] == 4
    assert summary["cables"]["storage_appliance_switch"] == 2
    assert summary["cables"]["management_appliance_switch"] == 3
    assert sum(summary["cables"].values()) == summary["cables_total"] == len(rows)


def _rows(text: str, fabric: str) -> dict[str, list[str]]:
    """The cells of one fabric's table in `plan`'s text, by their first cell."""
    table = text.split(f"{fabric} fabric")[1].split(" fabric")[0]
    out = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells:
            out[cells[0]] = cells[1:]
    return out


def test_plan_text_shows_the_superpod_ufm_cables_and_the_ports_they_take(tmp_path: Path) -> None:
    rows = _cables_csv(tmp_path, SUPERPOD)
    ufm = [r for r in rows if r["layer"] == "appliance_switch"]
    leaf_ends = {
        (r["a_device"], r["a_port"]) for r in rows if "-leaf-" in r["a_device"] and r["fabric"] == "compute"
    }
    leaf_ends |= {
        (r["b_device"], r["b_port"]) for r in rows if "-leaf-" in r["b_device"] and r["fabric"] == "compute"
    }
    code, out, err = run_cli("plan", str(SUPERPOD))
    assert code == 0, err
    compute = _rows(out, "compute")
    assert compute["cables appliance_switch"][0] == str(len(ufm)) == "4"
    assert compute["leaf"][:3] == [
        "32",
        str(len(leaf_ends)),
        str(32 * 64 - len(leaf_ends)),
    ]  # 2044 used, 4 free


def test_the_free_leaf_ports_plan_shows_are_those_an_appliance_can_take(tmp_path: Path) -> None:
    free = _plan_json(SUPERPOD)["fabrics"]["compute"]["ports_free"]["leaf"]
    spare = "  - {{name: spare01, fabric: compute, ports: {n}, rack_units: 1, power_w: 500}}\n"
    code, _out, err = run_cli("plan", str(_variant(tmp_path, spare.format(n=free))))
    assert code == 0, err
    code, _out, err = run_cli("plan", str(_variant(tmp_path, spare.format(n=free + 1))))
    assert code == 2 and "has no free leaf port left" in err, err
