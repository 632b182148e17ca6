"""NET029: a routing engine that uses service levels of its own, with NCCL's own service level and VL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.findings import Finding, Severity
from generator.resolve import ResolvedFabric
from generator.rules.base import Rule, RuleContext
from generator.rules.net.net028_routing_engine_inputs import ROOTED

if TYPE_CHECKING:
    from blueprints.catalog.subnet_managers import SlRouting
    from generator.plan.model import Plan


class SlRoutingQos(Rule):
    """A routing engine that uses service levels (SLs) of its own, with a ``service_level`` for NCCL.

    ``service_level`` other than 0 sets the hosts' ``NCCL_IB_SL`` and makes the generated opensm.conf turn
    QoS on with a ``qos_sl2vl`` that puts that SL alone on VL1 and the 15 others on VL0. Some OpenSM engines
    need the SLs themselves (catalogue ``subnet_managers.yaml`` ``sl_routing``, with its sources):

    * ``torus-2QoS`` writes every port's SL2VL map itself: "any configuration via qos_sl2vl, qos_swe_sl2vl,
      etc., must and will be ignored" (torus-2QoS(8), OpenSM 3.3.23), so the SL never gets a VL of its own.
      An error.
    * ``dfsssp`` and ``lash`` break credit loops by giving each path an SL, one virtual layer each, for
      applications to ask the SA for (opensm(8): DFSSSP "uses InfiniBand virtual lanes (SL) to provide
      deadlock-freedom", "applications must perform a path record query to get path SL for each route").
      DFSSSP's path SL is the VL it computed (linux-rdma/opensm osm_ucast_dfsssp.c ``get_dfsssp_sl``), so
      the generated table, which folds every other SL onto VL0, merges its layers again; and NCCL puts every
      queue pair on ``NCCL_IB_SL`` (NVIDIA/nccl net_ib.cc ``qpAttr.ah_attr.sl = ncclParamIbSl()``), not on
      the path's SL. Measured in OpenSM 3.3.23 over ibsim on the hypercube example with ``service_level: 2``:
      "Virtual Lanes needed: 4", paths spread over SL 0-7, and the switches' SL2VL maps SL 2 to VL1 and
      every other SL to VL0. A warning: OpenSM routes, without the deadlock freedom the engine was chosen
      for.
    * ``nue`` does so only with ``nue_max_num_vls`` other than 1; the generated file leaves its default, 1,
      so Nue uses no SL of its own and is not flagged.

    With ``service_level`` 0 the file writes no SL2VL map (qos FALSE), but the engine still spreads paths
    over SLs that NCCL, on ``NCCL_IB_SL`` 0, never uses: every queue pair is on SL 0, so the compute
    fabric's traffic runs on routes whose deadlock freedom needed several virtual lanes, in one. Measured in
    OpenSM 3.3.23 over ibsim on the hypercube example at ``service_level: 0``: "Virtual Lanes needed: 4",
    paths balanced over lanes 0-7. That is flagged (a warning) on the compute fabric, where NCCL runs, and on
    topologies with cycles (torus, hypercube, dragonfly); shortest paths on a tree (fat-tree, leaf-spine) go
    up then down and need no lane of their own.
    """

    id = "NET029"
    severity = Severity.WARNING
    title = "routing engine with service levels of its own, and an NCCL service level"
    rationale = "The engine's SLs and the generated SL-to-VL map for NCCL's SL undo each other."
    fix = (
        "route with nue (deadlock-free on any topology in one VL at its default nue_max_num_vls 1) or, on a "
        "fat-tree, ftree; with dfsssp or lash, NCCL's traffic keeps the deadlock freedom on no SL"
    )
    tags = ("infiniband", "subnet-manager", "routing", "qos")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None:
                continue
            if sm.service_level == 0 and not _nccl_on_cycles(fab):
                continue
            yield from self._fabric(fab, ctx.plan)

    def _fabric(self, fab: ResolvedFabric, plan: Plan | None) -> Iterator[Finding]:
        from blueprints.catalog import subnet_managers as catalog
        from generator.plan.subnet_manager import routing_engine

        sm = fab.spec.subnet_manager
        assert sm is not None
        for engine in routing_engine(fab, plan).split(","):
            how = catalog.sl_routing(engine.strip())
            if how is None or how.unless is not None:
                continue  # `unless` is the default generate leaves: the engine uses no SL of its own then
            if sm.service_level == 0:
                if not how.writes_sl2vl:  # torus-2QoS with QoS off: NET028's ground, not this rule's
                    yield self.finding(
                        _message_sl0(fab.name, engine.strip()), (*fab.source_path, "subnet_manager")
                    )
                continue
            yield self.finding(
                _message(fab.name, engine.strip(), sm.service_level, how),
                (*fab.source_path, "subnet_manager", "service_level"),
                severity=Severity.ERROR if how.writes_sl2vl else Severity.WARNING,
            )


def _nccl_on_cycles(fab: ResolvedFabric) -> bool:
    """The compute fabric (the one NCCL's queue pairs use) on a topology with cycles: any but the trees
    (NET028's ROOTED), whose shortest paths go up, then down, and close no credit loop."""
    return fab.name == "compute" and fab.topology_kind is not None and fab.topology_kind not in ROOTED


def _message_sl0(fabric: str, engine: str) -> str:
    return (
        f"{fabric} routing_engine {engine} on a topology with cycles: {engine} breaks credit loops by giving "
        f"paths SLs of their own, one virtual lane each, for applications to ask the SA for (opensm(8)), but "
        f"NCCL sends every queue pair on NCCL_IB_SL=0 and asks for no path SL, so its traffic runs those "
        f"routes in one lane, without the deadlock freedom {engine} was chosen for"
    )


def _message(fabric: str, engine: str, sl: int, how: SlRouting) -> str:
    if how.writes_sl2vl:
        return (
            f"{fabric} service_level {sl} with routing_engine {engine}: {engine} writes every port's "
            f"SL-to-VL map itself and ignores the generated qos_sl2vl (torus-2QoS(8)), so SL {sl} never gets "
            f"VL1 to itself, and NCCL_IB_SL={sl} ignores the path SLs {engine} needs against credit loops"
        )
    return (
        f"{fabric} service_level {sl} with routing_engine {engine}: {engine} gives paths SLs of their own, "
        f"one virtual lane each, for deadlock freedom (opensm(8)), but the generated qos_sl2vl maps SL {sl} "
        f"to VL1 and the 15 other SLs to VL0, merging {engine}'s lanes, and NCCL sends every queue pair on "
        f"NCCL_IB_SL={sl}, not on the path's SL"
    )
