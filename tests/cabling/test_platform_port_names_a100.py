"""A DGX A100 uses NVIDIA's published GPU-to-HCA pairing for its rails (NCCL, labels, NetBox).

Compared with NVIDIA/deepops workloads/burn-in/syscfg-dgxa100-80gb.sh (GPU_AFFINITY / UCX_AFFINITY), kept
as test data in tests/data/vendor_tables/dgx_a100_syscfg.sh. The interface names are not published: the
outputs must not invent them, and PLT001 says so at the pool's `server:` line.
"""

from __future__ import annotations

from functools import cache

import netbox_checks
from conftest import EXAMPLES
from vendor_tables import dgx_a100_compute_hcas

from generator.emit import nccl
from generator.emit.cabling import render_format
from generator.emit.cabling.rows import cable_rows
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import Plan

EXAMPLE = EXAMPLES / "hdr-fat-tree-a100.yaml"
HOST = "dgx001"


@cache
def _plan() -> Plan:
    return build_plan(load_and_resolve(EXAMPLE)[1])


def test_nccl_ib_hca_is_the_vendor_gpu_order() -> None:
    plan = _plan()
    pool = next(p for p in plan.cluster.pools if p.name == "dgx")
    prof = nccl.derive(plan.cluster, pool, plan)
    assert prof.env()["NCCL_IB_HCA"] == "=" + ",".join(f"{h}:1" for h in dgx_a100_compute_hcas())
    assert "NVIDIA/deepops" in prof.get("NCCL_IB_HCA").reason
    # no interface name is published: none is emitted
    assert "NCCL_SOCKET_IFNAME" not in prof.env()


def test_rail_k_is_cabled_from_the_hca_of_gpu_k() -> None:
    plan = _plan()
    hcas = dgx_a100_compute_hcas()
    by_rail = {
        link.rail: end.port
        for link in plan.links_of("compute")
        for end in (link.a, link.b)
        if end.device == HOST
    }
    assert by_rail == {k: f"{h}/1" for k, h in enumerate(hcas)}
    labels = {
        r.a.label.rsplit("-", 1)[1]
        for r in cable_rows(plan.cluster, plan)
        if r.fabric == "compute" and r.a.device == HOST
    }
    assert labels == {f"{h}/1" for h in hcas}


def test_netbox_names_are_the_vendor_devices_and_no_placeholder_collides() -> None:
    plan = _plan()
    t = netbox_checks.read(render_format(plan.cluster, plan, "netbox"))
    names = [r["name"] for r in t["interfaces.csv"] if r["device"] == HOST]
    assert {f"{h}/1" for h in dgx_a100_compute_hcas()} <= set(names)
    assert len(names) == len(set(names))
    # the storage ports are not in the vendor table: they keep non-mlx5 placeholder ids, so the
    # compute rails' real mlx5_8 / mlx5_9 are not claimed twice
    pool = next(p for p in plan.cluster.pools if p.name == "dgx")
    storage = [p.rdma_dev for p in pool.ports if p.purpose == "storage"]
    assert storage and not any(d.startswith("mlx5_") for d in storage)
