"""Parse ``lldpcli show neighbors -f json`` / ``-f json0`` output (lldpd/lldpd src/client/json_writer.c).

``-f json`` changes shape with the data: one interface is an object keyed by interface name,
several are a list of one-key objects; a chassis with a SysName is ``{"<name>": {...}}``, one
without is the bare object; single values may or may not be wrapped. ``-f json0`` wraps every
element in a list and every scalar in ``{"value": ...}``. Both are normalised here into
``LldpNeighbor`` entries. One file per device; the file name (without extension) names the
device lldpcli ran on, since ``show neighbors`` never prints the local system's name. A file whose
top-level object maps device names to such outputs (``blueprint cabling``'s ``lldp/<fabric>.json``)
holds many devices at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.foreign import ByteBudget, ForeignInputError, parse_json, read_foreign_text
from generator.limits import MAX_LINKS
from generator.verify.model import DiscoveryError, LldpNeighbor

SUFFIXES = (".json", ".json0", ".lldp")
MAX_LLDP_BYTES = 16 * 1024 * 1024  # one device's neighbours: a few KB per port
# all the files of one directory together: a few KB per port of every device of the largest Ethernet
# fabric (~315k links, each seen from both ends at ~1 KB) fits in this
MAX_LLDP_TOTAL = 768 * 1024 * 1024
# neighbour entries in all the files together: the bytes alone allow millions of tiny entries (4 files of
# 16 MB took 2.2 GB and 164 s). A fabric has at most MAX_LINKS // 2 links (the ibnetdiscover reader's
# MAX_SEEN), each seen from both ends: more entries than that is no fabric this tool plans.
MAX_LLDP_NEIGHBORS = MAX_LINKS


def _json(text: str, source: str) -> Any:
    """Standard JSON (generator.foreign.parse_json: no NaN, depth bounded), refusals as DiscoveryError."""
    try:
        return parse_json(text, source) if text.strip() else None
    except ForeignInputError as exc:
        if exc.message.startswith("nested deeper"):
            raise DiscoveryError(f"{exc.where}: JSON nested too deeply for `lldpcli` output") from None
        raise DiscoveryError(
            f"{exc.where}: {exc.message}; expected `lldpcli show neighbors -f json` output"
        ) from None


def _unwrap(x: Any) -> Any:
    """json0 → plain: one-element lists and ``{"value": v}`` objects collapse to their content."""
    while True:
        if isinstance(x, dict):
            if len(x) != 1 or "value" not in x:  # not set(x) == {"value"}: a set built per value read
                return x
            x = x["value"]
        elif isinstance(x, list) and len(x) == 1:
            x = x[0]
        else:
            return x


def _text(x: Any) -> str | None:
    if type(x) is str:  # the -f json case, and what str() of a str gives: no unwrapping to try
        return x
    x = _unwrap(x) if x is not None else x
    if x is None or isinstance(x, (dict, list)):
        return None
    return str(x)


def _id(x: Any) -> tuple[str | None, str | None]:
    if x is None:  # an entry without the field (what _unwrap and _text give it, without the calls)
        return None, None
    x = _unwrap(x)
    if isinstance(x, dict):
        return _text(x.get("type")), _text(x.get("value"))
    return None, _text(x)


def _chassis(raw: Any) -> tuple[str | None, dict[str, Any]]:
    """(SysName, chassis body) for either shape."""
    c = _unwrap(raw) if raw is not None else raw
    if not isinstance(c, dict):
        return None, {}
    if "name" in c or "id" in c or "descr" in c:  # json0, or json without a SysName
        return _text(c.get("name")), c
    if len(c) == 1:
        name, body = next(iter(c.items()))
        body = _unwrap(body)
        return name, body if isinstance(body, dict) else {}
    return None, c


def _interfaces(lldp: Any) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(lldp, list):  # json0: [{"interface": [...]}]
        out: list[tuple[str, dict[str, Any]]] = []
        for block in lldp:
            if isinstance(block, dict):
                out.extend(_interfaces_of(block.get("interface"), json0=True))
        return out
    if isinstance(lldp, dict):
        return _interfaces_of(lldp.get("interface"), json0=False)
    return []


def _interfaces_of(itfs: Any, json0: bool) -> list[tuple[str, dict[str, Any]]]:
    if itfs is None:
        return []
    items = itfs if isinstance(itfs, list) else [itfs]
    out: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if "name" in item and ("chassis" in item or "port" in item or json0):
            name = _text(item["name"])
            if name:
                out.append((name, item))
            continue
        for name, body in item.items():  # json: {"eth0": {...}} or several such keys
            if isinstance(body, dict):
                out.append((name, body))
            elif isinstance(body, list):  # several neighbours on one interface
                out.extend((name, b) for b in body if isinstance(b, dict))
    return out


def parse_lldp_json(text: str, local_device: str, source: str = "<lldp>") -> list[LldpNeighbor]:
    data = _json(text, source)
    return lldp_neighbors(data if data is not None else {"lldp": {}}, local_device, source)


def lldp_neighbors(
    data: Any, local_device: str, source: str, room: int = MAX_LLDP_NEIGHBORS
) -> list[LldpNeighbor]:
    """The neighbour entries of one device's parsed ``lldpcli`` JSON document, at most ``room`` of them."""
    if not isinstance(data, dict) or "lldp" not in data:
        raise DiscoveryError(
            f"{source}: no top-level `lldp` key; expected `lldpcli show neighbors -f json` output"
        )
    entries = _interfaces(data["lldp"])
    if len(entries) > room:
        raise DiscoveryError(
            f"{source}: more than {MAX_LLDP_NEIGHBORS:,} LLDP neighbour entries in the files given: more "
            "than any fabric this tool plans has (each of its cables seen from both ends)"
        )
    out: list[LldpNeighbor] = []
    append = out.append
    for ifname, body in entries:
        name, chassis = _chassis(body.get("chassis"))
        _ctype, cid = _id(chassis.get("id"))
        port = body.get("port")
        port = _unwrap(port) if port is not None else port
        if isinstance(port, dict):
            ptype, pid = _id(port.get("id"))
            descr = _text(port.get("descr"))
        else:
            ptype = pid = descr = None
        append(
            LldpNeighbor(local_device, ifname, name, cid, ptype, pid, descr, f"{source} interface {ifname}")
        )
    return out


