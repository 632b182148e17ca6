"""DEP012: the resource names the cloud program builds fit the provider's limits."""

from __future__ import annotations

import re
from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class CloudNames(Rule):
    """The GCP and Azure programs name resources after the blueprint, its pools and its storage
    (`<name>-<pool>-compact` placement policies, `<name>-<storage>` file systems, `<name>-<pool>-su<k>`
    scale sets, an NFS share named as the storage). Each part may hold 40 characters; joined they can pass
    what the provider takes (63 characters for GCP resource names, 64 for an Azure scale set, 3 to 63 for an
    Azure file share), and the program then fails at `pulumi up` after creating the network."""

    id = "DEP012"
    severity = Severity.ERROR
    title = "a cloud resource name the program builds is longer or shorter than the provider takes"
    rationale = "the provider refuses the resource at `pulumi up`, part-way through the stack"
    fix = "shorten the blueprint, pool or storage name"
    tags = ("deployment", "cloud")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if ctx.cluster.target not in ("gcp", "azure"):
            return
        from generator.deploy.cloud_names import cloud_names

        for n in cloud_names(ctx.cluster):
            fits = n.shortest <= len(n.name) <= n.longest
            if not fits or (n.pattern is not None and re.fullmatch(n.pattern, n.name) is None):
                yield self.finding(
                    f"the {n.what} would be named `{n.name}` ({len(n.name)} characters): "
                    f"{ctx.cluster.target} takes {n.shortest} to {n.longest} characters ({n.source})",
                    n.path,
                )
