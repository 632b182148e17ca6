"""`blueprint advise`: the article's selection rules with numbers, and a starter blueprint that validates.

1. Model size → one GPU / one multi-GPU node / several nodes (< 7B, 7–70B, > 70B; ``workload.yaml``
   size classes), refined by memory: the larger of the article's class and what the mode's memory needs.
2. GPU count: ``--gpus``, else the memory minimum (whole nodes), raised to what ``--tokens`` in
   ``--target-days`` needs at the model's FLOPs and utilisation.
3. Node count → topology (``advice.yaml``): below 100 nodes a fat-tree; 100–1000 fat-tree or dragonfly,
   both built with the topology builders and compared (switches, cables, predicted busbw); above 1000 a
   dragonfly, or a 3-tier fat-tree with ``--prefer non-blocking``.
4. Fabric by budget and scale (``perf.yaml`` advisor.fabrics, from the article's fabric table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from blueprints.catalog import Catalog, default_catalog
from blueprints.catalog.advice import advice as article_advice
from blueprints.catalog.perf import perf_data
from blueprints.catalog.schema import Gpu, Server
from blueprints.catalog.workload import memory_need, workload_factors
from blueprints.models import Blueprint
from blueprints.models.base import upper_bound
from blueprints.models.site import Site
from generator.perf.advice import BUDGETS, MODES, PREFERENCES, SCOPES, Advice, AdviceError, Option, Request
from generator.perf.predict import predict_on
from generator.perf.starter import (
    fabric_section,
    network_racks,
    rack_estimate,
    rack_power_kw,
    starter_blueprint,
    starter_pool,
)
from generator.perf.system import PerfError, system_for
from generator.perf.training import (
    SECONDS_PER_DAY,
    StepEstimate,
    flops_per_param_token,
    sustained_flops,
    training_step,
)

# ---- hardware choice ----------------------------------------------------------------------------


def server_for(cat: Catalog, gpu_id: str) -> tuple[str, Server]:
    """The catalogue server carrying ``gpu_id`` with the most GPUs per node (first id on a tie)."""
    if gpu_id not in cat.gpus:
        from blueprints.catalog.load import did_you_mean

        hint = did_you_mean(gpu_id, sorted(cat.gpus)) or f"known: {', '.join(sorted(cat.gpus))}"
        raise AdviceError(f"unknown GPU `{gpu_id}`; {hint}")
    servers = sorted((sid, s) for sid, s in cat.servers.items() if s.gpu == gpu_id)
    if not servers:
        raise AdviceError(f"no catalogue server carries `{gpu_id}`")
    return max(servers, key=lambda t: (t[1].gpus, [-ord(c) for c in t[0]]))


def _scope_index(scope: str) -> int:
    return SCOPES.index(scope)


def memory_minimum(params: float, mode: str, precision: str, seq: int, gpu: Gpu) -> tuple[float, int]:
    """(GB the workload needs on one GPU's worth of sharding, fewest GPUs that hold it perfectly sharded)."""
    need = memory_need(params, mode, precision, seq)
    per_gpu = gpu.memory_gb * 1e9
    room = per_gpu - need.activations_per_gpu
    if room <= 0:
        raise AdviceError(
            f"one sequence of {seq} tokens needs {need.activations_per_gpu / 1e9:.0f} GB of activations, "
            f"more than a {gpu.name} holds"
        )
    return need.total(1) / 1e9, max(1, math.ceil(need.shared / room))


def _default_precision(mode: str) -> str:
    return "int4" if mode == "qlora" else "bf16"


def _budget(req: Request, nodes: int) -> str:
    if req.budget:
        return req.budget
    art = article_advice()
    large = nodes > art.small_cluster_nodes or req.params > art.large_model_params
    return "high" if large else "medium"


def _fabric(budget: str, nodes: int, reasons: list[str]) -> str:
    table = perf_data().advisor.fabrics
    row = table.for_budget(budget)
    if row.nodes_max is not None and nodes > row.nodes_max:
        reasons.append(
            f"budget `{budget}` ({row.technology}) suits at most {row.nodes_max} nodes (the article: "
            f'"small clusters"); {nodes} nodes get the `low` row instead'
        )
        row = table.low
    return row.technology


# ---- topologies ---------------------------------------------------------------------------------


def dragonfly_shape(radix: int, ports_per_node: int, nodes: int) -> dict[str, int] | None:
    """Balanced (a = 2p = 2h) dragonfly with whole nodes per router, the largest h the radix allows."""
    for h in range((radix + 1) // 4, 0, -1):
        p, a = h, 2 * h
        if p + a - 1 + h > radix or p < ports_per_node or p % ports_per_node:
            continue
        per_group = a * (p // ports_per_node)
        groups = max(2, math.ceil(nodes / per_group))
        if groups > a * h + 1:
            return None
        return {"p": p, "a": a, "h": h, "groups": groups}
    return None


def _topologies(
    cat: Catalog, technology: str, nodes: int, ports: int, prefer: str, reasons: list[str]
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    art = article_advice()
    switch_id = perf_data().advisor.switches.get(technology)
    if switch_id is None:
        raise AdviceError(f"no starter switch for {technology} in perf.yaml advisor.switches")
    switch = cat.switch(switch_id)
    radix = switch.ports_at(cat.fabric(technology).speed_gbps)
    fat2 = {
        "kind": "fat-tree",
        "tiers": 2,
        "switch": switch_id,
        "rail_optimized": ports > 1,
        "oversubscription": "1:1",
    }
    fat3 = {**fat2, "tiers": 3}
    # a rail-optimised 2-tier tree has at most radix leaves: radix / rails scalable units of radix/2 nodes
    two_tier_nodes = (
        (radix // max(1, ports)) * (radix // 2) if ports > 1 else radix * radix // 2 // max(1, ports)
    )
    fat = fat2 if nodes <= two_tier_nodes else fat3
    fat_label = f"fat-tree {fat['tiers']}-tier {switch_id}"
    df = dragonfly_shape(radix, ports, nodes)
    df_topo = {"kind": "dragonfly", "switch": switch_id, **df} if df else None
    df_label = f"dragonfly {df['groups']}×(p{df['p']} a{df['a']} h{df['h']}) {switch_id}" if df else ""
    small, large = art.small_cluster_nodes, art.dragonfly_above_nodes
    if nodes < small:
        rule = f"{nodes} nodes < {small}: fat-tree (the article: small clusters, non-blocking, easy to grow)"
        return rule, [(fat_label, fat)]
    if nodes <= large:
        rule = (
            f"{small} ≤ {nodes} nodes ≤ {large}: fat-tree or dragonfly — both built and compared "
            f"(prefer {prefer})"
        )
        out = [(fat_label, fat)]
        if df_topo:
            out.append((df_label, df_topo))
        return rule, out
    if prefer == "non-blocking":
        rule = (
            f"{nodes} nodes > {large}: 3-tier fat-tree, as non-blocking is preferred (the article: dragonfly)"
        )
        return rule, [(f"fat-tree 3-tier {switch_id}", fat3)] + ([(df_label, df_topo)] if df_topo else [])
    rule = f"{nodes} nodes > {large}: dragonfly (the article: very large scale, low cost)"
    if not df_topo:
        reasons.append(
            f"no balanced dragonfly of {switch_id} holds {nodes} nodes; falling back to a 3-tier fat-tree"
        )
        return rule, [(f"fat-tree 3-tier {switch_id}", fat3)]
    return rule, [(df_label, df_topo), (f"fat-tree 3-tier {switch_id}", fat3)]


# ---- candidates, planned and costed -------------------------------------------------------------


def _plan_option(bp: dict[str, Any]) -> tuple[Any, Any] | str:
    """Resolve and plan a starter (the layers the advisor needs, not the rules): (cluster, plan) or an error.
    A site too small for the plan doubles its rows, a bounded number of times."""
    from pydantic import ValidationError

    from generator.findings import BlueprintError
    from generator.foreign import pydantic_refusal
    from generator.plan.build import PlanError, build_plan
    from generator.resolve import resolve

    max_rows = upper_bound(Site, "rows")

    last = "the site could not be sized"
    for _ in range(int(perf_data().advisor.site_growth_attempts.value)):
        try:
            cluster = resolve(Blueprint.model_validate(bp))
            return cluster, build_plan(cluster)
        except PlanError as exc:
            if exc.path[:1] != ("site",):
                return str(exc)
            last = f"the site could not be sized: {exc}"
            if bp["site"]["rows"] * 2 > max_rows:  # the schema's bound: more rows are no site
                return last
            bp["site"]["rows"] = bp["site"]["rows"] * 2  # the racks did not hold it: a bigger site
        except BlueprintError as exc:
            return "; ".join(f.message for f in exc.findings)
        except ValidationError as exc:  # a starter the schema refuses is no design, said as such
            return f"the starter blueprint is not valid: {pydantic_refusal('starter', exc.errors())}"
    return last


def _evaluate(option: Option) -> None:
    """Plan the option's blueprint; fill counts and predicted busbw (error text on failure)."""
    planned = _plan_option(option.blueprint)
    if isinstance(planned, str):
        option.error = planned
        return
    cluster, plan = planned
    m = plan.metrics.get("compute")
    if m is not None:
        option.switches = sum(m.switches.values())
        option.cables = sum(m.cables.values())
        option.bisection_gbps = m.bisection_gbps
    option.transceivers = sum(plan.transceivers.values())
    probe = int(perf_data().advisor.probe_size_bytes.value)
    try:
        system = system_for(cluster, plan)
        ar = predict_on(system, "all_reduce", probe)
        option.allreduce_busbw = ar.busbw_gbytes
        option.bottleneck = ar.bottleneck
        option.allreduce_scattered_busbw = predict_on(
            system, "all_reduce", probe, placement="scattered"
        ).busbw_gbytes
        option.alltoall_busbw = predict_on(system, "alltoall", probe).busbw_gbytes
        option.system = system
    except PerfError as exc:
        option.error = str(exc)


# ---- the advice, phase by phase ------------------------------------------------------------------


@dataclass
class _Sizing:
    server_id: str
    server: Server
    gpu: Gpu
    precision: str
    article_scope: str
    memory_scope: str
    scope: str
    memory_gb: float
    memory_gpus: int
    gpus: int
    reasons: list[str]


def _check_request(req: Request) -> None:
    if req.params <= 0:
        raise AdviceError("--params must be positive")
    if req.mode not in MODES:
        raise AdviceError(f"unknown mode `{req.mode}` (known: {', '.join(MODES)})")
    if req.budget is not None and req.budget not in BUDGETS:
        raise AdviceError(f"unknown budget `{req.budget}` (known: {', '.join(BUDGETS)})")
    if req.prefer not in PREFERENCES:
        raise AdviceError(f"unknown preference `{req.prefer}` (known: {', '.join(PREFERENCES)})")
    if req.gpus is not None and req.gpus < 1:
        raise AdviceError("--gpus must be at least 1")


def _scope_for(gpus: int, per_node: int) -> str:
    return "gpu" if gpus == 1 else "node" if gpus <= per_node else "nodes"


# The form factor of a GPU sold as a card (catalogue gpus.yaml form_factor): a server may carry one alone.
# SXM and OAM modules and the GB200 superchip come on the maker's multi-GPU boards, which is what the
# catalogue's servers for them are, so "one GPU" of those is the smallest catalogue server, not a spec made
# up around one module.
CARD_FORM_FACTOR = "pcie"


def _module_scope(scope: str, gpu: Gpu, server_id: str, per_node: int, reasons: list[str]) -> str:
    """``scope`` as a design can have it: one GPU only where the GPU is a card (a one-GPU server of an
    SXM/OAM module or a superchip is no product: init wrote `gpus: 1` specs of gb200 and mi300x)."""
    if scope != "gpu" or gpu.form_factor == CARD_FORM_FACTOR or per_node == 1:
        return scope
    reasons.append(
        f"{gpu.name} is a {gpu.form_factor} module, not a card: no server carries one alone, so one node of "
        f"{server_id} ({per_node} GPUs), the catalogue's server for it"
    )
    return "node"


def _size(req: Request, cat: Catalog) -> _Sizing:
    """Model size → scope (the article, refined by memory) → GPU count (given, or the memory minimum)."""
    server_id, server = server_for(cat, req.gpu)
    gpu = cat.gpu(req.gpu)
    precision = req.precision or _default_precision(req.mode)
    if precision not in workload_factors().precision_bytes:
        raise AdviceError(f"unknown precision `{precision}`")
    art_scope = workload_factors().size_class(req.params).scope
    mem_gb, mem_gpus = memory_minimum(req.params, req.mode, precision, req.sequence_length, gpu)
    g = server.gpus
    mem_scope = _scope_for(mem_gpus, g)
    scope = SCOPES[max(_scope_index(art_scope), _scope_index(mem_scope))]
    where = {"gpu": "one GPU", "node": "one multi-GPU node", "nodes": "several nodes"}[art_scope]
    reasons = [
        f"the article puts {req.params / 1e9:.3g}B parameters on {where}",
        f"{req.mode} in {precision} needs {mem_gb:,.0f} GB ({mem_gpus} × {gpu.memory_gb:g} GB {gpu.name} at "
        "best, perfectly sharded)",
    ]
    if req.gpus is not None:
        gpus = req.gpus
        if gpus < mem_gpus:
            reasons.append(
                f"--gpus {gpus} is below the {mem_gpus} GPUs the memory needs: the model will not fit"
            )
        scope = _module_scope(_scope_for(gpus, g), gpu, server_id, g, reasons)
    else:
        min_nodes = int(perf_data().advisor.min_nodes_multi_node.value)
        scope = _module_scope(scope, gpu, server_id, g, reasons)
        gpus = 1 if scope == "gpu" else g if scope == "node" else max(mem_gpus, min_nodes * g)
    return _Sizing(
        server_id, server, gpu, precision, art_scope, mem_scope, scope, mem_gb, mem_gpus, gpus, reasons
    )


def _gpus_for_time(req: Request, sz: _Sizing) -> None:
    """Raise the GPU count to what --tokens in --target-days needs at the model's FLOPs and utilisation
    (compute only; the costed step refines it later)."""
    if req.gpus is not None or not (req.tokens and req.target_days) or req.mode == "inference":
        return
    tr = perf_data().training
    flops = flops_per_param_token(req.mode) * req.params * req.tokens
    for_time = math.ceil(flops / (sustained_flops(sz.gpu) * req.target_days * SECONDS_PER_DAY))
    if for_time > sz.gpus:
        sz.reasons.append(
            f"{req.tokens:.3g} tokens in {req.target_days:g} days need {for_time:,} GPUs at "
            f"{tr.model_flops_utilization.value:.0%} MFU"
        )
        sz.gpus = _within_limits(for_time, sz)
        sz.scope = _scope_for(sz.gpus, sz.server.gpus)


def _within_limits(gpus: int, sz: _Sizing) -> int:
    """``gpus``, or an AdviceError when they need more nodes than a design may have (generator/limits.py):
    a time target can ask for any number, the design must stay one this tool can build."""
    from generator.limits import MAX_NODES

    if gpus > MAX_NODES * sz.server.gpus:
        raise AdviceError(
            f"{gpus:,} GPUs would need {math.ceil(gpus / sz.server.gpus):,} {sz.server_id} nodes; a design "
            f"has at most {MAX_NODES:,} nodes (docs/architecture.md, Limits): lower --tokens or raise "
            "--target-days"
        )
    return gpus


def _whole_nodes(sz: _Sizing) -> int:
    g = sz.server.gpus
    nodes = 1 if sz.scope == "gpu" else math.ceil(sz.gpus / g)
    if sz.scope != "gpu" and sz.gpus != nodes * g:
        sz.reasons.append(f"{sz.gpus} GPUs rounded up to {nodes} whole {sz.server_id} node(s) of {g}")
        sz.gpus = nodes * g
    return nodes


def _designs(
    req: Request, cat: Catalog, sz: _Sizing, nodes: int
) -> tuple[str, str | None, str, list[Option]]:
    """(budget, fabric technology, topology rule, one starter blueprint per candidate topology)."""
    budget = _budget(req, nodes)
    racks = rack_estimate(sz.server, nodes, sz.scope)
    rack_kw = rack_power_kw(sz.server, sz.scope)
    if nodes == 1:
        pool = starter_pool(cat, sz.server_id, sz.server, 1, None, sz.scope, req.gpu)
        single = Option("single server", starter_blueprint(req, pool, None, racks + 1, sz.precision, rack_kw))
        return budget, None, "one node: no compute fabric", [single]
    technology = _fabric(budget, nodes, sz.reasons)
    pool = starter_pool(cat, sz.server_id, sz.server, nodes, technology, sz.scope, req.gpu)
    ports = sum(n.count * n.ports for n in sz.server.nics if n.purpose == "compute")
    rule, topos = _topologies(cat, technology, nodes, ports, req.prefer, sz.reasons)
    all_racks = racks + network_racks(racks)
    options = [
        Option(
            label,
            starter_blueprint(
                req, pool, fabric_section(cat, technology, topo), all_racks, sz.precision, rack_kw
            ),
        )
        for label, topo in topos
    ]
    return budget, technology, rule, options


def _choose(options: list[Option], prefer: str, reasons: list[str]) -> int:
    usable = [i for i, o in enumerate(options) if o.error is None]
    if not usable:
        raise AdviceError("no design could be built: " + "; ".join(f"{o.label}: {o.error}" for o in options))
    if len(usable) == 1:
        return usable[0]
    per_switch = perf_data().advisor.cables_per_switch_cost.value
    if prefer == "cost":
        chosen = min(usable, key=lambda i: (options[i].switches + options[i].cables / per_switch, i))
        reasons.append(f"chose {options[chosen].label}: fewest switches and cables")
        reasons.extend(_costs_bandwidth(options, usable, chosen))
    else:
        chosen = min(usable, key=lambda i: (-options[i].bisection_gbps, -options[i].alltoall_busbw, i))
        reasons.append(f"chose {options[chosen].label}: the most bisection bandwidth")
    return chosen


def _costs_bandwidth(options: list[Option], usable: list[int], chosen: int) -> list[str]:
    """A reason when the cheapest design gives up more all_reduce bandwidth than the policy share (perf.yaml
    policy.busbw_shortfall) against the fastest: the table shows it, the reasons say so."""
    best = max(usable, key=lambda i: (options[i].allreduce_busbw, -i))
    ours, theirs = options[chosen].allreduce_busbw, options[best].allreduce_busbw
    if ours >= theirs * (1 - perf_data().policy.busbw_shortfall.value):
        return []
    return [
        f"{options[chosen].label} reaches {ours:.1f} GB/s all_reduce busbw against {theirs:.1f} on "
        f"{options[best].label} (limited by {options[chosen].bottleneck}); `--prefer non-blocking` weighs "
        "bandwidth first"
    ]


def _training(adv: Advice) -> StepEstimate | None:
    """The costed step (layout chosen on the planned option: TP/PP/DP traffic, bubble) — no re-planning."""
    system = adv.options[adv.chosen].system
    wl = Blueprint.model_validate(adv.starter).workload
    if system is None or wl is None:
        return None
    try:
        return training_step(wl, system)
    except (PerfError, ValueError):
        return None


def _design_round(req: Request, cat: Catalog, sz: _Sizing) -> Advice:
    nodes = _whole_nodes(sz)
    budget, technology, rule, options = _designs(req, cat, sz, nodes)
    for opt in options:
        _evaluate(opt)
    chosen = _choose(options, req.prefer, sz.reasons)
    adv = Advice(
        req,
        sz.article_scope,
        sz.memory_scope,
        sz.scope,
        sz.memory_gb,
        sz.memory_gpus,
        sz.gpus,
        nodes,
        req.gpu,
        sz.server_id,
        budget,
        technology,
        rule,
        options,
        chosen,
        sz.reasons,
    )
    adv.training = _training(adv)
    return adv


def advise(req: Request) -> Advice:
    """Check the request, size the cluster, design and cost the candidates, pick one; with a time target,
    raise the GPU count while the costed step (compute + TP/PP/DP traffic + bubble) misses it."""
    _check_request(req)
    cat = default_catalog()
    sz = _size(req, cat)
    floor = sz.gpus
    _gpus_for_time(req, sz)
    adv = _design_round(req, cat, sz)
    adv = _raise_for_time(req, cat, sz, adv)
    return _trim_for_time(req, cat, sz, adv, floor)


def _raise_for_time(req: Request, cat: Catalog, sz: _Sizing, adv: Advice) -> Advice:
    """Raise the GPU count while the costed step misses the time target; say so when the rounds end short."""
    rounds = int(perf_data().advisor.time_target_rounds.value)
    for _ in range(rounds):
        st = adv.training
        if req.gpus is not None or not req.target_days or st is None or st.train_days is None:
            break
        if st.train_days <= req.target_days:
            break
        more = math.ceil(sz.gpus * st.train_days / req.target_days)
        sz.reasons.append(
            f"the costed step (TP/PP/DP traffic, pipeline bubble) takes {st.train_days:.1f} days on "
            f"{sz.gpus:,} "
            f"GPUs, beyond {req.target_days:g}: {more:,} GPUs"
        )
        sz.gpus = _within_limits(more, sz)
        sz.scope = _scope_for(sz.gpus, sz.server.gpus)
        adv = _design_round(req, cat, sz)
    st = adv.training
    days = st.train_days if st is not None else None
    if req.gpus is None and req.target_days and days is not None and days > req.target_days:
        # the rounds are spent: the design still misses the target, and the advice says so
        adv.reasons.append(
            f"after {rounds} rounds the design still takes {days:.1f} days, beyond the "
            f"{req.target_days:g}-day target: give --gpus, a longer target or a smaller token budget"
        )
    return adv


def _trim_for_time(req: Request, cat: Catalog, sz: _Sizing, adv: Advice, floor: int) -> Advice:
    """Lower a count the time target raised while fewer whole nodes still meet the target. The first sizing
    uses the end-to-end MFU of a large run; a costed step often runs faster (a 7B model's 10-day target was
    given 16 nodes finishing in 7.3 days), and rounds that only raise could not take the surplus back. A trial
    that misses the target, or goes below the memory's and the scope's count (``floor``), is not taken."""
    rounds = int(perf_data().advisor.time_target_rounds.value)
    g = sz.server.gpus
    for _ in range(rounds):
        st = adv.training
        if req.gpus is not None or not req.target_days or st is None or st.train_days is None:
            break
        days = st.train_days
        # the layout's GPUs ran the step (a split that does not divide the count leaves the rest idle)
        fewer = max(floor, math.ceil(st.layout.gpus * days / req.target_days))
        if days > req.target_days or math.ceil(fewer / g) >= math.ceil(sz.gpus / g):
            break
        note = (
            f"the costed step takes {days:.1f} days on {sz.gpus:,} GPUs, within {req.target_days:g}: "
            f"{fewer:,} GPUs tried"
        )
        trial = replace(sz, gpus=fewer, scope=_scope_for(fewer, g), reasons=[*sz.reasons, note])
        tried = _design_round(req, cat, trial)
        t = tried.training
        if t is None or t.train_days is None or t.train_days > req.target_days:
            sz.reasons.append(
                f"{fewer:,} GPUs would take "
                + (f"{t.train_days:.1f} days" if t and t.train_days is not None else "an unknown time")
                + f", beyond {req.target_days:g}: kept {sz.gpus:,}"
            )
            break
        sz, adv = trial, tried
    return adv
