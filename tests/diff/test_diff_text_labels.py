"""The text report names a moved cable's ports as the technician reads them on the faceplate and on the
cable label (`P16/1`), beside the plan's logical port (`31`): it printed `leaf 31 → … 33` while the cable
plan and the work order say `P16/1 → P17/1`."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from conftest import run_cli  # tests/conftest.py
from diff_blueprints import variant

MOVED = re.compile(r"^  > (\S+) \(\S+ \S+\) b: (\S+) (\S+) \((\S+)\) → (\S+) (\S+) \((\S+)\)$")


def test_moved_cables_show_the_cage_label_the_work_order_prints(tmp_path: Path) -> None:
    old, new = variant("labels-su2", dgx=64), variant("labels-su3", dgx=96)  # spines re-spread: b ends move
    wo = tmp_path / "wo"
    code, text, err = run_cli("diff", str(old), str(new), "--fabric", "compute", "--work-order", str(wo))
    assert code == 1, err
    shown = [m.groups() for line in text.splitlines() if (m := MOVED.match(line))]
    assert len(shown) == 20, text  # TEXT_LIMIT lines, every one with both labels
    with open(wo / "work-order.csv", newline="") as fh:
        rows = {(r["action"], r["cable_id"]): r for r in csv.DictReader(fh)}
    for cid, old_dev, old_port, old_label, new_dev, new_port, new_label in shown:
        assert re.fullmatch(r"P\d\d/[12]", old_label) and re.fullmatch(r"P\d\d/[12]", new_label)
        before, after = rows[("move-from", cid)], rows[("move-to", cid)]
        assert (before["b_device"], before["b_port"]) == (old_dev, old_port)
        assert (after["b_device"], after["b_port"]) == (new_dev, new_port)
        # one truth: the label's port is the one the cable plan prints on that end
        assert before["b_label"].endswith(f"-{old_dev}-{old_label}")
        assert after["b_label"].endswith(f"-{new_dev}-{new_label}")
