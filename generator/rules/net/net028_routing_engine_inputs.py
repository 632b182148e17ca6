"""NET028: the OpenSM routing engine gets what it needs from the generated files and the topology."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.findings import Finding, Severity
from generator.resolve import ResolvedFabric
from generator.rules.base import Rule, RuleContext

if TYPE_CHECKING:
    from generator.plan.model import Plan

# topologies whose plan has a top tier of switches (`blueprint sm-guids` writes them as ftree's roots)
ROOTED = ("fat-tree", "leaf-spine")
# up/down engines: they route from root switches, which OpenSM finds only in a tree
UP_DOWN = ("ftree", "updn", "dnup", "ar_updn")


class RoutingEngineInputs(Rule):
    """An OpenSM routing engine that cannot run on the files ``generate`` writes or on the topology.

    OpenSM falls back to minhop when its engine fails, with no word but its log, so a fabric meant to be
    routed deadlock-free or balanced runs minhop. Run on generated builds in real OpenSM 3.3.23 over
    ibsim:

    * ``torus-2QoS`` needs QoS on and its own ``torus-2QoS.conf`` describing the torus (opensm's
      torus-2QoS documentation); ``generate`` writes no such file and turns QoS on only for a service level
      other than 0, so OpenSM logged "ERR 4E44 ... Enable QoS" (SL 0) or "ERR 4E11: Opening
      /etc/opensm/torus-2QoS.conf: No such file" and configured minhop tables.
    * ``ftree``, ``updn``, ``dnup`` and ``ar_updn`` route up and down from root switches: only a fat-tree's
      or leaf-spine's plan has a top tier (``blueprint sm-guids`` writes it as ftree's root file). On a
      dragonfly OpenSM logged "not a fat-tree" for ftree and "disabling UPDN algorithm, no root nodes were
      found" for updn, then minhop.
    * ``ftree`` also needs at least two leaf switches under a top tier: on a one-switch fabric OpenSM logged
      "Fabric has 1 switches - topology is not fat-tree", on one leaf under one spine "Failed to find leaf
      switches - topology is not fat-tree" (the default engine is then minhop: ``ftree_shaped``).
    * ``ftree`` also takes hosts on leaf switches only: with an appliance cabled to a spine OpenSM logged
      "ERR AB2B: Found more than one root on fabric with maximum rank 0" and configured minhop tables
      (tests/realtools/test_opensm_ftree.py).

    Only ``kind: opensm`` is checked: its opensm.conf is what ``generate`` writes.
    """

    id = "NET028"
    severity = Severity.ERROR
    title = "OpenSM routing engine without what it needs"
    rationale = "OpenSM silently routes with minhop when its routing engine cannot run."
    fix = "leave routing_engine unset: ftree on the fat-trees and leaf-spines it takes, else OpenSM's minhop"
    tags = ("infiniband", "subnet-manager", "routing")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for fab in ctx.cluster.fabrics.values():
            sm = fab.spec.subnet_manager
            if fab.kind != "infiniband" or sm is None or sm.kind != "opensm" or not sm.routing_engine:
                continue
            yield from self._engines(fab, sm.routing_engine.split(","), ctx.plan)

    def _engines(self, fab: ResolvedFabric, engines: list[str], plan: Plan | None) -> Iterator[Finding]:
        from generator.plan.subnet_manager import ftree_problem

        path = (*fab.source_path, "subnet_manager", "routing_engine")
        topology = fab.topology_kind or "unknown"
        for engine in (e.strip() for e in engines):
            if engine == "torus-2QoS":
                yield self.finding(
                    f"{fab.name} routing_engine torus-2QoS needs QoS on and a torus-2QoS.conf describing the "
                    "torus, which generate does not write: OpenSM 3.3.23 logs ERR 4E44 or 4E11 and routes "
                    "with minhop",
                    path,
                )
            elif engine in UP_DOWN and topology not in ROOTED:
                yield self.finding(
                    f"{fab.name} routing_engine {engine} routes from root switches, and a {topology} has no "
                    "top tier to root it: OpenSM 3.3.23 finds none and routes with minhop",
                    path,
                )
            elif engine == "ftree" and plan is not None and (why := ftree_problem(plan, fab.name)):
                yield self.finding(
                    f"{fab.name} routing_engine ftree {why} and routes with minhop",
                    path,
                    hint="leave routing_engine unset (minhop where ftree cannot route) or set minhop",
                )
