"""DEP013: a config key the blueprint names is not one the Pulumi program reads for another setting."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class StackConfigKey(Rule):
    """`deployment.cloud.ssh_key_config` and `deployment.maas.api_url_config` name the Pulumi config key
    that holds the SSH public key or the MAAS API URL. The generated program also reads keys of its own
    (the zone, the capacity mode, the image, the MAAS API key). Naming one of them makes a single key carry
    two values: with `ssh_key_config: zone` the VMs get the zone ("1") as their SSH key, and setting the
    key as the README says moves them to a zone of that name; with `api_url_config: maas:apiKey` the
    provider is given its secret key as the URL."""

    id = "DEP013"
    severity = Severity.ERROR
    title = "a config key the blueprint names is one the Pulumi program reads for another setting"
    rationale = "one Pulumi config key cannot hold two values: the stack gets the wrong one at `pulumi up`"
    fix = "name a key of its own (the defaults sshPublicKey and maas:apiUrl are free)"
    tags = ("deployment", "cloud")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from generator.deploy.stack_config import program_config_keys, qualified

        cluster = ctx.cluster
        deployment = cluster.blueprint.deployment
        named = []
        if deployment.cloud is not None and cluster.is_cloud:  # `cloud:` beside target none: no program
            named.append((("deployment", "cloud", "ssh_key_config"), deployment.cloud.ssh_key_config))
        if deployment.maas is not None and cluster.target == "maas":
            named.append((("deployment", "maas", "api_url_config"), deployment.maas.api_url_config))
        if not named:
            return
        reads = program_config_keys(cluster.target)
        for path, name in named:
            key = qualified(name, cluster.blueprint.name)
            if key in reads:
                yield self.finding(
                    f"`{name}` is a config key the {cluster.target} program already reads for its own "
                    f"setting ({', '.join(sorted(map(str, reads)))} are taken)",
                    path,
                )
