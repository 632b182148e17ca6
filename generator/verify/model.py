"""What the verifier compares: planned cables and discovered links, both as pairs of ``End``s.

An ``End`` names a port the way the plan does: a switch's logical port number (``"17"``) or a node's
``<rdma device>/<port>`` (``"mlx5_3/1"``); a node port whose adapter the site labels (``HCA-4``) prints
both, ``gpu001 HCA-4 (mlx5_3/1)``. Discovered ports that cannot be tied to a plan device
(firmware-default node descriptions, foreign hosts) keep a descriptive label and ``known=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from generator.safetext import inline


class _EndFields(NamedTuple):
    device: str
    port: str
    kind: str = ""  # switch | node | "" (unknown)
    known: bool = True
    sheet: str = ""  # the port as the cabling sheet labels it ("P09/1")
    # nodes: the site's label for the adapter, where the blueprint declares one (pools[].ports[].label)
    site: str = ""


class End(_EndFields):
    """A port: equal, hashed and ordered by (device, port) alone, the other fields are how it is shown. A
    tuple (built ~3x faster than a frozen dataclass; a 100k-GPU fabric has ~600k ends)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not End:
            return NotImplemented
        return self[0] == other[0] and self[1] == other[1]

    def __ne__(self, other: object) -> bool:
        if type(other) is not End:
            return NotImplemented
        return self[0] != other[0] or self[1] != other[1]

    def __hash__(self) -> int:
        return hash((self[0], self[1]))

    def _key(self, other: object) -> tuple[tuple[str, str], tuple[str, str]] | None:
        return ((self[0], self[1]), (other[0], other[1])) if type(other) is End else None

    def __lt__(self, other: object) -> bool:
        keys = self._key(other)
        return NotImplemented if keys is None else keys[0] < keys[1]

    def __le__(self, other: object) -> bool:
        keys = self._key(other)
        return NotImplemented if keys is None else keys[0] <= keys[1]

    def __gt__(self, other: object) -> bool:
        keys = self._key(other)
        return NotImplemented if keys is None else keys[0] > keys[1]

    def __ge__(self, other: object) -> bool:
        keys = self._key(other)
        return NotImplemented if keys is None else keys[0] >= keys[1]

    def text(self) -> str:
        """The end as a report line names it. Its device and port may be foreign text (an LLDP interface
        name or port description, a node description): controls are shown escaped so that a line break in
        them cannot start a report line of its own; ``as_dict`` keeps them exact (JSON escapes them)."""
        device, port = inline(self.device), inline(self.port)
        if self.kind == "node" and self.known:
            # the site's name first (what is written on the cable), the RDMA device/port the hosts use after
            return f"{device} {self.site} ({port})" if self.site else f"{device} {port}"
        # twin-port cages: the sheet's cage/sub-port label next to the logical port number
        extra = f" [{self.sheet}]" if self.sheet and self.sheet != f"P{self.port}" else ""
        return f"{device} port {port}{extra}"

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "port": self.port,
            "identified": self.known,
            "sheet_port": self.sheet or None,
            # only where declared: reports of plans without site labels keep their keys
            **({"site_label": self.site} if self.site else {}),
        }


# The per-cable records below are NamedTuples: a 100k-GPU fabric makes ~300k of each, and a tuple is
# built ~4x faster than a frozen dataclass (which sets every field through object.__setattr__).


class ExpectedCable(NamedTuple):
    id: str
    a: End
    b: End
    rate: str | None = None  # "4xNDR"; None = not checked (Ethernet, or no catalogue rate)
    layer: str = ""


class FoundLink(NamedTuple):
    a: End
    b: End
    rate: str | None = None  # as reported ("4xHDR", "2xNDR", "4x???"); None = not reported
    where: str = ""  # source location, e.g. "ibnetdiscover.out:123"


class SeenNode(NamedTuple):
    """A node record of an ibnetdiscover dump."""

    key: str  # normalised node id: "0x<guid>" or the raw id for GUID-less (ibsim-style) files
    kind: str  # switch | ca | router
    desc: str  # NodeDescription as printed ("" when the dump has none)
    guid: int | None
    nports: int = 0
    devid: int | None = None


class SeenLink(NamedTuple):
    """One port-to-port connection of an ibnetdiscover dump (deduplicated over both ends)."""

    a_node: str
    a_port: int
    b_node: str
    b_port: int
    width: str | None
    speed: str | None
    line: int

    @property
    def rate(self) -> str | None:
        if self.width is None and self.speed is None:
            return None
        return f"{self.width or '??'}{self.speed or '???'}"


@dataclass
class IbDiscovery:
    source: str
    format: str  # "ibnetdiscover" | "ibnetdiscover -p"
    nodes: dict[str, SeenNode]
    links: list[SeenLink]
    warnings: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)  # node keys left out (SHARP aggregation nodes)
    # (node key, port) → port GUID, where the default format prints one (HCA ports): a node-name map keyed
    # by port GUIDs names these nodes too (an `ibnetdiscover -p` dump keys its HCAs by port GUID already)
    port_guids: dict[tuple[str, int], int] = field(default_factory=dict)


class LldpNeighbor(NamedTuple):
    """One neighbour entry of ``lldpcli show neighbors`` on a device (a tuple, as the per-cable records
    above: up to 800,000 of them are read, and a frozen dataclass took a fifth of the reader's own time)."""

    local_device: str  # from the file name (the device lldpcli ran on)
    local_port: str  # interface name
    chassis_name: str | None
    chassis_id: str | None
    port_id_type: str | None
    port_id: str | None
    port_descr: str | None
    where: str


class DiscoveryError(ValueError):
    """The discovered input cannot be used (unreadable, not a known format, empty)."""


MAX_KEPT_WARNINGS = 1000  # warnings a reader keeps of one foreign file; the rest are counted in one line
MAX_LINE = 4096  # an IB NodeDescription is at most 64 bytes (IBTA NodeDescription); a record line ~300


# A hostile dump can make thousands of nodes claim one name: each refusal names a few of the others, and a
# refusal lists a bounded number of lines (listing every other claimant on every line grew as k², 6 GB of
# message text from a 1 MB dump).
MAX_OTHERS_NAMED = 5
T = TypeVar("T")
MAX_PROBLEMS_LISTED = 1000


def others_named(group: Sequence[T], me: T, where: Callable[[T], str]) -> str:
    """Where the members of ``group`` other than ``me`` are: the first few, then how many more (constant
    work per member however large the group)."""
    shown = [where(g) for g in group[: MAX_OTHERS_NAMED + 1] if g is not me][:MAX_OTHERS_NAMED]
    rest = len(group) - 1 - len(shown)
    return ", ".join(shown) + (f" and {rest:,} more" if rest > 0 else "")


def problems_text(problems: list[str]) -> str:
    """Problem lines, the first MAX_PROBLEMS_LISTED of them and a count of the rest."""
    rest = len(problems) - MAX_PROBLEMS_LISTED
    return "\n".join(problems[:MAX_PROBLEMS_LISTED]) + (f"\n… and {rest:,} more" if rest > 0 else "")
