from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, get_args

from blueprints.models.fabric import RoutingEngine
from generator.findings import Finding, Severity
from generator.resolve import ResolvedFabric
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from blueprints.catalog.subnet_managers import SharpRouting
    from generator.plan.model import Plan

# kind -> the flavours that are that kind of SM (kind: switch runs the switch's own SM: no flavour applies)
KIND_FLAVOURS = {"opensm": ("opensm-upstream", "opensm-nvidia"), "ufm": ("ufm",), "switch": ()}


class SmFlavour(Rule):
    """A routing engine or SHARP setting the chosen subnet manager does not have.

    ``subnet_manager.flavour`` names the SM software (``kind: opensm`` defaults to the distribution's OpenSM
    3.3, which ``playbooks/opensm.yml`` installs; ``kind: ufm`` to UFM). What each has is catalogue data with
    its sources (blueprints/catalog/data/subnet_managers.yaml): Debian's OpenSM 3.3.23 accepts only "minhop,
    updn, dnup, file, ftree, lash, dor, torus-2QoS, nue, dfsssp, sssp" (opensm(8), -R) and falls back to
    minhop when the engine fails, so ``routing_engine: ar_updn`` would run minhop without a word; it has no
    ``sharp_enabled`` key and no Aggregation Manager, so ``sharp: true`` would never enable SHARP on the
    switches while NCCL is told to use CollNet. NVIDIA's OpenSM (``sharp_enabled 2``) and UFM (``ib sm sharp
    enable``) have both. A flavour of another kind (``kind: ufm`` with ``flavour: opensm-nvidia``) is refused
    too, and so is ``location: head-node`` for a UFM or switch SM: ``generate`` lists those head nodes in
    ``subnet_manager/inventory.yml`` and the opensm role installs and starts OpenSM there, not UFM, and
    enables no SHARP while NCCL is told to use CollNet.

    With SHARP on, the routing engine (the blueprint's, else the default one: ftree on a fat-tree or
    leaf-spine ftree takes, else minhop) must be one NVIDIA documents for SHARP's Aggregation Manager on
    that topology ("Setting up NVIDIA SHARP Environment": updn, ar_updn, ftree, ar_ftree on trees, dfp on
    DragonFly+, dor with dor_hyper_cube_mode on hypercubes; catalogue ``sharp_routing``).
    """

    id = "NET022"
    severity = Severity.ERROR
    title = "routing engine, SHARP or location setting the subnet manager flavour lacks"
    rationale = "OpenSM silently falls back to minhop, and SHARP without the SM enabling it never runs."
    fix = (
        "pick an engine the flavour has (ftree or updn for fat-trees) or set "
        "subnet_manager.flavour: opensm-nvidia (DOCA-Host/MLNX_OFED) or kind: ufm"
    )
    tags = ("infiniband", "subnet-manager", "sharp")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None:
                continue
            yield from self._fabric(fab, ctx.plan)

    def _fabric(self, fab: ResolvedFabric, plan: Plan | None) -> Iterator[Finding]:
        from blueprints.catalog import subnet_managers as catalog
        from generator.plan.subnet_manager import routing_engine

        sm = fab.spec.subnet_manager
        assert sm is not None
        base = (*fab.source_path, "subnet_manager")
        if sm.flavour is not None and sm.flavour not in KIND_FLAVOURS[sm.kind]:
            yield self.finding(
                f"{fab.name} subnet manager is kind `{sm.kind}` but flavour `{sm.flavour}` is not that kind",
                (*base, "flavour"),
            )
            return
        yield from self._location(fab)
        flavour = catalog.flavour(sm)
        if flavour is None:
            return
        for engine in routing_engine(fab, plan).split(","):
            if catalog.lacks_engine(sm, engine):
                yield self.finding(
                    f"{fab.name} routing_engine `{engine}`: {flavour.name} has no such engine (it has "
                    f"{', '.join(flavour.routing_engines)}) and would route with minhop instead",
                    (*base, "routing_engine"),
                )
        if sm.sharp and flavour.sharp is None:
            yield self.finding(
                f"{fab.name} sharp: true but {flavour.name} cannot enable SHARP on the switches (no "
                "sharp_enabled setting) and ships no Aggregation Manager",
                (*base, "sharp"),
            )
        if catalog.sharp_on(sm):
            yield from self._sharp_routing(fab, plan)

    def _location(self, fab: ResolvedFabric) -> Iterator[Finding]:
        """Only OpenSM runs on head nodes: the opensm role installs the distribution's opensm on every host of
        subnet_manager/inventory.yml whatever the kind says, so UFM or a switch's SM there never runs."""
        sm = fab.spec.subnet_manager
        assert sm is not None
        if sm.location != "head-node" or sm.kind == "opensm":
            return
        yield self.finding(
            f"{fab.name} subnet manager is kind `{sm.kind}` with location: head-node, but only OpenSM "
            "runs on head nodes: `generate` lists them in subnet_manager/inventory.yml and the opensm role "
            f"installs and starts OpenSM there, not {'UFM' if sm.kind == 'ufm' else 'the switch SM'}"
            + (", and never enables SHARP" if sm.sharp else ""),
            (*fab.source_path, "subnet_manager", "location"),
            hint=(
                "use location: ufm-appliance (the UFM appliances declared under `appliances:`)"
                if sm.kind == "ufm"
                else "use location: switch-embedded"
            )
            + ", or kind: opensm (flavour: opensm-nvidia for SHARP) for a subnet manager on head nodes",
        )

    def _sharp_routing(self, fab: ResolvedFabric, plan: Plan | None) -> Iterator[Finding]:
        """SHARP's Aggregation Manager works only with the routing engines NVIDIA lists for the topology
        (catalogue sharp_routing, [SHARPENV]); the default engine counts as much as a given one."""
        from blueprints.catalog import subnet_managers as catalog
        from generator.plan.subnet_manager import routing_engine

        sm = fab.spec.subnet_manager
        assert sm is not None
        base = (*fab.source_path, "subnet_manager")
        family = _sharp_family(fab)
        if family is None:
            documented = "; ".join(
                f"{f.name}: {', '.join(f.routing_engines)}" for f in catalog.sharp_routing_families()
            )
            yield self.finding(
                f"{fab.name} sharp: true on a {fab.topology_kind}: NVIDIA documents the routing engines "
                f"SHARP's Aggregation Manager works with for other topologies only ({documented})",
                (*base, "sharp"),
                hint="set sharp: false on this fabric",
            )
            return
        at = (*base, "routing_engine") if sm.routing_engine else (*base, "sharp")
        which = "routing_engine" if sm.routing_engine else "the default routing engine"
        for engine in routing_engine(fab, plan).split(","):
            if engine not in family.routing_engines:
                needs = f" (with {', '.join(family.requires)} enabled)" if family.requires else ""
                yield self.finding(
                    f"{fab.name} sharp: true with {which} `{engine}`: NVIDIA SHARP's Aggregation Manager "
                    f"works on {family.name} with {', '.join(family.routing_engines)}{needs} only",
                    at,
                    hint=_sharp_engine_hint(fab, family, engine),
                )
            elif family.requires:
                yield self.finding(
                    f"{fab.name} sharp: true with routing engine `{engine}`: NVIDIA SHARP needs "
                    f"{', '.join(family.requires)} enabled with it on {family.name}, which the generated "
                    "opensm.conf does not set",
                    at,
                    hint=_sharp_engine_hint(fab, family, engine),
                )


