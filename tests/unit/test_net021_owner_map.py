"""NET021 builds its host → pool map once, in ``check``, and its RDMA-device check reads that map (it built
a second one of its own, per fabric); the findings are the same (tests/unit/test_sm_port_binding.py)."""

from __future__ import annotations

from conftest import EXAMPLES

from generator.pipeline import load_and_resolve
from generator.rules.base import RuleContext
from generator.rules.net.net021_sm_hosts import SmHosts


def test_the_rdma_device_check_reads_the_map_check_built() -> None:
    # the storage SM of this example runs on head nodes whose storage port names are not published
    _, cluster = load_and_resolve(EXAMPLES / "maas-onprem-h100.yaml")
    ctx, rule, storage = RuleContext(cluster), SmHosts(), cluster.fabrics["storage"]
    owner = {h: p for p in cluster.pools for h in p.hostnames}
    warned = [f.message for f in rule._bindable(ctx, storage, owner)]
    assert len(warned) == 2 and all("runs on `head00" in m for m in warned), warned
    # the same as `check` says, and only through the map given: without the head pool in it, nothing
    assert warned == [f.message for f in rule.check(ctx) if "RDMA device" in f.message]
    others = {h: p for h, p in owner.items() if p.name != "head"}
    assert list(rule._bindable(ctx, storage, others)) == []
