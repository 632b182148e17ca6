"""The cabling work order for a change: only the cables and devices that change, in the order to do them.

Step 1 takes down what goes (``remove``, ``move-from``, ``re-pull-old``, ``unplug`` for cables of devices
that are replaced or moved), step 2 handles the devices (``devices.csv``), step 3 pulls what comes
(``add``, ``move-to``, ``re-pull-new``, ``replug``) and relabels the cables of renamed racks and devices
(``relabel``; a renamed device is relabelled in step 2, in an order where no two devices bear one label:
where renamed devices swap names, one first gets a temporary label, ``relabel-temporary``).
Cable rows are the cabling emitter's rows (``generator.emit.cabling.rows.cable_rows``, same labels and columns
as the full cable plan) with an action and a step in front; old-side rows are labelled from the old plan,
new-side rows from the new one.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import NamedTuple

from generator.diff.model import PlanDiff
from generator.diff.render import to_text
from generator.emit.cabling.rows import CableRow, cable_rows
from generator.emit.cabling.tables import CABLE_COLUMNS, Cell, cable_table, to_csv
from generator.emit.cabling.xlsx import MAX_COL_WIDTH, TICK_COL_WIDTH, fit_widths, printable
from generator.emit.cabling.xlsx_writer import Columns, PageSetup, Sheet, Style, Workbook, hf_text
from generator.fsutil import OutputRefused, atomic_dir, atomic_write_files, checked_output_dir, output_lock
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
    "old_name",  # a relabelled device's name before (``name``: after); last, the others keep their places
)
# The per-rack sheets: narrow enough for a landscape page (the labels carry rack, unit, device, port).
RACK_HEADER: tuple[str, ...] = (
    "#",
    "Step",
    "Action",
    "Cable",
    "Fabric",
    "Layer",
    "From U",
    "From label",
    "To label",
    "Medium",
    "Length m",
    "Part number",
    "Done",
    "Labelled",
    "Tested",
)
_TICKS = 3  # Done, Labelled, Tested: left blank to tick on paper
_MARGINS = (0.3, 0.3, 0.6, 0.6, 0.3, 0.3)  # inches, as cabling.xlsx
SUMMARY_TEXT_WIDTH = 60


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
    # after the unplugged ones: a replugged cable gets its new labels as it goes back in (a site renamed
    # beside a replaced switch had its cables unplugged in step 1 and only relabelled in step 3)
    _relabels(diff, down, up)
    old_by = {x.id: x for x in diff.old.links}
    new_by = {x.id: x for x in diff.new.links}
    return ([(a, old_by[i]) for i, a in down.items()], [(a, new_by[i]) for i, a in up.items()])


def _relabels(diff: PlanDiff, down: dict[str, str], up: dict[str, str]) -> None:
    """Cables that stay but end in a renamed rack or on a renamed device: their labels name both (the cabling
    plan's labels), so each is relabelled in step 3 with its new labels; every cable that stays when the site
    is renamed (its name begins each label)."""
    renamed = {new for _, new in diff.racks_renamed}
    devices = {new for _, new in diff.devices_renamed}
    if not renamed and not devices and not diff.site_renamed:
        return
    by_name = diff.new.device_by_name
    for x in diff.new.links:
        if x.id in up or x.id in down or (diff.fabrics is not None and x.fabric not in diff.fabrics):
            continue
        racks = {getattr(by_name.get(ep.device), "rack", None) for ep in (x.a, x.b)}
        if diff.site_renamed or racks & renamed or x.a.device in devices or x.b.device in devices:
            up[x.id] = "relabel"


def _rows(plan_links: list[tuple[str, Link]], diff_side: str, diff: PlanDiff) -> list[tuple[str, CableRow]]:
    plan = diff.old if diff_side == "old" else diff.new
    action = {x.id: a for a, x in plan_links}
    rows = cable_rows(plan.cluster, plan, [x for _, x in plan_links])
    return [(action[r.id], r) for r in rows]


class Step(NamedTuple):
    """One line of the work order: a cable to take down (step 1) or put up (step 3)."""

    seq: int
    step: int
    action: str
    row: CableRow


def work_steps(diff: PlanDiff) -> list[Step]:
    down, up = cable_actions(diff)
    out: list[Step] = []
    for step, side, pairs in ((1, "old", down), (3, "new", up)):
        for action, row in _rows(pairs, side, diff):
            out.append(Step(len(out) + 1, step, action, row))
    return out


def cable_table_rows(steps: list[Step]) -> list[list[Cell]]:
    return [[s.seq, s.step, s.action, *cable_table([s.row])[0][1:]] for s in steps]


def _device_row(
    action: str,
    dev: Device,
    models: tuple[str, str],
    old_at: tuple[Cell, Cell],
    new_at: tuple[Cell, Cell],
    old_name: str = "",
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
        old_name,
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
    # nothing moves: a new label on the device, in an order where no two devices bear one label at a time
    # (``name`` the label it gets, ``old_name`` the one it bears: a temporary one opens a cycle of renames)
    for step in diff.device_relabels:
        o, n = old_dev[step.old], new_dev[step.new]
        action = "relabel-temporary" if step.temporary else "relabel"
        labelled = n._replace(name=step.after)
        out.append(
            _device_row(action, labelled, (n.model, n.model), (o.rack, o.u), (n.rack, n.u), step.before)
        )
    out += [_device_row("install", d, ("", d.model), ("", ""), (d.rack, d.u)) for d in diff.devices_added]
    return [[i, *row] for i, row in enumerate(out, start=1)]


def _rack_columns(steps: list[Step]) -> list[list[Cell]]:
    blank: list[Cell] = [None] * len(steps)
    columns: list[list[Cell]] = [
        [s.seq for s in steps],
        [s.step for s in steps],
        [s.action for s in steps],
        [s.row.id for s in steps],
        [s.row.fabric for s in steps],
        [s.row.layer for s in steps],
        [s.row.a.u for s in steps],
        [s.row.a.label for s in steps],
        [s.row.b.label for s in steps],
        [(s.row.medium or "").upper() for s in steps],
        [s.row.length_m for s in steps],
        [s.row.part_number or None for s in steps],
    ]
    return columns + [list(blank) for _ in range(_TICKS)]


def _summary(sheet: Sheet, diff: PlanDiff, title: str, by_rack: dict[str, list[Step]]) -> None:
    sheet.row(1, [title], Style.TITLE)
    r = 2
    for line in to_text(diff).splitlines():
        r += 1
        sheet.row(r, [line])
    r += 2
    _, widths = sheet.table(
        r,
        ("Rack", "Step 1 (take down)", "Step 3 (put up)", "Lines"),
        [
            [
                rack,
                sum(s.step == 1 for s in rack_steps),
                sum(s.step == 3 for s in rack_steps),
                len(rack_steps),
            ]
            for rack, rack_steps in by_rack.items()
        ],
    )
    sheet.widths[1] = SUMMARY_TEXT_WIDTH  # the text lines spill to the right; the table is read in column A
    for col, w in enumerate(widths[1:], 2):
        sheet.widths[col] = min(w + 2, MAX_COL_WIDTH)
    sheet.freeze_rows = 1
    sheet.print_title_rows = 1
    sheet.page = PageSetup(
        landscape=True,
        fit_to_width=True,
        margins=_MARGINS,
        header=f"&L{hf_text(title)}",
        footer="&RPage &P of &N",
    )


def render_xlsx(diff: PlanDiff, steps: list[Step], devices: list[list[Cell]]) -> bytes:
    """Summary, Devices, then one printable sheet per rack with the lines whose A end is there, narrow
    columns and tick boxes, as cabling.xlsx has (every column of every line is in work-order.csv)."""
    title = f"Work order: {diff.old.cluster.name} → {diff.new.cluster.name}"
    by_rack: dict[str, list[Step]] = {}
    for s in steps:
        by_rack.setdefault(s.row.a.rack_or_unracked, []).append(s)
    buf = io.BytesIO()
    with Workbook(buf, ["Summary", "Devices", *by_rack], title=title, creator="cluster-blueprint") as wb:
        sheet = wb.sheet()
        _summary(sheet, diff, title, by_rack)
        wb.add(sheet)
        sheet = wb.sheet()
        last, widths = sheet.table(1, DEVICE_HEADER, devices)
        fit_widths(sheet, widths)
        printable(sheet, title, 1, len(DEVICE_HEADER), last, "work order")
        wb.add(sheet)
        for rack, rack_steps in by_rack.items():
            sheet = wb.sheet()
            sheet.row(1, [f"{title} · rack {rack} · {len(rack_steps)} lines start here"], Style.TITLE)
            last, widths = sheet.table(2, RACK_HEADER, Columns(_rack_columns(rack_steps)))
            fit_widths(sheet, widths)
            for col in range(len(RACK_HEADER) - _TICKS + 1, len(RACK_HEADER) + 1):
                sheet.widths[col] = TICK_COL_WIDTH
            printable(sheet, title, 2, len(RACK_HEADER), last, "work order")
            wb.add(sheet)
    return buf.getvalue()


WORK_ORDER_FILES = ("devices.csv", "summary.txt", "work-order.csv", "work-order.xlsx")


def check_work_order_target(target: str, report: str | None, force: bool) -> None:
    """Before anything is written: a folder name (not empty), whose work-order files are replaced only with
    ``force`` (a site's ticked copy of work-order.csv was replaced without a word), and that the report (-o)
    does not write into (`-o DIR/work-order.csv` replaced the cable list with the report)."""
    if target in ("", "-"):
        raise OutputRefused(f"--work-order {target!r} is not a folder name")
    folder = checked_output_dir(target, None)
    if report not in (None, "", "-"):
        # resolved: `wo/../wo/work-order.csv` or a symlink to the folder named the same file, and `-o wo`
        # (the folder itself) was refused only after the work order was written
        place, where = Path(report).resolve(), folder.resolve()
        if place == where or where in place.parents:
            raise OutputRefused(f"-o {report} is in --work-order {target}: give the report another place")
    held = [name for name in WORK_ORDER_FILES if (folder / name).exists() or (folder / name).is_symlink()]
    if held and not force:
        raise OutputRefused(
            f"{target} already holds {', '.join(held)}: give --force to replace them, or another folder"
        )


def write_work_order(diff: PlanDiff, target: str | Path) -> list[str]:
    """Write work-order.csv, devices.csv, work-order.xlsx and summary.txt into ``target`` (atomically:
    the folder appears whole or not at all). Returns the file names."""
    steps = work_steps(diff)
    cables = cable_table_rows(steps)
    devices = device_table_rows(diff)
    files: dict[str, bytes] = {
        "work-order.csv": to_csv(CABLE_HEADER, cables).encode(),
        "devices.csv": to_csv(DEVICE_HEADER, devices).encode(),
        "summary.txt": to_text(diff).encode(),
        "work-order.xlsx": render_xlsx(diff, steps, devices),
    }

    assert sorted(files) == sorted(WORK_ORDER_FILES)  # what check_work_order_target guards

    def fill(tmp: Path) -> None:
        for name, data in files.items():
            (tmp / name).write_bytes(data)

    folder = checked_output_dir(target, None)  # a file, symlink, `/`, home or mount point: refused
    with output_lock(folder):
        if folder.exists():  # the user's other files in DIR stay; ours are replaced as a set
            atomic_write_files(folder, files)
        else:
            atomic_dir(folder, fill)
    return sorted(files)
