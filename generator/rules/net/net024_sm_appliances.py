from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class SmAppliances(Rule):
    """UFM subnet manager without declared appliances, or an appliance whose size and draw nobody knows.

    With ``subnet_manager: {kind: ufm}`` the subnet manager and SHARP's Aggregation Manager run on UFM
    appliances cabled to the fabric; NVIDIA's DGX SuperPOD cables them to compute leaf ports (H100 reference
    architecture, "Network Fabrics", Table 4: "Compute and UFM" cables). The blueprint names them under
    ``appliances:`` (a catalogue model such as ``ufm-enterprise-appliance-3``, the fabric, and the switch
    ports or a count of free leaf ports); they become the SM members, plan devices with cables, rack space and
    bill-of-materials lines. Without them the SM members are placeholders (``master``/``standby``): no
    device, no cable, no rack space and no inventory host stand behind them. ``ha: true`` with one UFM
    appliance has no standby.

    An appliance (or a generic host) whose rack units or power draw neither the catalogue (NVIDIA publishes
    neither for its UFM appliances) nor the blueprint gives stays out of every rack: its cables have no
    length or medium until ``rack_units`` and ``power_w`` are declared. An appliance on an optical cable
    whose port form factor (the cage its transceiver plugs into) neither the catalogue nor the blueprint
    gives has no transceiver chosen at its end: the bill of materials counts those modules as not chosen
    until ``port_form_factor`` is declared.
    """

    id = "NET024"
    severity = Severity.WARNING
    title = "UFM subnet manager members or appliance figures unknown"
    rationale = "Placeholders and unsized appliances take no port, rack space, power or cable in the plan."
    fix = (
        "declare the UFM appliances under `appliances:` (model, fabric, links or ports), with rack_units and "
        "power_w where the catalogue has no published figure"
    )
    tags = ("infiniband", "subnet-manager", "appliance")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if cluster.is_cloud:
            return
        for fab in cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None:
                continue
            from generator.plan.subnet_manager import sm_plan, ufm_appliances

            if sm_plan(cluster, fab.name, ctx.plan).location != "ufm-appliance":
                continue
            declared = ufm_appliances(cluster, fab.name)
            base = (*fab.source_path, "subnet_manager")
            if not declared:
                yield self.finding(
                    f"{fab.name} subnet manager is kind `{sm.kind}` on UFM appliances but 0 of the "
                    f"{2 if sm.ha else 1} it needs are declared on the {fab.name} fabric: its members "
                    f"({'master, standby' if sm.ha else 'master'}) are unknown devices with no port, cable, "
                    "rack or inventory entry",
                    (*base, "kind"),
                )
            elif sm.ha and len(declared) < 2:
                yield self.finding(
                    f"{fab.name} subnet manager has ha: true but one UFM appliance ({declared[0]}): "
                    "no standby",
                    (*base, "ha"),
                )
        yield from self._figures(ctx)
        yield from self._form_factors(ctx)

    def _figures(self, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.cluster.blueprint.appliances:
            return
        from blueprints.catalog.appliances import appliance_model

        for i, a in enumerate(ctx.cluster.blueprint.appliances):
            model = appliance_model(a.model)
            missing = [
                field
                for field, declared, published in (
                    ("rack_units", a.rack_units, model.rack_units if model else None),
                    ("power_w", a.power_w, model.power_w if model else None),
                )
                if declared is None and published is None
            ]
            if missing:
                what = f"`{a.model}`" if model else "a generic host"
                yield self.finding(
                    f"appliance `{a.name}` ({what}): {' and '.join(missing)} not published and not "
                    "declared; it has no rack position and its cables no length until they are",
                    ("appliances", i, "model" if a.model else "name"),
                    hint=f"declare {' and '.join(missing)} for `{a.name}` (your appliance's figures)",
                )

    def _form_factors(self, ctx: RuleContext) -> Iterator[Finding]:
        """Appliances with an optical cable (its medium takes transceivers) and no port form factor."""
        from generator.plan.attached import port_form_factor

        unknown = {
            a.name: i for i, a in enumerate(ctx.cluster.blueprint.appliances) if not port_form_factor(a)
        }
        plan = ctx.plan if unknown else None  # the plan is built only when an answer depends on it
        if plan is None:
            return
        media = ctx.cluster.catalog.media
        optical: dict[str, int] = {}
        for link in plan.links:
            if link.b.device in unknown and link.medium and media[link.medium].needs_transceivers:
                optical[link.b.device] = optical.get(link.b.device, 0) + 1
        for name, n in optical.items():
            a = ctx.cluster.blueprint.appliances[unknown[name]]
            what = f"`{a.model}`" if a.model else "a generic host"
            needs = "needs" if n == 1 else "need"
            yield self.finding(
                f"appliance `{name}` ({what}): the form factor of its ports is not published and not "
                f"declared; {n} of its cables {needs} transceivers, none chosen at its end (the bill of "
                "materials counts them as not chosen)",
                ("appliances", unknown[name], "model" if a.model else "name"),
                hint=f"declare port_form_factor for `{name}` (its fabric ports' cage: osfp, qsfp112, ...)",
            )
