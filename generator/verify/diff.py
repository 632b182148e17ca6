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
from dataclasses import dataclass, field

from generator.plan.model import Plan
from generator.verify.model import End, ExpectedCable, FoundLink

STATUSES = ("miswired", "missing", "absent", "rate", "unexpected", "ok")


@dataclass(frozen=True)
class CableResult:
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


def _dedupe(found: list[FoundLink]) -> list[FoundLink]:
    """One link per pair of ends (LLDP sees a switch–switch cable from both switches)."""
    seen: dict[frozenset[End], int] = {}
    out: list[FoundLink] = []
    for fl in found:
        key = frozenset((fl.a, fl.b))
        if key in seen:
            i = seen[key]
            if out[i].rate is None and fl.rate is not None:
                out[i] = FoundLink(out[i].a, out[i].b, fl.rate, out[i].where)
            continue
        seen[key] = len(out)
        out.append(fl)
    return out


def _other(fl: FoundLink, end: End) -> End:
    return fl.b if fl.a == end else fl.a


def _ends_index(found: list[FoundLink]) -> dict[End, list[int]]:
    """End → indexes of the found links touching it."""
    at: dict[End, list[int]] = {}
    for i, fl in enumerate(found):
        at.setdefault(fl.a, []).append(i)
        if fl.b != fl.a:
            at.setdefault(fl.b, []).append(i)
    return at


def _matched(cab: ExpectedCable, fl: FoundLink) -> CableResult:
    """A planned cable found between exactly its two ends: ok, or came up at another rate."""
    want, got = _norm_rate(cab.rate), _norm_rate(fl.rate)
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
    return CableResult(
        "ok", cab.id, cab.a, cab.b, "ok", expected_rate=want, found_rate=got, where=(fl.where,)
    )


def _miswired(cab: ExpectedCable, found: list[FoundLink], la: list[int], lb: list[int]) -> CableResult:
    """A planned cable whose ends are connected, but not to each other."""
    peer_a = _other(found[la[0]], cab.a) if la else None
    peer_b = _other(found[lb[0]], cab.b) if lb else None
    parts = []
    for near, peer, planned in ((cab.a, peer_a, cab.b), (cab.b, peer_b, cab.a)):
        if peer is None:
            parts.append(f"{near.text()} is not connected, plan says {planned.text()}")
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


def compare(
    expected: list[ExpectedCable],
    found: list[FoundLink],
    *,
    fabric: str = "",
    source: str = "",
) -> Verification:
    """Each planned cable as ok / rate / missing / miswired, then every found link no cable explains."""
    links = _dedupe(found)
    at = _ends_index(links)
    explained: set[int] = set()
    results: list[CableResult] = []
    rate_unchecked = 0
    for cab in expected:
        la, lb = at.get(cab.a, []), at.get(cab.b, [])
        exact = [i for i in la if {links[i].a, links[i].b} == {cab.a, cab.b}]
        if exact:
            explained.add(exact[0])
            result = _matched(cab, links[exact[0]])
            if result.status == "ok" and result.expected_rate and not result.found_rate:
                rate_unchecked += 1  # the dump printed no width/speed for this link
        elif not la and not lb:
            message = f"{cab.a.text()} — {cab.b.text()}: no link at either end"
            result = CableResult("missing", cab.id, cab.a, cab.b, message, expected_rate=_norm_rate(cab.rate))
        else:
            explained.update((*la, *lb))
            result = _miswired(cab, links, la, lb)
        results.append(result)
    results += [_unexpected(fl) for i, fl in enumerate(links) if i not in explained]
    order = {s: i for i, s in enumerate(STATUSES)}
    results.sort(key=lambda r: (order[r.status], r.cable or "", r.a.device, r.a.port, r.b.device, r.b.port))
    return Verification(fabric, source, results, len(expected), len(links), rate_unchecked=rate_unchecked)


def collapse_absent(v: Verification, discovered: set[str], switches: set[str]) -> Verification:
    """The missing cables of each planned switch that was not discovered at all, as one ``absent`` finding
    with their count (a leaf never installed is one line, not 36)."""
    gone: dict[str, list[CableResult]] = {}
    keep: list[CableResult] = []
    for r in v.results:
        absent = [e.device for e in (r.a, r.b) if e.device in switches and e.device not in discovered]
        if r.status == "missing" and absent:
            gone.setdefault(absent[0], []).append(r)
        else:
            keep.append(r)
    for sw, rs in sorted(gone.items()):
        ids = tuple(sorted(r.cable for r in rs if r.cable))
        message = f"{sw} was not discovered: its {len(rs)} planned cable(s) are missing"
        keep.append(CableResult("absent", None, End(sw, "", "switch"), End("", ""), message, cables=ids))
    order = {s: i for i, s in enumerate(STATUSES)}
    keep.sort(key=lambda r: (order[r.status], r.cable or "", r.a.device, r.a.port, r.b.device, r.b.port))
    v.results = keep
    return v


def expected_cables(plan: Plan, fabric: str, *, sim_speed: str | None = None) -> list[ExpectedCable]:
    """The fabric's planned cables as ends, with the InfiniBand rate each should report."""
    devices = plan.device_by_name

    def end(device: str, port: str) -> End:
        d = devices.get(device)
        return End(device, port, d.kind if d else "")

    rf = plan.cluster.fabrics[fabric]
    if rf.kind == "infiniband":
        from generator.emit.ibnetdiscover import expected_links

        out = []
        for el in expected_links(plan, fabric):
            rate = f"{el.width}{sim_speed or el.speed}" if el.width and el.speed else None
            out.append(
                ExpectedCable(el.id, end(el.a.device, el.a.port), end(el.b.device, el.b.port), rate, el.layer)
            )
        return out
    return [
        ExpectedCable(
            link.id, end(link.a.device, link.a.port), end(link.b.device, link.b.port), None, link.layer
        )
        for link in plan.links_of(fabric)
    ]
