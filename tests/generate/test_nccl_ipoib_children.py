"""The NCCL profile's bootstrap interfaces (NCCL_SOCKET_IFNAME) are the IPoIB children the address plan puts
the pool's addresses on (``FabricAddress.child_of``), read from it, not worked out a second time beside it."""

from __future__ import annotations

import dataclasses

from conftest import REPO

from generator.deploy.addresses import onprem_plan
from generator.emit import nccl
from generator.pipeline import load_and_resolve
from generator.resolve import ResolvedCluster, ResolvedPool

TENANT_IPOIB = REPO / "tests" / "generate" / "data" / "tenant-ipoib.yaml"


def _socket_ifname(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    profile = nccl.derive(cluster, pool)
    return next(s.value for s in profile.settings if s.name == "NCCL_SOCKET_IFNAME")


def test_the_bootstrap_interfaces_are_the_address_plans_children() -> None:
    cluster = load_and_resolve(TENANT_IPOIB)[1]
    train = next(p for p in cluster.pools if p.name == "train")
    rows = onprem_plan(cluster).fabric[train.hostnames[0]]
    children = [a.interface for a in rows if a.purpose == "compute" and a.child_of is not None]
    assert len(children) == 8 and _socket_ifname(cluster, train) == "=" + ",".join(map(str, children))
    # the plan is the one truth: what it holds for the pool (here its children renamed) is what NCCL is given
    renamed = [
        dataclasses.replace(a, interface=f"p{a.rail}.8010") if a.child_of is not None else a for a in rows
    ]
    onprem_plan(cluster).fabric[train.hostnames[0]] = renamed  # the plan cached for this cluster object
    assert _socket_ifname(cluster, train) == "=" + ",".join(f"p{r}.8010" for r in range(8))
