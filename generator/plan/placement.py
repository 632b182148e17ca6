"""Racks in rows, devices in rack units, under each rack's power and space budget.

Compute units (a scalable unit, a dragonfly group, a leaf's nodes) fill the site from the front in
row-major order: each starts a fresh rack and keeps its leaves in a network rack right after its compute
racks, so node-leaf runs stay short (``site.switch_placement``: or at the top of its last compute rack,
sharing it with nodes, or in a network rack in the middle of its compute racks). Spines, cores and the
pools without compute ports fill the site from the back. Adding a unit therefore appends racks at the
front block and moves nothing already placed.

A small site (a lab) is the exception: when every node and every switch fit one rack by units and power
(and each pool's ``nodes_per_rack`` allows it), they all go into that one rack, nodes from the bottom and
switches above them, so that no rack is bought for one switch and the cables inside it are short copper
(``shares_one_rack``). A site that sets ``switch_placement: network-rack`` or ``middle-of-row`` keeps its
separate network racks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from blueprints.models.site import Site

if TYPE_CHECKING:
    from blueprints.catalog.schema import Switch
    from generator.resolve import ResolvedPool


class PlacementError(ValueError):
    pass


def default_rack_id(row: int, position: int) -> str:
    """The tool's rack id when the site names none: ``r01-05`` = row 1, position 5."""
    return f"r{row:02d}-{position:02d}"


@dataclass
class PlacedRack:
    """A rack while devices are placed in it."""

    row: int
    position: int
    units: int
    usable: int
    budget_kw: float
    purpose: str
    devices: list[tuple[str, int, int]] = field(default_factory=list)  # (name, u, height)
    used: int = 0
    power: float = 0.0
    slot: int = 0  # row-major index in the site
    drawn: int = 0  # the devices' draw in milliwatts (watts()), compared exactly by fits()
    name: str = ""  # the site's name for the rack (site.rack_names), "" = the default id

    @property
    def id(self) -> str:
        return self.name or default_rack_id(self.row, self.position)

    def fits(self, height: int, power_kw: float) -> bool:
        return self.used + height <= self.usable and self.drawn + watts(power_kw) <= watts(self.budget_kw)

    def put(self, name: str, height: int, power_kw: float) -> int:
        u = self.used + 1
        self.devices.append((name, u, height))
        self.used += height
        self.power += power_kw
        self.drawn += watts(power_kw)
        return u


def watts(kw: float) -> int:
    """kW as whole milliwatts (round(kW × 10⁶)): budgets and draws compared exactly, so that a rack holds
    the same number of servers in the rules, the rack count and the allocator (floats made them disagree)."""
    return round(kw * 1_000_000)


