from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import server_path


class GpusPerServer(Rule):
    """More GPUs in one server than the article's usual limit of 8.

    The article gives "usually at most 8 GPUs per server": 8 is what one NVSwitch baseboard (HGX/DGX)
    or a 4U PCIe chassis holds, and what 8 rail NICs serve. A 16-GPU box (e.g. DGX-2) exists but needs
    its own power, cooling and NIC layout; check the server spec. Rack-scale NVLink systems (GH200 NVL32,
    GB200 NVL36/NVL72) are their own case: a server whose NVLink domain is rack-scale
    (``nvlink_domain_gpus`` of at least 32, the smallest such system) is not flagged.
    """

    id = "GPU003"
    severity = Severity.WARNING
    title = "more than 8 GPUs in one server"
    rationale = "Servers usually hold at most 8 GPUs (one NVSwitch baseboard, one NIC per GPU)."
    fix = (
        "split the GPUs over more nodes (count) or describe a rack-scale NVLink system with its "
        "nvlink_domain_gpus"
    )
    tags = ("gpu", "article")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.advice import advice

        cluster, adv = ctx.cluster, advice()
        for pool in cluster.gpu_pools:
            s = pool.server
            if s.gpus <= adv.max_gpus_per_server:
                continue
            if (
                s.gpu_interconnect.startswith("nvlink")
                and s.nvlink_domain_gpus >= adv.rack_scale_nvlink_domain_gpus
            ):
                continue
            yield self.finding(
                f"pool `{pool.name}`: {s.gpus} GPUs per server, above the usual {adv.max_gpus_per_server} "
                f"(NVLink domain {s.nvlink_domain_gpus} GPUs; rack-scale NVLink starts at "
                f"{adv.rack_scale_nvlink_domain_gpus})",
                server_path(cluster, pool, "gpus"),
            )
