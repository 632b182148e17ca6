"""InfiniBand subnet-manager flavours (``data/subnet_managers.yaml``): routing engines and SHARP settings.

``fabrics.<f>.subnet_manager.flavour`` names the SM software; without it ``kind: opensm`` means the
distribution's OpenSM (what ``playbooks/opensm.yml`` installs) and ``kind: ufm`` means UFM. The facts and
their sources live in the YAML; this module types, loads and looks them up.
"""

from functools import cache

from pydantic import BaseModel, ConfigDict

from blueprints.catalog.load import validated_file
from blueprints.models.fabric import SubnetManager

DEFAULT_FLAVOUR = {"opensm": "opensm-upstream", "ufm": "ufm"}  # kind: switch runs the switch's own SM


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class SharpSetting(_Entry):
    opensm_conf: str | None = None  # the opensm.conf line that turns SHARP on in the switches
    cli: str | None = None  # the appliance command that does it
    source: str | None = None  # the document that gives ``cli``, written beside it in the build


class AggregationManager(_Entry):
    package: str | None = None  # the distribution package that ships it (the opensm role installs it)
    prefix: str | None = None  # where that package installs SHARP (bin/, systemd/system/)
    config: str | None = None  # sharp_am.cfg path on the SM host
    service: str | None = None  # systemd unit the role starts
    cli: str | None = None  # appliance command
    source: str | None = None  # the document that gives ``cli``, written beside it in the build


class Flavour(_Entry):
    name: str
    routing_engines: tuple[str, ...]
    routing_engines_complete: bool
    sharp: SharpSetting | None
    aggregation_manager: AggregationManager | None


class SharpRouting(_Entry):
    """The routing engines NVIDIA SHARP's Aggregation Manager works with on one family of topologies."""

    name: str  # the family as NVIDIA's document names it
    topologies: tuple[str, ...]  # the blueprint topology kinds of the family (none: no kind is one)
    routing_engines: tuple[str, ...]
    requires: tuple[str, ...] = ()  # OpenSM settings the document asks for besides the engine


class SlRouting(_Entry):
    """An OpenSM routing engine that uses service levels of its own for deadlock freedom (``sl_routing``)."""

    writes_sl2vl: bool  # it programs the SL2VL maps itself and ignores qos_sl2vl (torus-2QoS)
    unless: str | None = None  # the opensm.conf setting, its default, with which it uses no SL of its own


class _Document(_Entry):
    flavours: dict[str, Flavour]
    sharp_routing: dict[str, SharpRouting]
    sl_routing: dict[str, SlRouting]


@cache
def _document() -> _Document:
    return validated_file(_Document, "subnet_managers.yaml")


def flavour_name(sm: SubnetManager) -> str | None:
    """The flavour the blueprint chose, else the default of its kind (None for a switch-embedded SM)."""
    return sm.flavour or DEFAULT_FLAVOUR.get(sm.kind)


def flavour(sm: SubnetManager) -> Flavour | None:
    name = flavour_name(sm)
    return _document().flavours[name] if name is not None else None


def lacks_engine(sm: SubnetManager, engine: str) -> bool:
    """True when the flavour's documented engine list is complete and ``engine`` is not in it."""
    f = flavour(sm)
    return f is not None and f.routing_engines_complete and engine not in f.routing_engines


def sharp_on(sm: SubnetManager) -> bool:
    """SHARP really on: the blueprint asks for it and the flavour has a setting that turns it on."""
    f = flavour(sm)
    return sm.sharp and f is not None and f.sharp is not None


def sharp_routing_families() -> tuple[SharpRouting, ...]:
    return tuple(_document().sharp_routing.values())


def sharp_routing(topology: str) -> SharpRouting | None:
    """The SHARP routing family of a blueprint topology kind; None when NVIDIA documents no SHARP routing
    for it (a torus, a plain dragonfly)."""
    return next((f for f in sharp_routing_families() if topology in f.topologies), None)


def sl_routing(engine: str) -> SlRouting | None:
    """How an OpenSM routing engine uses service levels of its own (catalogue ``sl_routing``); None when it
    uses none (ftree, updn, minhop, sssp, ...)."""
    return _document().sl_routing.get(engine)
