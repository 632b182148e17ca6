"""Plans for the cabling tests: a small hand-built one (every field known) and the examples' real ones."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
from generator.plan.model import BomLine, Device, Endpoint, Link, Plan, Rack
from generator.resolve import ResolvedCluster

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"


@cache
def cluster_of(path: Path) -> ResolvedCluster:
    return load_and_resolve(path)[1]


@cache
def plan_of(path: Path) -> Plan:
    return build_plan(cluster_of(path))


def node_ep(
    host: str, rdma: int, netdev: str, cage: int | None = None, cage_port: int | None = None
) -> Endpoint:
    return Endpoint(host, f"mlx5_{rdma}/1", 1, cage, cage_port, netdev)


def switch_ep(name: str, port: int, twin: bool = True) -> Endpoint:
    if twin:
        return Endpoint(name, str(port), port, (port + 1) // 2, 2 - port % 2)
    return Endpoint(name, str(port), port)


def small_plan(links: tuple[Link, ...] | None = None) -> Plan:
    """Two DGX H100 in rack r01-01, a compute leaf + spine and a management leaf in network rack r01-02.

    Uses the reference example's resolved cluster (site dc1, IB NDR compute, IB storage, 1G management)
    so catalogue look-ups are real; the links are listed out of pull order on purpose.
    """
    cluster = cluster_of(SUPERPOD)
    racks = (
        Rack("r01-01", 1, 1, 0.0, 0.0, 48, 44.0, "compute", ("dgx001", "dgx002"), 20.4, 16),
        Rack(
            "r01-02", 1, 2, 0.6, 0.0, 48, 44.0, "network", ("c-leaf-001", "c-spine-001", "m-leaf-001"), 3.5, 3
        ),
    )
    devices = (
        Device(
            "dgx001",
            "node",
            "gpu",
            "dgx-h100",
            None,
            pool="dgx",
            su=1,
            index=1,
            rack="r01-01",
            u=1,
            height_u=8,
            power_kw=10.2,
            ports=3,
        ),
        Device(
            "dgx002",
            "node",
            "gpu",
            "dgx-h100",
            None,
            pool="dgx",
            su=1,
            index=2,
            rack="r01-01",
            u=9,
            height_u=8,
            power_kw=10.2,
            ports=2,
        ),
        Device(
            "c-leaf-001",
            "switch",
            "leaf",
            "qm9700",
            "compute",
            su=1,
            index=1,
            rack="r01-02",
            u=1,
            power_kw=1.72,
            ports=64,
            ports_per_cage=2,
        ),
        Device(
            "c-spine-001",
            "switch",
            "spine",
            "qm9700",
            "compute",
            index=1,
            rack="r01-02",
            u=2,
            power_kw=1.72,
            ports=64,
            ports_per_cage=2,
        ),
        Device(
            "m-leaf-001",
            "switch",
            "leaf",
            "sn2201",
            "management",
            index=1,
            rack="r01-02",
            u=3,
            power_kw=0.1,
            ports=52,
        ),
    )
    if links is None:
        links = (
            Link(
                "C-LS-000001",
                "compute",
                "leaf_spine",
                switch_ep("c-leaf-001", 33),
                switch_ep("c-spine-001", 1),
                400.0,
                "mmf",
                3.0,
                2.1,
                None,
                "MFP7E10-N0xx",
            ),
            Link(
                "C-NL-000002",
                "compute",
                "node_leaf",
                node_ep("dgx002", 0, "ib0", 1, 1),
                switch_ep("c-leaf-001", 2),
                400.0,
                "mmf",
                5.0,
                4.2,
                0,
                None,
            ),  # part number left to the catalogue
            Link(
                "C-NL-000001",
                "compute",
                "node_leaf",
                node_ep("dgx001", 0, "ib0", 1, 1),
                switch_ep("c-leaf-001", 1),
                400.0,
                "mmf",
                5.0,
                4.4,
                0,
                "MFP7E10-N0xx",
            ),
            Link(
                "M-NL-000001",
                "management",
                "node_leaf",
                node_ep("dgx001", 10, "eth0"),
                switch_ep("m-leaf-001", 1, twin=False),
                1.0,
                "cat6",
                3.0,
                2.5,
                None,
                None,
            ),
            Link(
                "C-NL-000003",
                "compute",
                "node_leaf",
                node_ep("dgx001", 1, "ib1", 1, 2),
                switch_ep("c-leaf-001", 3),
                400.0,
                "mmf",
                5.0,
                4.4,
                1,
                "MFP7E10-N0xx",
            ),
        )
    bom = (
        BomLine("switch", "qm9700", 2, "NVIDIA Quantum-2 QM9700 (NDR, managed)"),
        BomLine("switch", "sn2201", 1, "NVIDIA Spectrum SN2201 (1G management)"),
        BomLine("server", "dgx-h100", 2, "NVIDIA DGX H100"),
        BomLine("cable", "mmf", 1, "400G 3 m multimode fibre", "MFP7E10-N0xx"),
        BomLine("cable", "mmf", 3, "400G 5 m multimode fibre", "MFP7E10-N0xx"),
        BomLine("cable", "cat6", 1, "1G 3 m Cat6"),
    )
    return Plan(
        cluster=cluster,
        devices=devices,
        links=links,
        racks=racks,
        metrics={},
        bom=bom,
        transceivers={"mma4z00-ns": 4},
    )
