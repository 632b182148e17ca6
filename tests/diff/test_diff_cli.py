"""`blueprint diff`: exit codes, text and JSON reports, and the change-only work order."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

from conftest import EXAMPLES, run_cli  # tests/conftest.py
from diff_blueprints import variant
from openpyxl import load_workbook
from vendor_tables import dgx_h100_compute_ports


def test_same_blueprint_exits_0() -> None:
    path = variant("cli-same", dgx=64, growth=128)
    code, out, err = run_cli("diff", str(path), str(path))
    assert code == 0, err
    assert "no physical change" in out


def test_differences_exit_1_with_json() -> None:
    old, new = variant("cli-su2", dgx=64, growth=128), variant("cli-su3", dgx=96, growth=128)
    code, out, err = run_cli("diff", str(old), str(new), "--format", "json", "--fabric", "compute")
    assert code == 1, err
    data = json.loads(out)
    assert data["identical"] is False and data["fabrics"] == ["compute"]
    s = data["summary"]
    assert s["cables_added"] == 512 and s["cables_removed"] == 0 and s["cables_moved"] == 0
    assert s["cables_added_by_layer"] == {"compute/leaf_spine": 256, "compute/node_leaf": 256}
    assert sorted(d["name"] for d in data["devices"]["added"] if d["kind"] == "switch") == [
        f"c-leaf-su3-r{r}" for r in range(8)
    ]
    code, text, _ = run_cli("diff", str(old), str(new), "--fabric", "compute")
    assert code == 1
    assert "+ 32 node(s) of pool dgx (dgx-h100): dgx[065-096] at r" in text
    assert "cables: +512 added, -0 removed, 0 moved" in text
    assert "+ switch c-leaf-su3-r0 (qm9700, compute leaf) at r" in text


def test_unusable_input_exits_2(tmp_path: Path) -> None:
    good = variant("cli-good", dgx=64, growth=128)
    code, _, err = run_cli("diff", str(good), str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("count: 64", "count: -4"))
    code, _, err = run_cli("diff", str(bad), str(good))
    assert code == 2 and "bad.yaml:" in err and "Traceback" not in err


def _csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_work_order_lists_only_the_changes(tmp_path: Path) -> None:
    old, new = variant("wo-su2", dgx=64, growth=128), variant("wo-su3", dgx=96, growth=128)
    out = tmp_path / "wo"
    code, _, err = run_cli(
        "diff", str(old), str(new), "--fabric", "compute", "--work-order", str(out), "--format", "json"
    )
    assert code == 1, err
    assert sorted(p.name for p in out.iterdir()) == [
        "devices.csv",
        "summary.txt",
        "work-order.csv",
        "work-order.xlsx",
    ]
    rows = _csv(out / "work-order.csv")
    actions = Counter(r["action"] for r in rows)
    assert actions["add"] == 512
    assert not {"remove", "move-from", "move-to"} & set(actions)
    added = [r for r in rows if r["action"] == "add"]
    assert all(r["step"] == "3" for r in added)
    assert {r["cable_id"] for r in added if r["layer"] == "node_leaf"} == {
        f"C-NL-{i:06d}" for i in range(513, 769)
    }
    # labels come from the cabling emitter's row builder: site-rack-unit-device-port; a DGX H100 end
    # carries its faceplate name (OSFP4P2: User Guide Table 6, kept as test data)
    faceplates = tuple(f"-{r.port}" for r in dgx_h100_compute_ports())
    assert all(
        r["a_label"].startswith("dc1-R")
        and (r["a_label"].endswith(r["a_port"]) or "/" in r["a_label"] or r["a_label"].endswith(faceplates))
        for r in added
    )
    assert [int(r["seq"]) for r in rows] == list(range(1, len(rows) + 1))
    devices = _csv(out / "devices.csv")
    installs = sorted(r["name"] for r in devices if r["action"] == "install")
    assert [n for n in installs if n.startswith("c-")] == [f"c-leaf-su3-r{r}" for r in range(8)]
    wb = load_workbook(out / "work-order.xlsx", read_only=True)
    assert wb.sheetnames[:2] == ["Summary", "Devices"] and wb["Devices"].max_row == len(devices) + 1
    racks = wb.sheetnames[2:]  # one sheet per rack: its lines (A end there) under a title and a header row
    assert racks and sum(wb[r].max_row - 2 for r in racks) == len(rows)
    assert {r["a_rack"] for r in rows} == set(racks)
    # byte-identical on a second run (the folder is replaced whole; its files only with --force)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert run_cli("diff", str(old), str(new), "--fabric", "compute", "--work-order", str(out))[0] == 2
    assert (
        run_cli("diff", str(old), str(new), "--fabric", "compute", "--work-order", str(out), "--force")[0]
        == 1
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_work_order_for_moves(tmp_path: Path) -> None:
    old, new = variant("wom-su2", dgx=64), variant("wom-su3", dgx=96)
    out = tmp_path / "wo"
    code, text, _ = run_cli("diff", str(old), str(new), "--fabric", "compute", "--work-order", str(out))
    assert code == 1 and "live: no" in text
    rows = _csv(out / "work-order.csv")
    frm = {r["cable_id"]: r for r in rows if r["action"] == "move-from"}
    to = {r["cable_id"]: r for r in rows if r["action"] == "move-to"}
    assert frm and set(frm) == set(to)
    for cid, r in frm.items():
        assert r["step"] == "1" and to[cid]["step"] == "3"
        assert (r["b_device"], r["b_port"]) != (to[cid]["b_device"], to[cid]["b_port"])


def test_a_cable_that_moves_to_a_port_of_another_speed_is_re_pulled(tmp_path: Path) -> None:
    """400G RoCE to 200G: the spine ports change, so half the leaf-spine cables land elsewhere; they were
    "moved" (take the 400G optical cable to the 200G AOC port) and the new cables were never ordered."""
    from conftest import EXAMPLES

    old = tmp_path / "old.yaml"
    old.write_text((EXAMPLES / "roce-rail-2tier.yaml").read_text())
    assert "technology: roce-v2-400" in old.read_text()
    new = tmp_path / "new.yaml"
    new.write_text(old.read_text().replace("technology: roce-v2-400", "technology: roce-v2-200"))
    code, out, err = run_cli(
        "diff", str(old), str(new), "--format", "json", "--work-order", str(tmp_path / "wo")
    )
    assert code == 1, err
    data = json.loads(out)
    moved = data["cables"]["moved"]
    assert moved == [], moved[:2]  # every cable that lands elsewhere also changes speed here
    rerouted = [c for c in data["cables"]["changed"] if c["ends"]]
    assert rerouted and all(c["fields"]["speed_gbps"] == [400, 200] for c in rerouted)
    assert all(c["old"] != c["new"] for c in rerouted)
    with open(tmp_path / "wo" / "work-order.csv", newline="") as fh:
        actions = {(r["action"], r["cable_id"]) for r in csv.DictReader(fh)}
    first = rerouted[0]["id"]
    assert {("re-pull-old", first), ("re-pull-new", first)} <= actions
    assert not any(a.startswith("move") for a, _ in actions)


def test_a_file_name_stays_on_the_report_line(tmp_path: Path) -> None:
    """A blueprint named with ESC and a line break wrote both raw into the report (stdout, summary.txt)."""
    from conftest import EXAMPLES

    odd = tmp_path / "a\x1b[31m\nb.yaml"
    odd.write_text((EXAMPLES / "single-dgx-h100.yaml").read_text())
    code, out, err = run_cli("diff", str(odd), str(EXAMPLES / "single-dgx-h100.yaml"))
    assert code == 0, err
    assert "\x1b" not in out and "a\\x1b[31m\\x0ab.yaml" in out.splitlines()[0]


def test_renamed_racks_move_nothing_and_relabel_their_cables(tmp_path: Path) -> None:
    """site.rack_names on the same floor: every device was reported relocated (91 unplugged, 1,096 links
    down) and 21 racks new and 21 emptied. The racks are where they were; what changes is every label that
    names one, so the change is live and its work order relabels those cables."""
    from conftest import EXAMPLES

    old = tmp_path / "old.yaml"
    old.write_text((EXAMPLES / "roce-rail-2tier.yaml").read_text())
    assert "  racks_per_row: 12\n" in old.read_text()
    new = tmp_path / "new.yaml"
    template = "  rack_names: {template: 'A{row:02}-R{position:02}'}\n"
    new.write_text(old.read_text().replace("  racks_per_row: 12\n", "  racks_per_row: 12\n" + template))
    wo = tmp_path / "wo"
    code, out, err = run_cli("diff", str(old), str(new), "--format", "json", "--work-order", str(wo))
    assert code == 1, err
    data = json.loads(out)
    assert data["live"] and not data["identical"] and data["summary"]["devices_relocated"] == 0
    renamed = data["racks"]["renamed"]
    assert renamed and {"old": "r01-01", "new": "A01-R01"} in renamed
    assert data["racks"]["added"] == data["racks"]["removed"] == []
    with open(wo / "work-order.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["action"] for r in rows} == {"relabel"}
    assert all(r["step"] == "3" for r in rows)
    assert any(r["a_label"].startswith("dc1-A01-R01-") for r in rows), rows[0]
    code, text, _ = run_cli("diff", str(old), str(new))
    assert code == 1 and "live: yes — additions and relabelling only" in text
    assert "renamed (relabel only): r01-01 → A01-R01" in text


def test_a_renamed_site_relabels_every_cable(tmp_path: Path) -> None:
    """The site's name begins every cable label (dc1-R01-01-U01-…): renaming it said "no physical change"
    (exit 0, an empty work order) while every label on the floor changed."""
    from conftest import EXAMPLES

    old = tmp_path / "old.yaml"
    old.write_text((EXAMPLES / "roce-rail-2tier.yaml").read_text())
    assert old.read_text().count("  name: dc1\n") == 1
    new = tmp_path / "new.yaml"
    new.write_text(old.read_text().replace("  name: dc1\n", "  name: dc2\n"))
    wo = tmp_path / "wo"
    code, out, err = run_cli("diff", str(old), str(new), "--format", "json", "--work-order", str(wo))
    assert code == 1, err
    data = json.loads(out)
    assert data["live"] and not data["identical"] and data["site_renamed"] == {"old": "dc1", "new": "dc2"}
    assert data["summary"]["devices_relocated"] == 0 and data["racks"]["renamed"] == []
    with open(wo / "work-order.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # every cable of the plan, each with its new labels
    code, plan_json, _ = run_cli("plan", str(new), "--format", "json")
    assert code == 0
    assert len(rows) == json.loads(plan_json)["cables_total"]
    assert {r["action"] for r in rows} == {"relabel"} and all(r["a_label"].startswith("dc2-") for r in rows)
    code, text, _ = run_cli("diff", str(old), str(new))
    assert code == 1 and "site renamed (relabel only): dc1 → dc2" in text


def test_a_fabric_neither_blueprint_has_is_refused() -> None:
    """`--fabric storage` on blueprints without one compared nothing, yet reported the floor's new racks and
    "live: yes — only additions on free ports"."""
    path = EXAMPLES / "single-dgx-h100.yaml"
    code, out, err = run_cli("diff", str(path), str(path), "--fabric", "storage")
    assert code == 2 and not out, out
    assert "neither blueprint has a built `storage` fabric (they have: " in err, err


def test_racks_outside_the_compared_fabrics_are_not_reported() -> None:
    """Management nodes growing into six new racks: `--fabric compute` (which they are not cabled to)
    listed the six racks and called the plans different."""
    old, new = (
        variant("cli-scope-a", dgx=64, growth=128),
        variant("cli-scope-b", dgx=64, growth=128, mgmt=200),
    )
    code, out, _ = run_cli("diff", str(old), str(new), "--format", "json", "--fabric", "compute")
    data = json.loads(out)
    assert code == 0 and data["identical"] is True, data["summary"]
    assert data["racks"]["added"] == [] and data["racks"]["affected"] == []
    code, out, _ = run_cli("diff", str(old), str(new), "--format", "json", "--fabric", "management")
    data = json.loads(out)
    assert code == 1 and data["racks"]["added"] == [f"r06-{p:02}" for p in range(3, 9)], data["racks"]


def test_no_affected_line_without_affected_racks() -> None:
    old, new = variant("cli-aff-a", dgx=64, growth=128), variant("cli-aff-b", dgx=64, growth=128, mgmt=200)
    code, out, _ = run_cli("diff", str(old), str(new), "--fabric", "compute")
    assert code == 0 and "affected:" not in out, out
