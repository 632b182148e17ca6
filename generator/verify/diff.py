"""Plan vs discovered, per cable and from both ends.

Each planned cable is looked up at *both* of its ends: what is port A connected to, what is port
B connected to. This catches what a GUID-level comparison (``ibnetdiscover --diff``) cannot: two
parallel leaf–spine cables crossed between ports of the same pair of switches still connect the
same two GUIDs, but port 63 now reaches the spine's port 2 instead of port 1.

Statuses: ``ok``; ``missing`` (neither end connected to anything); ``miswired`` (at least one
end connected elsewhere or dangling — both ends are described); ``rate`` (right ports, wrong
width/speed); ``unexpected`` (a discovered link neither of whose ends is a planned port); ``absent`` (a
planned switch not discovered at all: one finding with its count of missing cables, not one per cable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

from generator.plan.model import Link, Plan
from generator.verify.model import End, ExpectedCable, FoundLink

STATUSES = ("miswired", "missing", "absent", "rate", "unexpected", "ok")


class CableResult(NamedTuple):
    """One finding (a NamedTuple: one per planned cable, ~300k at 100k GPUs, built ~4x faster than a frozen
    dataclass)."""

    status: str
    cable: str | None  # plan cable id; None for unexpected links
    a: End
    b: End
    message: str
    found_a: End | None = None  # what plan end a is connected to (miswired), None = nothing
    found_b: End | None = None
    expected_rate: str | None = None
    found_rate: str | None = None
    where: tuple[str, ...] = ()  # source locations of the discovered links involved
    accepted: str = ""  # why the site acknowledged this difference (verify-cabling --accept)
    cables: tuple[str, ...] = ()  # absent: the planned cables of the device not discovered

    def as_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "cable": self.cable,
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "a_connected_to": self.found_a.as_dict() if self.found_a else None,
            "b_connected_to": self.found_b.as_dict() if self.found_b else None,
            "expected_rate": self.expected_rate,
            "found_rate": self.found_rate,
            "message": self.message,
            "source": list(self.where),
            "accepted": self.accepted or None,
            **({"cables": list(self.cables)} if self.status == "absent" else {}),
        }


@dataclass
class Verification:
    fabric: str
    source: str
    results: list[CableResult]
    planned: int
    discovered: int
    unidentified: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rate_unchecked: int = 0  # matched cables whose dump printed no width/speed
    accepted_from: str = ""  # the accept file applied, if any
    lldp: bool = False  # read from LLDP (hints name LLDP's settings, not InfiniBand's)

    @property
    def counts(self) -> dict[str, int]:
        """Cables per status, acknowledged ones left out (they are counted by ``accepted``); switches not
        discovered are counted by ``absent``."""
        c = Counter(r.status for r in self.results if not r.accepted)
        return {s: c.get(s, 0) for s in STATUSES if s != "absent"}

    @property
    def absent(self) -> int:
        return sum(1 for r in self.results if r.status == "absent" and not r.accepted)

    @property
    def accepted(self) -> int:
        return sum(1 for r in self.results if r.accepted)

    @property
    def clean(self) -> bool:
        """Nothing differs from the plan but what the site acknowledged."""
        return all(r.status == "ok" or r.accepted for r in self.results)

    @property
    def discrepancies(self) -> list[CableResult]:
        return [r for r in self.results if r.status != "ok" and not r.accepted]


def _norm_rate(rate: str | None) -> str | None:
    if rate is None:
        return None
    i = rate.lower().find("x")
    return rate[: i + 1].lower() + rate[i + 1 :].upper() if i >= 0 else rate.upper()


_Pair = tuple[tuple[str, str], tuple[str, str]]  # a link's two ends as (device, port), in order


def _pair(a: End, b: End) -> _Pair:
    """The ends of a link as an unordered pair: Ends are equal by (device, port), and tuples of strings hash
    and compare in C where an End's dataclass __hash__ and __eq__ run Python code."""
    ka, kb = (a.device, a.port), (b.device, b.port)
    return (ka, kb) if ka <= kb else (kb, ka)


