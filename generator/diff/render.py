"""The diff as text (for people) and as JSON (for tools; stable keys, sorted lists)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.diff.model import PlanDiff
from generator.emit.cabling.rows import CablingError, cable_rows
from generator.emit.slurm.hostlist import compress
from generator.plan.model import Device, Endpoint, Link, Plan
from generator.safetext import inline

TEXT_LIMIT = 20  # items listed per section in text; JSON and the work order list everything


def _where(d: Device) -> str:
    return f"{d.rack} U{d.u}" if d.rack else "no rack"


def _end(ep: Endpoint) -> dict[str, Any]:
    return {"device": ep.device, "port": ep.port}


def _cable(link: Link) -> dict[str, Any]:
    return {
        "id": link.id,
        "fabric": link.fabric,
        "layer": link.layer,
        "speed_gbps": link.speed_gbps,
        "a": _end(link.a),
        "b": _end(link.b),
        "medium": link.medium,
        "length_m": link.length_m,
    }


def _device(d: Device) -> dict[str, Any]:
    return {
        "name": d.name,
        "kind": d.kind,
        "role": d.role,
        "model": d.model,
        "fabric": d.fabric,
        "pool": d.pool,
        "rack": d.rack,
        "u": d.u,
    }


def _by_layer(links: list[Link] | tuple[Link, ...]) -> dict[str, int]:
    c = Counter(f"{x.fabric}/{x.layer}" for x in links)
    return dict(sorted(c.items()))


def _summary_json(diff: PlanDiff) -> dict[str, Any]:
    return {
        "devices_added": len(diff.devices_added),
        "devices_removed": len(diff.devices_removed),
        "devices_replaced": len(diff.devices_replaced),
        "devices_relocated": len(diff.devices_relocated),
        "devices_renamed": len(diff.devices_renamed),
        "cables_added": len(diff.cables_added),
        "cables_removed": len(diff.cables_removed),
        "cables_moved": len(diff.cables_moved),
        "cables_changed": len(diff.cables_changed),
        "ports_speed_changed": len(diff.port_speeds),
        "racks_added": len(diff.racks_added),
        "racks_removed": len(diff.racks_removed),
        "racks_affected": len(diff.racks_affected),
        "links_down": len(diff.links_down),
        "cables_added_by_layer": _by_layer(diff.cables_added),
        "cables_removed_by_layer": _by_layer(diff.cables_removed),
        "cables_moved_by_layer": _by_layer([m.new for m in diff.cables_moved]),
        "cables_changed_by_layer": _by_layer([c.new for c in diff.cables_changed]),
    }


def _devices_json(diff: PlanDiff) -> dict[str, Any]:
    return {
        "added": [_device(d) for d in diff.devices_added],
        "removed": [_device(d) for d in diff.devices_removed],
        "replaced": [
            {"name": r.name, "old_model": r.old_model, "new_model": r.new_model}
            for r in diff.devices_replaced
        ],
        "relocated": [
            {
                "name": r.name,
                "old_rack": r.old_rack,
                "old_u": r.old_u,
                "new_rack": r.new_rack,
                "new_u": r.new_u,
            }
            for r in diff.devices_relocated
        ],
        # the same device at the same place with the same cables: relabelled, nothing moves
        "renamed": [
            {"old": old, "new": new, **_device(diff.new.device_by_name[new])}
            for old, new in diff.devices_renamed
        ],
        # the renames as a technician relabels them: a name reused once its holder is relabelled, a swap
        # (a cycle) through a temporary label
        "relabel_order": [
            {"old": r.old, "new": r.new, "from": r.before, "to": r.after, "temporary": r.temporary}
            for r in diff.device_relabels
        ],
    }


def _cables_json(diff: PlanDiff) -> dict[str, Any]:
    return {
        "added": [_cable(x) for x in diff.cables_added],
        "removed": [_cable(x) for x in diff.cables_removed],
        "moved": [
            {
                "id": m.id,
                "fabric": m.new.fabric,
                "layer": m.new.layer,
                "ends": list(m.ends),
                "old": {"a": _end(m.old.a), "b": _end(m.old.b)},
                "new": {"a": _end(m.new.a), "b": _end(m.new.b)},
            }
            for m in diff.cables_moved
        ],
        "changed": [
            {
                "id": c.id,
                "fabric": c.new.fabric,
                "layer": c.new.layer,
                "fields": {f: [getattr(c.old, f), getattr(c.new, f)] for f in c.fields},
                "ends": list(c.ends),
                "old": {"a": _end(c.old.a), "b": _end(c.old.b)},
                "new": {"a": _end(c.new.a), "b": _end(c.new.b)},
            }
            for c in diff.cables_changed
        ],
    }


def to_json(diff: PlanDiff) -> dict[str, Any]:
    return {
        "old": {
            "name": diff.old.cluster.name,
            "file": diff.old.cluster.source_file,
            "sha256": diff.old.cluster.sha256,
        },
        "new": {
            "name": diff.new.cluster.name,
            "file": diff.new.cluster.source_file,
            "sha256": diff.new.cluster.sha256,
        },
        "fabrics": list(diff.fabrics) if diff.fabrics is not None else "all",
        "identical": diff.identical,
        "live": diff.live,
        "summary": _summary_json(diff),
        "devices": _devices_json(diff),
        "cables": _cables_json(diff),
        "ports_speed_changed": [
            {"device": p.device, "port": p.port, "old_gbps": p.old_gbps, "new_gbps": p.new_gbps}
            for p in diff.port_speeds
        ],
        "racks": {
            "added": list(diff.racks_added),
            "removed": list(diff.racks_removed),
            "affected": list(diff.racks_affected),
            "renamed": [{"old": a, "new": b} for a, b in diff.racks_renamed],
        },
        "site_renamed": (
            {"old": diff.site_renamed[0], "new": diff.site_renamed[1]} if diff.site_renamed else None
        ),
        "disruption": {
            "live": diff.live,
            "reasons": list(diff.disruptions),
            "devices_down": list(diff.devices_down),
            "links_down": list(diff.links_down),
            "conflicts": list(diff.conflicts),
        },
    }


def _more(n: int) -> list[str]:
    return (
        [f"    … and {n - TEXT_LIMIT:,} more (--format json or --work-order lists all)"]
        if n > TEXT_LIMIT
        else []
    )


def _layers(links: list[Link] | tuple[Link, ...]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in _by_layer(links).items())


def to_text(diff: PlanDiff) -> str:
    o, n = diff.old.cluster, diff.new.cluster
    # the file names are the user's: a line break or escape sequence in one stays on this line, shown
    out = [f"blueprint diff: {o.name} ({inline(o.source_file)}) → {n.name} ({inline(n.source_file)})"]
    if diff.fabrics is not None:
        out.append(
            f"fabrics compared: {', '.join(diff.fabrics)} (devices: their switches and the nodes on them)"
        )
    if diff.identical:
        same = o.sha256 == n.sha256
        out.append(
            "no physical change"
            + ("" if same else " (the blueprints differ, but not in anything the physical plan holds)")
        )
        return "\n".join(out) + "\n"
    for section in (_device_lines, _cable_lines, _port_and_rack_lines, _disruption_lines):
        out += section(diff)
    return "\n".join(out) + "\n"


def _device_lines(diff: PlanDiff) -> list[str]:
    out = [
        "",
        f"devices: +{len(diff.devices_added):,} added, -{len(diff.devices_removed):,} removed, "
        f"{len(diff.devices_replaced):,} replaced, {len(diff.devices_relocated):,} relocated"
        + (f", {len(diff.devices_renamed):,} renamed (relabel only)" if diff.devices_renamed else ""),
    ]
    out += _devices("+", "at", diff.devices_added)
    out += _devices("-", "from", diff.devices_removed)
    out += [f"  ~ {r.name}: {r.old_model} → {r.new_model}" for r in diff.devices_replaced[:TEXT_LIMIT]]
    out += _more(len(diff.devices_replaced))
    out += [
        f"  > {m.name}: {m.old_rack} U{m.old_u} → {m.new_rack} U{m.new_u}"
        for m in diff.devices_relocated[:TEXT_LIMIT]
    ]
    out += _more(len(diff.devices_relocated))
    for old, new in diff.devices_renamed[:TEXT_LIMIT]:
        d = diff.new.device_by_name[new]
        what = f"{d.fabric} {d.role}" if d.kind == "switch" else f"pool {d.pool}"
        out.append(
            f"  = {d.kind} {old} → {new} ({d.model}, {what}) at {_where(d)}: relabel it and its cables"
        )
    out += _more(len(diff.devices_renamed))
    out += _relabel_order_lines(diff)
    return out


def _relabel_order_lines(diff: PlanDiff) -> list[str]:
    """The order to relabel in, where it matters: a renamed device takes a name another one bears."""
    steps = diff.device_relabels
    renamed = {r.old for r in steps}
    if not any(r.new in renamed for r in steps):  # no name reused: any order does
        return []
    shown = ", ".join(f"{r.before} → {r.after}" for r in steps[:TEXT_LIMIT])
    more = f" and {len(steps) - TEXT_LIMIT:,} more" if len(steps) > TEXT_LIMIT else ""
    why = " (a temporary label opens a swap)" if any(r.temporary for r in steps) else ""
    return [f"  relabel in this order, names are reused{why}: {shown}{more}"]


PortLabels = dict[tuple[str, str], str]  # (device, plan port) -> the port as its cable label prints it


def _port_labels(plan: Plan, links: list[Link]) -> PortLabels:
    """Each end's port as the cabling outputs print it (``cable_rows``, one truth: ``P16/1`` for a twin
    cage, a server's chassis name, a pool's adapter label), for the ports a technician looks for."""
    if not links or plan.cluster is None:
        return {}
    try:
        rows = cable_rows(plan.cluster, plan, links)
    except CablingError:  # a label the cable plan refuses: the work order says so; the report keeps ports
        return {}
    return {(e.device, e.port): e.label_port for r in rows for e in (r.a, r.b)}


def _port(ep: Endpoint, labels: PortLabels) -> str:
    label = labels.get((ep.device, ep.port), ep.port)
    return f"{ep.device} {ep.port}" + (f" ({label})" if label != ep.port else "")


def _ports_moved(old: Link, new: Link, ends: tuple[str, ...], labels: tuple[PortLabels, PortLabels]) -> str:
    parts = []
    for end in ends:
        before, after = getattr(old, end), getattr(new, end)
        parts.append(f"{end}: {_port(before, labels[0])} → {_port(after, labels[1])}")
    return "; ".join(parts)


def _cable_lines(diff: PlanDiff) -> list[str]:
    out = [
        "",
        f"cables: +{len(diff.cables_added):,} added, -{len(diff.cables_removed):,} removed, "
        f"{len(diff.cables_moved):,} moved, {len(diff.cables_changed):,} re-pulled",
    ]
    if diff.cables_added:
        out.append(f"  added by layer: {_layers(diff.cables_added)}")
    if diff.cables_removed:
        out.append(f"  removed by layer: {_layers(diff.cables_removed)}")
    moved, changed = diff.cables_moved[:TEXT_LIMIT], diff.cables_changed[:TEXT_LIMIT]
    # the shown cables' ports as their labels and the technician's faceplate read them (P16/1, not 31)
    shown = [(m.old, m.new) for m in moved] + [(c.old, c.new) for c in changed if c.ends]
    labels = (_port_labels(diff.old, [o for o, _ in shown]), _port_labels(diff.new, [n for _, n in shown]))
    for m in moved:
        out.append(f"  > {m.id} ({m.new.fabric} {m.new.layer}) " + _ports_moved(m.old, m.new, m.ends, labels))
    out += _more(len(diff.cables_moved))
    for c in changed:
        what = ", ".join(f"{f} {getattr(c.old, f)} → {getattr(c.new, f)}" for f in c.fields)
        where = f"; {_ports_moved(c.old, c.new, c.ends, labels)}" if c.ends else ""
        out.append(f"  ~ {c.id} ({c.new.fabric} {c.new.layer}) {what}{where}")
    out += _more(len(diff.cables_changed))
    return out


def _port_and_rack_lines(diff: PlanDiff) -> list[str]:
    out: list[str] = []
    if diff.port_speeds:
        pairs = Counter((p.old_gbps, p.new_gbps) for p in diff.port_speeds)
        out.append("")
        out.append(
            f"ports changing speed: {len(diff.port_speeds):,} ("
            + ", ".join(f"{a:g} → {b:g} Gb/s: {k:,}" for (a, b), k in sorted(pairs.items()))
            + ")"
        )
    out.append("")
    out.append(
        f"racks: {len(diff.racks_added):,} new, {len(diff.racks_removed):,} emptied, "
        f"{len(diff.racks_affected):,} affected"
    )
    if diff.racks_added:
        out.append(f"  new: {_list(diff.racks_added)}")
    if diff.racks_removed:
        out.append(f"  emptied: {_list(diff.racks_removed)}")
    if diff.racks_renamed:  # a new label on the same rack: nothing moves
        shown = ", ".join(f"{a} → {b}" for a, b in diff.racks_renamed[:TEXT_LIMIT])
        more = len(diff.racks_renamed) - TEXT_LIMIT
        out.append(f"  renamed (relabel only): {shown}" + (f" and {more:,} more" if more > 0 else ""))
    if diff.racks_affected:
        out.append(f"  affected: {_list(diff.racks_affected)}")
    if diff.site_renamed:  # the first part of every cable label
        old, new = diff.site_renamed
        out.append(f"site renamed (relabel only): {old} → {new}, the first part of every cable label")
    return out


def _disruption_lines(diff: PlanDiff) -> list[str]:
    if diff.live:
        what = "only additions on free ports" if not diff.relabelled else "additions and relabelling only"
        return ["", f"live: yes — {what}; no running link goes down"]
    return [
        "",
        f"live: no — {len(diff.links_down):,} running link(s) go down, "
        f"{len(diff.devices_down):,} device(s) unplugged",
        *(f"  - {reason}" for reason in diff.disruptions),
    ]


def _devices(sign: str, prep: str, devices: tuple[Device, ...]) -> list[str]:
    """Switches one per line; nodes grouped per pool and model as a hostlist (a new SU is 32 nodes)."""
    lines: list[str] = []
    switches = [d for d in devices if d.kind == "switch"]
    for d in switches[:TEXT_LIMIT]:
        lines.append(f"  {sign} switch {d.name} ({d.model}, {d.fabric} {d.role}) {prep} {_where(d)}")
    lines += _more(len(switches))
    groups: dict[tuple[str, str], list[Device]] = {}
    for d in devices:
        if d.kind != "switch":
            groups.setdefault((d.pool or "", d.model), []).append(d)
    for (pool, model), nodes in groups.items():
        racks = sorted({d.rack for d in nodes if d.rack})
        where = (
            f" {prep} {racks[0]}" + (f" … {racks[-1]} ({len(racks)} racks)" if len(racks) > 1 else "")
            if racks
            else ""
        )
        lines.append(
            f"  {sign} {len(nodes):,} node(s) of pool {pool} ({model}): "
            f"{compress([d.name for d in nodes])}{where}"
        )
    return lines


def _list(items: tuple[str, ...], k: int = 30) -> str:
    return ", ".join(items[:k]) + (f" … (+{len(items) - k:,})" if len(items) > k else "")
