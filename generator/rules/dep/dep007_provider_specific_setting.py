"""DEP007: AWS-only settings on another target."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class ProviderSpecificSetting(Rule):
    """Some `deployment.cloud` settings only mean something on one provider: `efa_only_cards` and
    `capacity_hours` (AWS), `gpu_network_cidr` (GCP's per-GPU-NIC networks). Set explicitly on another
    target they are ignored — usually a sign the blueprint was copied from another cloud."""

    id = "DEP007"
    severity = Severity.WARNING
    title = "provider-specific deployment setting on another provider"
    rationale = "the setting is ignored on this target"
    fix = "remove the setting"
    tags = ("deployment", "cloud")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        cloud = cluster.blueprint.deployment.cloud
        if cloud is None:
            return
        from generator.deploy.targets import cloud_targets

        target = cluster.target
        for provider in cloud_targets().values():  # each record lists its own settings (own_settings)
            if target == provider.name:
                continue
            for key, why in provider.own_settings.items():
                if key in cloud.model_fields_set:
                    yield self.finding(
                        f"deployment.cloud.{key} is ignored on target {target}: {why}",
                        ("deployment", "cloud", key),
                    )
