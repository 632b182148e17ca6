"""The physical plan: every device, port-to-port link and rack. Everything downstream reads this.

A ``Plan`` is immutable and deterministic: devices and links are sorted, link ids are stable for a
given blueprint (``<fabric letter>-<layer>-<n>``), so two builds of one blueprint are identical.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, overload

from generator.gcpause import gc_paused
from generator.topology.metrics import FabricMetrics  # defined beside the code that computes it

if TYPE_CHECKING:
    import networkx as nx

    from generator.plan.bom import Bom
    from generator.resolve import ResolvedCluster

_T = TypeVar("_T")


class Device(NamedTuple):  # NamedTuple, not a frozen dataclass: 10x cheaper to create at 100k GPUs
    name: str  # hostname for nodes; e.g. "c-leaf-su1-r3", "c-spine-07" for switches
    kind: str  # "node" | "switch" | "appliance" (a device on switch ports: generator/plan/attached.py)
    role: str  # node: pool role (gpu/storage/login/management); switch: tier (leaf/spine/core/router)
    model: str  # catalogue id (server, switch) or "custom"
    fabric: str | None  # switches: the fabric they serve; nodes: None
    pool: str | None = None  # nodes: pool name
    su: int | None = None  # fat-tree scalable unit (1-based); dragonfly group (1-based); torus: None
    pod: int | None = None  # 3-tier fat-tree pod (1-based)
    rail: int | None = None  # rail-optimised leaves: the rail they carry (0-based)
    index: int = 0  # type: ignore[assignment]  # ordinal inside its role (1-based); shadows tuple.index
    rack: str | None = None  # Rack.id
    u: int | None = None  # lowest occupied rack unit, 1 = bottom
    height_u: int = 1
    power_kw: float = 0.0
    ports: int = 0  # switches: logical ports; nodes: cabled NIC ports
    ports_per_cage: int = 1  # switches: 2 for twin-port OSFP cages
    planned: bool = True  # False for growth-only capacity (none today; kept for diffs)


class Endpoint(NamedTuple):
    device: str
    port: str  # switch: "17" (logical port number); node: "mlx5_0/1" (RDMA device / port)
    port_number: int  # switch logical port number; node: NIC port number on that adapter
    cage: int | None = None  # twin-port cage number (switch cages = (port+1)//2), or server cage
    cage_port: int | None = None  # 1 or 2 inside the cage
    netdev: str | None = None  # node ports: the OS interface (ibp220s0) when published or declared
    faceplate: str | None = None  # node ports: chassis label from the port map (OSFP1P1, BMC)

    @property
    def label_port(self) -> str:
        """Port as printed on labels: the chassis name (``OSFP1P1``), else cage/sub-port for twin cages
        (``P09/2``), else the port."""
        if self.faceplate:
            return self.faceplate
        if self.cage is not None and self.cage_port is not None:
            return f"P{self.cage:02d}/{self.cage_port}"
        return f"P{self.port}" if self.port.isdigit() else self.port


class Link(NamedTuple):
    id: str  # stable cable id, e.g. "C-NL-000001" (compute, node_leaf)
    fabric: str  # compute | storage | management
    layer: str  # node_leaf, leaf_spine, spine_core, local, global, torus, hypercube, node_node
    a: Endpoint
    b: Endpoint
    speed_gbps: float
    medium: str = ""  # media catalogue id (dac, acc, aoc, mmf, smf, smf-fr4, cat6)
    length_m: float = 0.0  # orderable length (rounded up)
    run_m: float = 0.0  # estimated run before rounding
    rail: int | None = None
    part_number: str | None = None


@dataclass(frozen=True, slots=True)
class Rack:
    """One rack of the site with its devices, bottom to top, and its power."""

    id: str  # "r01-05" = row 1, position 5 (both 1-based)
    row: int  # 1-based
    position: int  # 1-based within the row
    x_m: float
    y_m: float
    units: int
    power_budget_kw: float
    purpose: str  # "compute" | "network" | "storage" | "mixed"
    devices: tuple[str, ...] = ()  # device names, bottom to top
    power_kw: float = 0.0
    used_units: int = 0


@dataclass(frozen=True, slots=True)
class BomLine:
    """One line of the bill of materials."""

    item: str  # switch | server | cable | transceiver | rack
    model: str  # catalogue id or part description
    count: int
    detail: str = ""  # e.g. "3 m", "twin-port OSFP"
    part_number: str | None = None


class _FromBill(Generic[_T]):
    """A ``Plan`` field the bill of materials fills. Given to ``Plan(...)`` (or ``dataclasses.replace``) it
    is that value; left out, it is counted on first read by ``Plan.bill`` (generator/plan/bom.py), once for
    the three fields. No rule reads the BOM, so ``validate`` never pays for it (issue 32: 75 ms of a
    dragonfly's 0.7 s); ``plan`` and ``generate`` read the same value as when it was built eagerly."""

    def __init__(self, part: Callable[[Bom], _T], empty: Callable[[], _T] | None = None) -> None:
        self.part, self.empty = part, empty  # empty: the value with neither a given value nor a bill

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.slot = name, f"_given_{name}"

    @overload
    def __get__(self, plan: None, owner: type) -> _FromBill[_T]: ...
    @overload
    def __get__(self, plan: Plan, owner: type) -> _T: ...
    def __get__(self, plan: Plan | None, owner: type) -> _T | _FromBill[_T]:
        if plan is None:
            return self  # dataclass reads the default here: "not given"
        given = plan.__dict__.get(self.slot, self)
        if given is not self:
            return given  # type: ignore[no-any-return]
        if plan.bill is not None:
            value = plan.__dict__[self.slot] = self.part(plan._bill_counted)
            return value
        if self.empty is not None:
            return self.empty()
        raise TypeError(f"Plan has neither {self.name} nor a bill to count it from")

    def __set__(self, plan: Plan, value: _T) -> None:
        plan.__dict__[self.slot] = value  # frozen: only the dataclass __init__ sets it


@dataclass(frozen=True)
class Plan:
    """The physical plan: devices, cables, racks and per-fabric metrics (the BOM counted on first read)."""

    cluster: ResolvedCluster = field(repr=False, compare=False)
    devices: tuple[Device, ...]
    links: tuple[Link, ...]
    racks: tuple[Rack, ...]
    metrics: dict[str, FabricMetrics]
    bom: _FromBill[tuple[BomLine, ...]] = _FromBill(lambda b: tuple(b.lines))
    transceivers: _FromBill[dict[str, int]] = _FromBill(lambda b: b.transceivers)  # catalogue id → count
    transceivers_by_fabric: _FromBill[dict[str, dict[str, int]]] = _FromBill(  # fabric → id → count
        lambda b: b.by_fabric, dict
    )
    # counts the fields above on first read (generator/plan/build.py); None: they were given
    bill: Callable[[], Bom] | None = field(default=None, repr=False, compare=False)
    # fabric → (leaf, site port) free today that the declared growth cables a node to → that node's 1-based
    # number (generator/plan/attached.py growth_reservations); counted only when the blueprint declares
    # appliances, the only devices that could take such a port (rule TOP019)
    growth_ports: Mapping[str, Mapping[tuple[str, int], int]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @cached_property
    def _bill_counted(self) -> Bom:
        assert self.bill is not None
        with gc_paused():  # as the rest of the plan is built (generator/gcpause.py)
            return self.bill()

    @cached_property
    def device_by_name(self) -> dict[str, Device]:
        return {d.name: d for d in self.devices}

    @cached_property
    def rack_by_id(self) -> dict[str, Rack]:
        return {r.id: r for r in self.racks}

    @cached_property
    def _links_by_fabric(self) -> dict[str, tuple[Link, ...]]:
        out: dict[str, list[Link]] = {}
        for link in self.links:
            out.setdefault(link.fabric, []).append(link)
        return {k: tuple(v) for k, v in out.items()}

    def links_of(self, fabric: str) -> tuple[Link, ...]:
        return self._links_by_fabric.get(fabric, ())

    def switches(self, fabric: str | None = None) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if d.kind == "switch" and (fabric is None or d.fabric == fabric))

    def nodes(self) -> tuple[Device, ...]:
        return tuple(d for d in self.devices if d.kind == "node")

    def device_graph(self, fabric: str | None = None) -> nx.MultiGraph:
        """Devices as vertices, one edge per link (keyed by link id). Cheap enough at 100k GPUs."""
        import networkx as nx

        g = nx.MultiGraph()
        for d in self.devices:
            if fabric is None or d.fabric in (None, fabric):
                g.add_node(d.name, kind=d.kind, role=d.role, model=d.model, rack=d.rack or "")
        for link in self.links:
            if fabric is None or link.fabric == fabric:
                g.add_edge(
                    link.a.device, link.b.device, key=link.id, layer=link.layer, speed_gbps=link.speed_gbps
                )
        if fabric is not None:
            g.remove_nodes_from(
                [n for n, deg in list(g.degree()) if deg == 0 and g.nodes[n]["kind"] == "node"]
            )
        return g

    def port_graph(self, fabric: str | None = None) -> nx.Graph:
        """Every device and port as a vertex: device—port edges plus one edge per cable (small fabrics)."""
        import networkx as nx

        g = nx.Graph()
        for d in self.devices:
            if fabric is None or d.fabric in (None, fabric):
                g.add_node(d.name, kind=d.kind, role=d.role, model=d.model, rack=d.rack or "")
        for link in self.links:
            if fabric is not None and link.fabric != fabric:
                continue
            ends = []
            for ep in (link.a, link.b):
                pid = f"{ep.device}:{ep.port}"
                g.add_node(pid, kind="port", device=ep.device, port=ep.port)
                g.add_edge(ep.device, pid, kind="member")
                ends.append(pid)
            g.add_edge(
                ends[0],
                ends[1],
                kind="cable",
                id=link.id,
                layer=link.layer,
                speed_gbps=link.speed_gbps,
                medium=link.medium,
                length_m=link.length_m,
            )
        return g

    def _fabric_summary(self, name: str, m: FabricMetrics) -> dict[str, Any]:
        return {
            "topology": m.topology,
            "switches": m.switches,
            "ports_used": m.ports_used,
            "ports_free": m.ports_free,
            "cables": m.cables,
            "endpoints": m.endpoints,
            "injection_gbps": m.injection_gbps,
            "bisection_gbps": m.bisection_gbps,
            "oversubscription": m.oversubscription,
            "diameter_hops": m.diameter_hops,
            "mean_hops": m.mean_hops,
            "ecmp_paths": m.ecmp_paths,
            "spof": list(m.spof),
            "bandwidth_after_spine_loss": m.bandwidth_after_spine_loss,
            "transceivers": sum(self.transceivers_by_fabric.get(name, {}).values()),
            "transceivers_by_model": self.transceivers_by_fabric.get(name, {}),
            "notes": list(m.notes),
        }

    def summary(self) -> dict[str, Any]:
        """The `plan --format json` contract (stable keys; see README)."""
        compute = self.metrics.get("compute")
        return {
            "name": self.cluster.name,
            "nodes": self.cluster.node_count,
            "gpu_nodes": self.cluster.gpu_node_count,
            "gpus": self.cluster.gpu_count,
            "switches": _per_fabric_tally(self.metrics.values(), lambda m: m.switches),
            "cables": _per_fabric_tally(self.metrics.values(), lambda m: m.cables),
            "cables_total": len(self.links),
            "transceivers": sum(self.transceivers.values()),
            "transceivers_by_model": dict(sorted(self.transceivers.items())),
            "racks": len(self.racks),
            "power_kw": round(sum(r.power_kw for r in self.racks), 2),
            "bisection_gbps": compute.bisection_gbps if compute else 0.0,
            "oversubscription": compute.oversubscription if compute else {},
            "diameter_hops": compute.diameter_hops if compute else 0,
            "mean_hops": compute.mean_hops if compute else 0.0,
            "ecmp_paths": compute.ecmp_paths if compute else 0,
            "spof": list(compute.spof) if compute else [],
            "bandwidth_after_spine_loss": compute.bandwidth_after_spine_loss if compute else 1.0,
            "fabrics": {name: self._fabric_summary(name, m) for name, m in sorted(self.metrics.items())},
            "bom": [
                {
                    "item": b.item,
                    "model": b.model,
                    "count": b.count,
                    "detail": b.detail,
                    "part_number": b.part_number,
                }
                for b in self.bom
            ],
        }


def _per_fabric_tally(
    metrics: Iterable[FabricMetrics], counts: Callable[[FabricMetrics], dict[str, int]]
) -> dict[str, int]:
    """Tier (or layer) counts of every fabric in one map: the compute fabric's keys bare, the others'
    prefixed with the fabric name (``storage_leaf``)."""
    out: dict[str, int] = {}
    for m in metrics:
        prefix = "" if m.fabric == "compute" else f"{m.fabric}_"
        for key, n in counts(m).items():
            out[prefix + key] = out.get(prefix + key, 0) + n
    return out
