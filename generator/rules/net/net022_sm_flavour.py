from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.findings import Finding, Severity
from generator.resolve import ResolvedFabric
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
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
