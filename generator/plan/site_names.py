"""The site's names and port layout applied to a built fabric: switch names from templates or lists,
leaf ports renumbered to the declared layout (hosts on 1-18, uplinks on 33-50 ...).

Runs between the topology builder and placement, so every later stage (placement, cabling sheets,
switch configuration, expected discovery output, verification) sees the site's names and ports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from blueprints.models.naming import NameSource, SwitchNames, layout_misfit, parse_ports, render_template
from generator.topology.base import (
    BuiltFabric,
    ClosParams,
    LeafSpineParams,
    PortRef,
    RawLink,
    SwitchSpec,
    Terminal,
)

if TYPE_CHECKING:
    from generator.resolve import ResolvedFabric


class Layout(Protocol):
    @property
    def down(self) -> str: ...
    @property
    def up(self) -> str: ...


def leaf_port_layout(rf: ResolvedFabric) -> Layout | None:
    """The fabric's leaf port layout: the blueprint's ``port_layout``, else the switch model's catalogue
    layout; None: the logical numbers (1.. down, then up). One choice for the builder's site layout and the
    growth-port reservation (generator/plan/attached.py)."""
    own: Layout | None = getattr(rf.spec.topology, "port_layout", None)
    return own or (rf.switch.port_layout if rf.switch else None)


class SiteLayoutError(ValueError):
    """A name source or port layout does not fit the fabric; ``field`` says which key."""

    def __init__(self, message: str, field: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.field = field


def _values(s: SwitchSpec, k: int, fabric: str, group: str | None) -> dict[str, object]:
    return {
        "fabric": fabric,
        "index": k,
        "su": s.su,
        "rail": s.rail + 1 if s.rail is not None else None,
        "rail0": s.rail,
        "pod": s.pod,
        "group": group,
    }


def _tier_names(
    specs: list[SwitchSpec], source: NameSource, tier: str, fabric: str, groups: Mapping[str, str]
) -> dict[str, str]:
    if source.names is not None:
        if len(source.names) < len(specs):
            raise SiteLayoutError(
                f"{len(source.names)} {tier} names listed for {len(specs)} {tier} switches", (tier, "names")
            )
        listed = {s.name: n for s, n in zip(specs, source.names, strict=False)}
        if len({n.lower() for n in listed.values()}) != len(listed):  # DNS, LLDP and OpenSM ignore case
            raise SiteLayoutError(f"{tier} names list the same name twice (case ignored)", (tier, "names"))
        return listed
    assert source.template is not None
    out = {}
    for k, s in enumerate(specs, start=1):
        try:
            out[s.name] = render_template(source.template, _values(s, k, fabric, groups.get(s.name)))
        except KeyError as exc:
            raise SiteLayoutError(
                f"{tier} template `{source.template}`: {tier} switches of this fabric have no {exc.args[0]}",
                (tier, "template"),
            ) from None
    if len({n.lower() for n in out.values()}) != len(out):  # DNS, LLDP and OpenSM ignore case
        raise SiteLayoutError(
            f"{tier} template `{source.template}` gives two switches the same name; add {{index}}",
            (tier, "template"),
        )
    return out


def switch_renames(built: BuiltFabric, names: SwitchNames | None, fabric: str) -> dict[str, str]:
    """Tool name → site name for every switch a name source covers."""
    if names is None:
        return {}
    groups: Mapping[str, str] = built.params.leaf_unit if isinstance(built.params, LeafSpineParams) else {}
    out: dict[str, str] = {}
    for tier in ("leaf", "spine", "core"):
        source: NameSource | None = getattr(names, tier)
        if source is not None:
            specs = [s for s in built.switches if s.tier == tier]
            out.update(_tier_names(specs, source, tier, fabric, groups))
    return out


class _LeafPorts:
    """Logical leaf port (builder numbering) → the site's port number."""

    def __init__(self, down: list[int], up: list[int], first_up: int, ports: int, uplinks: int) -> None:
        """``ports`` node-facing ports, then ``uplinks`` dedicated uplink ports (SN2201: 48 x 1G, then 4 x
        100G as ports 49-52), numbered after them; a switch without dedicated uplinks has 0."""
        misfit = layout_misfit(down, up, ports, uplinks)
        if misfit is not None:
            key, message = misfit
            raise SiteLayoutError(message, ("port_layout", key) if key else ("port_layout",))
        self.down, self.up, self.first_up = down, up, first_up

    def __call__(self, port: int) -> int:
        if port < self.first_up:
            if port > len(self.down):
                raise SiteLayoutError(
                    f"a leaf uses {port} node ports, the layout lists {len(self.down)}",
                    ("port_layout", "down"),
                )
            return self.down[port - 1]
        k = port - self.first_up
        if k >= len(self.up):
            raise SiteLayoutError(
                f"a leaf uses {k + 1} uplink ports, the layout lists {len(self.up)}", ("port_layout", "up")
            )
        return self.up[k]


def apply_site_layout(
    built: BuiltFabric,
    *,
    fabric: str,
    names: SwitchNames | None,
    layout_down: str | None,
    layout_up: str | None,
) -> BuiltFabric:
    """The fabric with site names and leaf port layout; unchanged when neither is declared."""
    renames = switch_renames(built, names, fabric)
    leaf_ports: _LeafPorts | None = None
    if layout_down is not None and layout_up is not None:
        assert isinstance(built.params, ClosParams)  # port layouts apply to leaf/spine fabrics
        leaves = [s for s in built.switches if s.tier == "leaf"]
        ports = max((s.ports for s in leaves), default=0)
        uplinks = max((s.uplink_ports for s in leaves), default=0)
        leaf_ports = _LeafPorts(
            parse_ports(layout_down), parse_ports(layout_up), built.params.first_up, ports, uplinks
        )
    if not renames and leaf_ports is None:
        return built
    leaf_names = {s.name for s in built.switches if s.tier == "leaf"}

    def ref(r: PortRef) -> PortRef:
        port = r.port
        if leaf_ports is not None and not isinstance(port, Terminal) and r.device in leaf_names:
            port = leaf_ports(port)
        return PortRef(renames.get(r.device, r.device), port)

    links = [RawLink(ref(ln.a), ref(ln.b), ln.layer, ln.rail, ln.speed_gbps, ln.group) for ln in built.links]
    switches = [replace(s, name=renames.get(s.name, s.name)) for s in built.switches]
    params = built.params
    if isinstance(params, LeafSpineParams):
        params = replace(params, leaf_unit={renames.get(k, k): v for k, v in params.leaf_unit.items()})
    return BuiltFabric(built.kind, switches, links, params)