def _sharp_family(fab: ResolvedFabric) -> SharpRouting | None:
    """The SHARP routing family of the fabric's topology. A fabric without one has no plan to tell its family
    by: its engine must be one SHARP documents for some family, with no setting `generate` leaves out."""
    from blueprints.catalog import subnet_managers as catalog

    if fab.topology_kind is not None:
        return catalog.sharp_routing(fab.topology_kind)
    families = [f for f in catalog.sharp_routing_families() if not f.requires]
    engines = tuple(e for f in families for e in f.routing_engines)
    return catalog.SharpRouting(
        name="a fabric of no declared topology", topologies=(), routing_engines=engines
    )


def _sharp_engine_hint(fab: ResolvedFabric, family: SharpRouting, engine: str) -> str:
    """The engines to name instead: SHARP's for the family that the flavour has, the schema accepts and need
    no setting `generate` leaves out; not ftree where it was the default and the plan does not take it."""
    from blueprints.catalog import subnet_managers as catalog

    sm = fab.spec.subnet_manager
    assert sm is not None
    flavour = catalog.flavour(sm)
    usable = [
        e
        for e in family.routing_engines
        if e in get_args(RoutingEngine)
        and (flavour is None or e in flavour.routing_engines)
        and (sm.routing_engine or e != "ftree" or engine == "ftree")
    ]
    if family.requires:
        needs = ", ".join(family.requires)
        return f"set sharp: false on this fabric: the generated opensm.conf cannot set {needs} yet"
    if not usable:
        return "set sharp: false on this fabric"
    engines = usable[-1] if len(usable) == 1 else f"{', '.join(usable[:-1])} or {usable[-1]}"
    return f"set routing_engine: {engines}, or sharp: false"