def _dedupe(found: list[FoundLink]) -> tuple[list[FoundLink], list[_Pair]]:
    """One link per pair of ends (LLDP sees a switch–switch cable from both switches), and each one's pair."""
    seen: dict[_Pair, int] = {}
    out: list[FoundLink] = []
    pairs: list[_Pair] = []
    for fl in found:
        key = _pair(fl.a, fl.b)
        i = seen.get(key)
        if i is not None:
            if out[i].rate is None and fl.rate is not None:
                out[i] = FoundLink(out[i].a, out[i].b, fl.rate, out[i].where)
            continue
        seen[key] = len(out)
        out.append(fl)
        pairs.append(key)
    return out, pairs


def _other(fl: FoundLink, end: End) -> End:
    return fl.b if fl.a == end else fl.a


def _ends_index(pairs: list[_Pair]) -> dict[tuple[str, str], int | list[int]]:
    """(device, port) → the index of the found link touching it, or the list of them when several do (an
    end has one link but where the fabric differs: a list per end would be 600k lists at 100k GPUs)."""
    at: dict[tuple[str, str], int | list[int]] = {}
    for i, (ka, kb) in enumerate(pairs):
        for k in (ka,) if kb == ka else (ka, kb):
            held = at.setdefault(k, i)
            if held != i:
                if isinstance(held, int):
                    at[k] = [held, i]
                else:
                    held.append(i)
    return at


def _links_at(at: dict[tuple[str, str], int | list[int]], end: End) -> Sequence[int]:
    held = at.get((end.device, end.port))
    return () if held is None else (held,) if isinstance(held, int) else held


def _matched(cab: ExpectedCable, fl: FoundLink, want: str | None, got: str | None) -> CableResult:
    """A planned cable found between exactly its two ends: ok, or came up at another rate (``want``, ``got``:
    the two rates normalised)."""
    if want and got and want != got:
        unknown = (
            " (this infiniband-diags cannot name the speed: XDR needs a newer rdma-core)"
            if got.endswith("???")
            else ""
        )
        message = f"{cab.a.text()} — {cab.b.text()} came up {got}, plan says {want}{unknown}"
        return CableResult(
            "rate", cab.id, cab.a, cab.b, message, expected_rate=want, found_rate=got, where=(fl.where,)
        )
    return CableResult("ok", cab.id, cab.a, cab.b, "ok", None, None, want, got, (fl.where,))


class _Strays:
    """The found links at host ports that are no planned end (a name identification could not tie to a plan
    port), by host: built on first use, when a planned host port has nothing at it."""

    def __init__(self, expected: list[ExpectedCable], found: list[FoundLink]) -> None:
        self._expected, self._found = expected, found
        self._by_device: dict[str, list[tuple[End, End]]] | None = None

    def at(self, device: str) -> list[tuple[End, End]]:
        """(the host's port as reported, what it goes to) for ``device``."""
        if self._by_device is None:
            planned = {(e.device, e.port) for cab in self._expected for e in (cab.a, cab.b)}
            self._by_device = {}
            for fl in self._found:
                for near, far in ((fl.a, fl.b), (fl.b, fl.a)):
                    if near.known and near.kind == "node" and (near.device, near.port) not in planned:
                        self._by_device.setdefault(near.device, []).append((near, far))
        return self._by_device.get(device, [])


def _unseen(near: End, planned: End, strays: _Strays | None) -> str:
    """What is said of a planned end with nothing at it: not connected, or, where the host's ports were
    seen under names tied to no plan port, where those go (one of them may be this port's cable)."""
    seen = strays.at(near.device) if strays is not None and near.kind == "node" else []
    if not seen:
        return f"{near.text()} is not connected, plan says {planned.text()}"
    named = "; ".join(f"{port.text()} goes to {far.text()}" for port, far in sorted(seen)[:3])
    more = f" and {len(seen) - 3} more" if len(seen) > 3 else ""
    return (
        f"{near.text()} was not seen under its plan name ({near.device}'s ports seen under names tied to no "
        f"plan port: {named}{more}), plan says {planned.text()}"
    )


