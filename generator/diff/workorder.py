"""The cabling work order for a change: only the cables and devices that change, in the order to do them.

Step 1 takes down what goes (``remove``, ``move-from``, ``re-pull-old``, ``unplug`` for cables of devices
that are replaced or moved), step 2 handles the devices (``devices.csv``), step 3 pulls what comes
(``add``, ``move-to``, ``re-pull-new``, ``replug``). Cable rows are the cabling emitter's rows
(``generator.emit.cabling.rows.cable_rows``, same labels and columns as the full cable plan) with an
action and a step in front; old-side rows are labelled from the old plan, new-side rows from the new one.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.writer.excel import ExcelWriter

from generator.diff.model import PlanDiff
from generator.diff.report import to_text
from generator.emit.cabling.rows import CableRow, cable_rows
from generator.emit.cabling.tables import CABLE_COLUMNS, Cell, cable_table, to_csv
from generator.emit.cabling.xlsx_writer import FIXED_TIME, StableZip
from generator.fsutil import atomic_dir
from generator.plan.model import Device, Link

CABLE_HEADER: tuple[str, ...] = ("seq", "step", "action", *CABLE_COLUMNS[1:])
DEVICE_HEADER: tuple[str, ...] = (
    "seq",
    "action",
    "name",
    "kind",
    "role",
    "old_model",
    "new_model",
    "fabric",
    "old_rack",
    "old_u",
    "new_rack",
    "new_u",
    "height_u",
    "power_kw",
)
_HEAD_FONT = Font(bold=True)
_HEAD_FILL = PatternFill("solid", fgColor="D9D9D9")


def cable_actions(diff: PlanDiff) -> tuple[list[tuple[str, Link]], list[tuple[str, Link]]]:
    """(old-side (action, link) pairs, new-side pairs): what to take down, then what to put up."""
    down: dict[str, str] = {}
    up: dict[str, str] = {}
    for x in diff.cables_removed:
        down[x.id] = "remove"
    for m in diff.cables_moved:
        down[m.id] = "move-from"
        up[m.id] = "move-to"
    for c in diff.cables_changed:
        down[c.id] = "re-pull-old"
        up[c.id] = "re-pull-new"
    for x in diff.cables_added:
        up[x.id] = "add"
    new_ids = {x.id for x in diff.new.links}
    for cid in diff.links_down:  # cables of replaced/relocated/removed devices that keep their ports
        if cid not in down:
            down[cid] = "unplug"
            if cid in new_ids and cid not in up:
                up[cid] = "replug"
    old_by = {x.id: x for x in diff.old.links}
    new_by = {x.id: x for x in diff.new.links}
    return ([(a, old_by[i]) for i, a in down.items()], [(a, new_by[i]) for i, a in up.items()])


def _rows(plan_links: list[tuple[str, Link]], diff_side: str, diff: PlanDiff) -> list[tuple[str, CableRow]]:
    plan = diff.old if diff_side == "old" else diff.new
    action = {x.id: a for a, x in plan_links}
    rows = cable_rows(plan.cluster, plan, [x for _, x in plan_links])
    return [(action[r.id], r) for r in rows]


def cable_table_rows(diff: PlanDiff) -> list[list[Cell]]:
    down, up = cable_actions(diff)
    out: list[list[Cell]] = []
    seq = 0
    for step, side, pairs in ((1, "old", down), (3, "new", up)):
        for action, row in _rows(pairs, side, diff):
            seq += 1
            cells = cable_table([row])[0]
            out.append([seq, step, action, *cells[1:]])
    return out


def _device_row(
    action: str, dev: Device, models: tuple[str, str], old_at: tuple[Cell, Cell], new_at: tuple[Cell, Cell]
) -> list[Cell]:
    """One DEVICE_HEADER row (without seq): the device's own facts, models and rack/unit before and after."""
    return [
        action,
        dev.name,
        dev.kind,
        dev.role,
        *models,
        dev.fabric,
        *old_at,
        *new_at,
        dev.height_u,
        dev.power_kw,
    ]


def device_table_rows(diff: PlanDiff) -> list[list[Cell]]:
    new_dev, old_dev = diff.new.device_by_name, diff.old.device_by_name
    out = [_device_row("remove", d, (d.model, ""), (d.rack, d.u), ("", "")) for d in diff.devices_removed]
    for r in diff.devices_replaced:
        o, n = old_dev[r.name], new_dev[r.name]
        out.append(_device_row("replace", n, (r.old_model, r.new_model), (o.rack, o.u), (n.rack, n.u)))
    replaced = {r.name for r in diff.devices_replaced}
    for moved in diff.devices_relocated:
        if moved.name not in replaced:
            n = new_dev[moved.name]
            at_old, at_new = (moved.old_rack, moved.old_u), (moved.new_rack, moved.new_u)
            out.append(_device_row("relocate", n, (n.model, n.model), at_old, at_new))
    out += [_device_row("install", d, ("", d.model), ("", ""), (d.rack, d.u)) for d in diff.devices_added]
    return [[i, *row] for i, row in enumerate(out, start=1)]


def _sheet(wb: Workbook, title: str, header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
    ws = wb.create_sheet(title)
    for c, name in enumerate(header, 1):
        cell = ws.cell(row=1, column=c, value=name)
        cell.font = _HEAD_FONT
        cell.fill = _HEAD_FILL
    widths = [len(h) for h in header]
    for r, values in enumerate(rows, 2):
        for c, v in enumerate(values, 1):
            ws.cell(row=r, column=c, value=v)
            widths[c - 1] = max(widths[c - 1], len(str(v)) if v is not None else 0)
    for c, w in enumerate(widths, 1):
        ws.column_dimensions[get_column_letter(c)].width = min(w + 2, 44)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{get_column_letter(len(header))}{max(1, len(rows) + 1)}"
    ws.print_title_rows = "1:1"
    ws.page_setup.orientation = "landscape"


def render_xlsx(diff: PlanDiff, cables: list[list[Cell]], devices: list[list[Cell]]) -> bytes:
    wb = Workbook()
    wb.properties.creator = "cluster-blueprint"
    wb.properties.lastModifiedBy = None
    wb.properties.title = f"Work order: {diff.old.cluster.name} → {diff.new.cluster.name}"
    wb.properties.created = FIXED_TIME
    wb.properties.modified = FIXED_TIME
    ws = wb.active
    ws.title = "Summary"
    ws.column_dimensions["A"].width = 120
    for r, line in enumerate(to_text(diff).splitlines(), 1):
        ws.cell(row=r, column=1, value=line)
    ws.cell(row=1, column=1).font = Font(bold=True, size=13)
    _sheet(wb, "Devices", DEVICE_HEADER, devices)
    _sheet(wb, "Cables", CABLE_HEADER, cables)
    buf = io.BytesIO()
    with StableZip(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()
    return buf.getvalue()


def write_work_order(diff: PlanDiff, target: str | Path) -> list[str]:
    """Write work-order.csv, devices.csv, work-order.xlsx and summary.txt into ``target`` (atomically:
    the folder appears whole or not at all). Returns the file names."""
    cables = cable_table_rows(diff)
    devices = device_table_rows(diff)
    files: dict[str, bytes] = {
        "work-order.csv": to_csv(CABLE_HEADER, cables).encode(),
        "devices.csv": to_csv(DEVICE_HEADER, devices).encode(),
        "summary.txt": to_text(diff).encode(),
        "work-order.xlsx": render_xlsx(diff, cables, devices),
    }

    def fill(tmp: Path) -> None:
        for name, data in files.items():
            (tmp / name).write_bytes(data)

    atomic_dir(target, fill)
    return sorted(files)