def device_name_of(path: Path) -> str:
    name = path.name
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def lldp_files(path: str | Path) -> list[Path]:
    """The files ``read_lldp`` reads: every entry of a directory named as a per-device file, or the one
    file given. Entries that are not regular files (a FIFO, a broken link, a folder) are listed too, for the
    bounded reader to refuse by name: skipped, their device's cables were reported MISSING."""
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.iterdir() if f.name.endswith(SUFFIXES))
    return [p]


def read_lldp(path: str | Path, budget: ByteBudget | None = None) -> list[LldpNeighbor]:
    """A directory of per-device files (``<device>.json``), one such file, or one many-device file; every
    file regular and bounded, all of them together at most MAX_LLDP_TOTAL bytes (or ``budget``)."""
    p = Path(path)
    budget = budget if budget is not None else ByteBudget(MAX_LLDP_TOTAL)
    if p.is_dir():
        files = lldp_files(p)
        if not files:
            raise DiscoveryError(
                f"{p}: no *.json files (one `lldpcli show neighbors -f json` output per device)"
            )
    else:
        files = [p]
    out: list[LldpNeighbor] = []
    for f in files:
        try:
            text = read_foreign_text(f, MAX_LLDP_BYTES, budget)
        except ForeignInputError as exc:
            raise DiscoveryError(str(exc)) from None
        data = _json(text, str(f))
        combined = _combined(data)
        if combined is None:
            doc = data if data is not None else {"lldp": {}}
            out.extend(lldp_neighbors(doc, device_name_of(f), str(f), MAX_LLDP_NEIGHBORS - len(out)))
        else:
            for device, doc in sorted(combined.items()):
                out.extend(lldp_neighbors(doc, device, f"{f} [{device}]", MAX_LLDP_NEIGHBORS - len(out)))
    return out


def _combined(data: Any) -> dict[str, Any] | None:
    """The device → output mapping of a many-device file, or None for one device's own output."""
    if not isinstance(data, dict) or "lldp" in data or not data:
        return None
    if all(isinstance(v, dict) and "lldp" in v for v in data.values()):
        return data
    return None