def _miswired(
    cab: ExpectedCable,
    found: list[FoundLink],
    la: Sequence[int],
    lb: Sequence[int],
    strays: _Strays | None = None,
) -> CableResult:
    """A planned cable whose ends are connected, but not to each other."""
    peer_a = _other(found[la[0]], cab.a) if la else None
    peer_b = _other(found[lb[0]], cab.b) if lb else None
    parts = []
    for near, peer, planned in ((cab.a, peer_a, cab.b), (cab.b, peer_b, cab.a)):
        if peer is None:
            parts.append(_unseen(near, planned, strays))
        else:
            parts.append(f"{near.text()} goes to {peer.text()}, plan says {planned.text()}")
    where = tuple(sorted({found[i].where for i in (*la, *lb)}))
    return CableResult(
        "miswired", cab.id, cab.a, cab.b, "; ".join(parts), peer_a, peer_b, _norm_rate(cab.rate), None, where
    )


def _unexpected(fl: FoundLink) -> CableResult:
    a, b = sorted((fl.a, fl.b), key=lambda e: (not e.known, e.device, e.port))
    message = f"{a.text()} — {b.text()}: link not in the plan"
    return CableResult("unexpected", None, a, b, message, found_rate=_norm_rate(fl.rate), where=(fl.where,))


def _contradicted(
    cab: ExpectedCable, found: list[FoundLink], exact: int, la: Sequence[int], lb: Sequence[int]
) -> CableResult:
    """A planned cable found between its two ends, one of whose ends is also reported connected elsewhere:
    an InfiniBand port has one peer, so the discovery contradicts itself there (two dumps joined, a cable
    moved during the sweep, a file edited) and the cable is not verified."""
    parts = []
    for near, held in ((cab.a, la), (cab.b, lb)):
        also = sorted({_other(found[i], near).text() for i in held if i != exact})
        if also:
            # a dump may claim a port many times: five are named
            more = f" and {len(also) - 5:,} more" if len(also) > 5 else ""
            parts.append(f"{near.text()} is also reported connected to {', '.join(also[:5])}{more}")

    def peer(near: End, held: Sequence[int], planned: End) -> End:
        """What ``near`` is reported connected to besides its planned end (the planned end if nothing)."""
        other = next((i for i in held if i != exact), None)
        return planned if other is None else _other(found[other], near)

    message = (
        f"{cab.a.text()} — {cab.b.text()} found, but " + "; ".join(parts) + ": the discovery contradicts "
        "itself at this port (re-run it on a settled fabric)"
    )
    where = tuple(sorted({found[i].where for i in (*la, *lb)}))
    return CableResult(
        "miswired",
        cab.id,
        cab.a,
        cab.b,
        message,
        peer(cab.a, la, cab.b),
        peer(cab.b, lb, cab.a),
        _norm_rate(cab.rate),
        None,
        where,
    )


def compare(
    expected: list[ExpectedCable],
    found: list[FoundLink],
    *,
    fabric: str = "",
    source: str = "",
    single_peer: bool = False,
) -> Verification:
    """Each planned cable as ok / rate / missing / miswired, then every found link no cable explains.
    ``single_peer``: a port has one peer (InfiniBand), so a planned cable found whose end is also reported
    connected elsewhere is not ok (LLDP may hear two agents on one port: a NIC's firmware and the host's)."""
    links, pairs = _dedupe(found)
    at = _ends_index(pairs)
    strays = _Strays(expected, links)
    explained: set[int] = set()
    results: list[CableResult] = []
    rate_unchecked = 0
    norm: dict[str | None, str | None] = {None: None}  # _norm_rate of the few rates a fabric reports
    for cab in expected:
        want = _pair(cab.a, cab.b)
        la, lb = _links_at(at, cab.a), _links_at(at, cab.b)
        exact = next((i for i in la if pairs[i] == want), -1)
        if exact >= 0 and single_peer and (len(la) > 1 or len(lb) > 1):
            explained.update((*la, *lb))
            result = _contradicted(cab, links, exact, la, lb)
        elif exact >= 0:
            explained.add(exact)
            fl = links[exact]
            rates = [norm[r] if r in norm else norm.setdefault(r, _norm_rate(r)) for r in (cab.rate, fl.rate)]
            result = _matched(cab, fl, *rates)
            if result.status == "ok" and result.expected_rate and not result.found_rate:
                rate_unchecked += 1  # the dump printed no width/speed for this link
        elif not la and not lb:
            message = f"{cab.a.text()} — {cab.b.text()}: no link at either end"
            result = CableResult("missing", cab.id, cab.a, cab.b, message, expected_rate=_norm_rate(cab.rate))
        else:
            explained.update((*la, *lb))
            result = _miswired(cab, links, la, lb, strays)
        results.append(result)
    results += [_unexpected(fl) for i, fl in enumerate(links) if i not in explained]
    return Verification(
        fabric, source, _in_order(results), len(expected), len(links), rate_unchecked=rate_unchecked
    )


