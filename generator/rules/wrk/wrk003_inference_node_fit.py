from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext
from generator.rules.sizing import gb, params_text


class InferenceNodeFit(Rule):
    """An inference model that does not fit one node's GPU memory.

    Serving runs tensor parallelism inside a node's NVLink (or PCIe) domain; a model whose weights and
    KV cache exceed one node's GPU memory must also be split across nodes with pipeline parallelism,
    putting the network on the per-token path. Weights are params × bytes at the workload precision; the
    KV cache is 2 · layers · hidden · 2 bytes per token × sequence × batch (multi-head attention, an
    upper bound). Cluster-wide fit is WRK002's.
    """

    id = "WRK003"
    severity = Severity.WARNING
    title = "inference model larger than one node's GPU memory"
    rationale = "Serving across nodes puts the network on every token's critical path."
    fix = "use nodes with more GPU memory, a lower precision (fp8/int8/int4), or a smaller batch or context"
    tags = ("workload", "inference", "memory")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        from blueprints.catalog.workload import memory_need

        cluster = ctx.cluster
        wl = cluster.blueprint.workload
        if wl is None or wl.mode != "inference" or not cluster.gpu_pools:
            return
        need = memory_need(wl.params, wl.mode, wl.precision, wl.sequence_length, wl.inference_batch)
        best = max(cluster.gpu_pools, key=lambda p: p.gpu_memory_per_node_gb)
        node_bytes = best.gpu_memory_per_node_gb * 1e9
        total_bytes = sum(p.count * p.gpu_memory_per_node_gb for p in cluster.gpu_pools) * 1e9
        if need.shared <= node_bytes or need.shared > total_bytes:
            return
        yield self.finding(
            f"inference of a {params_text(wl.params)} model in {wl.precision} needs {gb(need.weights)} "
            "weights + "
            f"{gb(need.kv_cache)} KV cache = {gb(need.shared)}; the largest node (`{best.name}`) has "
            f"{best.server.gpus} × {best.gpu.memory_gb if best.gpu else 0:g} GB = {gb(node_bytes)}",
            ("workload", "precision"),
        )