def servers_per_rack(site: Site, height: int, power_kw: float) -> int:
    """Servers of ``height`` U drawing ``power_kw`` each that one rack of the site holds by space and power
    (0: not even one). The one computation of rack fit: the PWR rules and the plan's rack count read it,
    and RackAllocator.fits() admits exactly this many."""
    by_space = (site.rack.units - site.rack.reserved_units) // height if height > 0 else 0
    if power_kw <= 0:  # cloud instances draw nothing from the blueprint's racks
        return max(0, by_space)
    return max(0, min(by_space, watts(site.rack.power_kw) // watts(power_kw)))


class Demand(NamedTuple):
    """Devices of one kind a site must rack: how many, their height and draw, and at most how many of them
    one rack may hold (a pool's ``nodes_per_rack``; None: as many as fit)."""

    quantity: int
    height: int
    power_kw: float
    per_rack: int | None = None


def pool_demand(pool: ResolvedPool, count: int | None = None) -> Demand:
    """``count`` of the pool's nodes (default: all) as the allocator racks them."""
    server = pool.server
    return Demand(
        pool.count if count is None else count, server.rack_units, server.power_kw, pool.nodes_per_rack
    )


def switch_demand(model: Switch) -> Demand:
    """One switch of a catalogue model (``power_w`` in W) as the allocator racks it."""
    return Demand(1, model.rack_units, model.power_w / 1000)


def racks_for(site: Site, demand: Demand) -> int:
    """Racks ``demand`` fills on its own: ceil(quantity / per rack), per rack = min(servers_per_rack,
    per_rack); 0 when not even one fits (PWR001/PWR002 report that device). The one pool rack count: PWR003
    and the planner's row keeping read it."""
    fit = servers_per_rack(site, demand.height, demand.power_kw)
    per = min(fit, demand.per_rack or fit)
    return -(-demand.quantity // per) if per > 0 else 0


def shares_one_rack(site: Site, demands: Iterable[Demand]) -> bool:
    """Whether the site is small enough for one rack: the demands together within one rack's usable units
    and power budget (whole milliwatts, as ``PlacedRack.fits`` adds them up), no pool above its
    ``nodes_per_rack``, and no separate network rack asked for (``site.switch_placement`` left at its
    default or set to top-of-rack). The allocator then puts everything there (``RackAllocator(one_rack=)``)
    and PWR003 counts one rack: the rule and the placement read this one answer."""
    explicit = "switch_placement" in getattr(site, "model_fields_set", ())
    if explicit and getattr(site, "switch_placement", "") != "top-of-rack":
        return False
    if getattr(site, "network_racks", None):  # the site says it has network racks (shared by units)
        return False
    units = site.rack.units - site.rack.reserved_units
    budget = watts(site.rack.power_kw)
    for d in demands:
        if d.per_rack is not None and d.quantity > d.per_rack:
            return False
        units -= d.quantity * d.height
        budget -= d.quantity * watts(d.power_kw)
        if units < 0 or budget < 0:
            return False
    return True


@dataclass(frozen=True)
class Placed:
    """A device's rack and lowest rack unit."""

    rack: str
    u: int


class RackAllocator:
    def __init__(self, site: Site, one_rack: bool = False) -> None:
        """``one_rack``: the site shares one rack (``shares_one_rack``): every rack asked for is that one,
        in the first slot, so units, their switches and the central switches land in it in placing order."""
        self.site = site
        self.one_rack = one_rack
        self.racks: list[PlacedRack] = []
        self.capacity = site.rows * site.racks_per_row
        self.front = 0
        self.back = 0
        self.beyond = 0  # racks asked for past the site's slots: counted on, so the refusal says how many
        self.reserved: set[int] = set()  # slots the site named for shared network racks (site.network_racks)
        # the site's rack names by row-major slot (site.rack_names), rendered once per plan
        named = getattr(site, "rack_names", None)  # a Site; tests pass bare namespaces
        self.names = named.all(site.rows, site.racks_per_row) if named else None

    def new_rack(self, purpose: str, from_end: bool = False) -> PlacedRack:
        if self.one_rack and self.racks:
            shared = self.racks[0]
            if shared.purpose != purpose:
                shared.purpose = "mixed"
            return shared
        from_end = from_end and not self.one_rack
        n = self.next_slot(from_end)
        while n in self.reserved:  # a slot the site gave a shared network rack: filled by open_rack only
            n = self.next_slot(from_end)
        return self.open_rack(n, purpose)

    def next_slot(self, from_end: bool) -> int:
        """The next slot of the front or back fill (past the site's: counted, refused by check_capacity)."""
        if self.front + self.back >= self.capacity:  # off the site: check_capacity() refuses the layout
            n = self.capacity + self.beyond
            self.beyond += 1
        elif from_end:
            n = self.capacity - 1 - self.back
            self.back += 1
        else:
            n = self.front
            self.front += 1
        return n

    def open_rack(self, n: int, purpose: str) -> PlacedRack:
        """A new rack in slot ``n`` (row-major): the fill's next slot, or one the site named for a shared
        network rack (``site.network_racks[].rack``, kept out of the fill by ``reserved``)."""
        row, pos = divmod(n, self.site.racks_per_row)
        spec = self.site.rack
        rack = PlacedRack(
            row + 1,
            pos + 1,
            spec.units,
            spec.units - spec.reserved_units,
            spec.power_kw,
            purpose,
            slot=n,
            name=self.names[n] if self.names and n < self.capacity else "",
        )
        self.racks.append(rack)
        return rack

    def check_capacity(self) -> None:
        """Refuse a layout that ran past the site's slots, with the racks it takes by purpose."""
        if not self.beyond:
            return
        kinds: dict[str, int] = {}
        for rack in self.racks:
            kinds[rack.purpose] = kinds.get(rack.purpose, 0) + 1
        parts = ", ".join(f"{n} {purpose}" for purpose, n in sorted(kinds.items()))
        site = self.site
        raise PlacementError(
            f"the design needs {len(self.racks)} racks ({parts}) but the site has {site.rows} row(s) x "
            f"{site.racks_per_row} racks = {self.capacity}"
        )

    def place_nodes(
        self,
        names: list[str],
        height: int,
        power_kw: float,
        per_rack: int | None,
        placed: dict[str, Placed],
        from_end: bool = False,
    ) -> None:
        """Nodes of one unit: fresh racks, at most ``per_rack`` each (default: as many as fit)."""
        spec = self.site.rack
        if height > spec.units - spec.reserved_units:
            raise PlacementError(
                f"a {height}U server does not fit a {spec.units}U rack with {spec.reserved_units}U reserved"
            )
        if power_kw > spec.power_kw:
            raise PlacementError(
                f"one server draws {power_kw:g} kW, more than the rack budget of {spec.power_kw:g} kW"
            )
        rack: PlacedRack | None = None
        in_rack = 0
        for name in names:
            if (
                rack is None
                or (per_rack is not None and in_rack >= per_rack)
                or not rack.fits(height, power_kw)
            ):
                if (
                    rack is not None
                    and per_rack is not None
                    and in_rack < per_rack
                    and not rack.fits(height, power_kw)
                ):
                    raise PlacementError(
                        f"{per_rack} servers of {height}U / {power_kw:g} kW do not fit one rack "
                        f"({spec.units - spec.reserved_units}U usable, {spec.power_kw:g} kW budget)"
                    )
                rack = self.new_rack("compute", from_end)
                in_rack = 0
            placed[name] = Placed(rack.id, rack.put(name, height, power_kw))
            in_rack += 1

    def place_switches(
        self,
        items: list[tuple[str, int, float]],
        placed: dict[str, Placed],
        purpose: str = "network",
        from_end: bool = False,
        share: PlacedRack | None = None,
    ) -> None:
        """Switches into network racks; ``share``: a compute rack to fill first (top of rack)."""
        rack: PlacedRack | None = None
        for name, height, power_kw in items:
            if share is not None and share.fits(height, power_kw):
                share.purpose = "mixed"
                placed[name] = Placed(share.id, share.put(name, height, power_kw))
                continue
            share = None  # once one does not fit, the rest go to a network rack together
            if rack is None or not rack.fits(height, power_kw):
                rack = self.new_rack(purpose, from_end)
                if not rack.fits(height, power_kw):
                    raise PlacementError(
                        f"switch {name} ({height}U, {power_kw:g} kW) does not fit an empty rack"
                    )
            placed[name] = Placed(rack.id, rack.put(name, height, power_kw))

    def move_network_racks_to_middle(self, first: int, placed: dict[str, Placed]) -> None:
        """Middle of row: the network racks allocated last for the unit whose racks start at
        ``self.racks[first]`` take the slots in the middle of its compute racks (front-filled units)."""
        unit = self.racks[first:]
        compute = [r for r in unit if r.purpose != "network"]
        network = [r for r in unit if r.purpose == "network"]
        if not compute or not network:
            return
        half = (len(compute) + 1) // 2
        slots = sorted(r.slot for r in unit)
        for rack, slot in zip([*compute[:half], *network, *compute[half:]], slots, strict=True):
            if rack.slot == slot:
                continue
            rack.slot = slot
            row, pos = divmod(slot, self.site.racks_per_row)
            rack.row, rack.position = row + 1, pos + 1
            for name, u, _ in rack.devices:
                placed[name] = Placed(rack.id, u)

    def start_unit_in_row(self, racks_needed: int) -> None:
        """Keep a front-filled unit inside one row when it fits a row but not what is left of this one
        (the skipped racks stay empty): its node-leaf runs then never cross an aisle."""
        if self.one_rack:
            return
        per_row = self.site.racks_per_row
        left = per_row - self.front % per_row
        if left < racks_needed <= per_row and self.front + left + racks_needed + self.back <= self.capacity:
            self.front += left


def put_in_rack(
    racks: list[PlacedRack], rack_id: str, name: str, height: int, power_kw: float, placed: dict[str, Placed]
) -> str | None:
    """One more device (an appliance on fabric switch ports) on top of what a placed rack holds; the reason
    it cannot go there (no such rack, no room) or None when placed."""
    rack = next((r for r in racks if r.id == rack_id), None)
    if rack is None:
        return f"the plan has no rack `{rack_id}` (`blueprint plan` lists its racks)"
    if not rack.fits(height, power_kw):
        return (
            f"rack {rack_id} has no room for {height}U / {power_kw:g} kW "
            f"({rack.used}/{rack.usable}U used, {rack.power:g} of {rack.budget_kw:g} kW)"
        )
    placed[name] = Placed(rack.id, rack.put(name, height, power_kw))
    return None