# a planned cable's findings sort by cable id, then by their ends; unexpected links have no id ("" first)
_BY_CABLE = attrgetter("cable", "a.device", "a.port", "b.device", "b.port")


def _result_key(r: CableResult) -> tuple[str, str, str, str, str]:
    return (r.cable or "", r.a.device, r.a.port, r.b.device, r.b.port)


def _in_order(results: list[CableResult]) -> list[CableResult]:
    """By status (STATUSES order), then cable id and ends: one sort per status, the planned cables' (every
    one has an id) by a key read in C."""
    by_status: dict[str, list[CableResult]] = {s: [] for s in STATUSES}
    for r in results:
        by_status[r.status].append(r)
    out: list[CableResult] = []
    for group in by_status.values():
        with_ids = all(r.cable is not None for r in group)
        out += sorted(group, key=_BY_CABLE if with_ids else _result_key)
    return out


def collapse_absent(v: Verification, discovered: set[str], switches: set[str]) -> Verification:
    """The missing cables of each planned switch that was not discovered at all, as one ``absent`` finding
    with their count (a leaf never installed is one line, not 36). A cable between two such switches is
    counted at both: each of them is missing it, and neither may go uncounted."""
    gone: dict[str, list[CableResult]] = {}
    keep: list[CableResult] = []
    for r in v.results:
        absent = (
            [e.device for e in (r.a, r.b) if e.device in switches and e.device not in discovered]
            if r.status == "missing"
            else None
        )
        if absent:
            for sw in absent:
                gone.setdefault(sw, []).append(r)
        else:
            keep.append(r)
    if not gone:
        return v  # nothing collapsed: the results are in order already
    for sw, rs in sorted(gone.items()):
        ids = tuple(sorted(r.cable for r in rs if r.cable))
        message = f"{sw} was not discovered: its {len(rs)} planned cable(s) are missing"
        keep.append(CableResult("absent", None, End(sw, "", "switch"), End("", ""), message, cables=ids))
    v.results = _in_order(keep)
    return v


def expected_cables(
    plan: Plan,
    fabric: str,
    *,
    sim_speed: str | None = None,
    end_of: Callable[[str, str, str], End] = End,
) -> list[ExpectedCable]:
    """The fabric's planned cables as ends, with the InfiniBand rate each should report. ``end_of(device,
    port, kind)`` makes each end (verify passes the plan index's, which labels each end once)."""
    devices = plan.device_by_name

    def end(device: str, port: str) -> End:
        d = devices.get(device)
        return end_of(device, port, d.kind if d else "")

    rf = plan.cluster.fabrics[fabric]
    ib = rf.kind == "infiniband"
    rates: dict[float, str | None] = {}  # by link speed: what generator/emit/ibnetdiscover.py expects
    out = []
    for link in plan.links_of(fabric):
        rate = None
        if ib:
            rate = (
                rates[link.speed_gbps] if link.speed_gbps in rates else _rate(plan, fabric, link, sim_speed)
            )
            rates[link.speed_gbps] = rate
        out.append(
            ExpectedCable(
                link.id, end(link.a.device, link.a.port), end(link.b.device, link.b.port), rate, link.layer
            )
        )
    return out


def _rate(plan: Plan, fabric: str, link: Link, sim_speed: str | None) -> str | None:
    """``4xNDR``: the width and speed ibnetdiscover prints for ``link`` (expected_links' rate, read once per
    speed rather than through an ExpectedLink per cable), the speed ``sim_speed`` if given."""
    from generator.emit.ibnetdiscover import link_rate

    wire = link_rate(plan, fabric, link.speed_gbps)
    return f"{wire[0]}{sim_speed or wire[1]}" if wire and wire[0] and wire[1] else None
