"""NetBox's import files hold names as they are (review h154 f6): they got the spreadsheet `'` before a
text starting = + - @ (safetext.csv_cell), which NetBox's CSV import keeps as part of the name (`'-Acme`,
`'-1-1`). The human-facing cables/labels/BOM CSVs keep it (tests/hostile/test_hostile.py)."""

from __future__ import annotations

from pathlib import Path

import netbox_checks
from test_netbox_slugs_distinct import BLUEPRINT, CATALOG

from generator.emit.cabling import render
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.sot.csvfiles import for_import


def test_netbox_files_carry_no_spreadsheet_prefix(tmp_path: Path) -> None:
    (tmp_path / "cat.yaml").write_text(CATALOG.format(server_maker="'=Lab'", switch_maker="'-Acme'"))
    (tmp_path / "bp.yaml").write_text(BLUEPRINT)
    plan = build_plan(load_and_resolve(str(tmp_path / "bp.yaml"))[1])
    files = render(plan.cluster, plan)
    netbox = {rel.removeprefix("netbox/"): data for rel, data in files.items() if rel.startswith("netbox/")}
    assert netbox_checks.problems(netbox) == []
    t = netbox_checks.read(netbox)
    assert sorted(r["name"] for r in t["manufacturers.csv"]) == ["-Acme", "=Lab"]
    assert {r["manufacturer"] for r in t["devices.csv"]} == {"-Acme", "=Lab"}
    for name, data in netbox.items():  # what `sot csv` gives NetBox's import: the same text
        assert for_import(Path(name), data.decode()) == data.decode(), name
