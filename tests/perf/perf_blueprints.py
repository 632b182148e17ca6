"""Small blueprints for the performance-model tests (imported by name; the suite root owns conftest)."""

from __future__ import annotations

import io
import math
import sys
from pathlib import Path

from ruamel.yaml import YAML

from blueprints.catalog.perf import PerfData
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan


def single_gpu_nodes(
    nodes: int, technology: str, nic: str, speed: float, switch: str, sm: dict | None
) -> dict:
    """``nodes`` H100 servers with one GPU and one compute NIC each: the '1 NIC' nccl-tests setting."""
    fabric = {
        "technology": technology,
        "topology": {"kind": "fat-tree", "switch": switch, "rail_optimized": False},
    }
    if sm is not None:
        fabric["subnet_manager"] = sm
    return {
        "apiVersion": "cluster-blueprint/v1",
        "name": "one-nic",
        "site": {"rows": 1, "racks_per_row": 2, "rack": {"units": 48, "power_kw": 44}},
        "pools": [
            {
                "name": "gpu",
                "count": nodes,
                "spec": {
                    "gpu": "h100-sxm",
                    "gpus": 1,
                    "gpu_interconnect": "nvlink4",
                    "nvlink_domain_gpus": 1,
                    "pcie_gen": 5,
                    "power_kw": 2.0,
                    "rack_units": 2,
                    "nics": [{"purpose": "compute", "model": nic, "count": 1, "speed_gbps": speed}],
                },
            }
        ],
        "fabrics": {"compute": fabric},
    }


def server_nodes(server: str, nodes: int = 1, fabric: dict | None = None) -> dict:
    from blueprints.catalog import default_catalog

    # a rack-scale NVLink domain is racked whole (PWR007): its rack takes the domain's power (NVL72: 120.6 kW)
    spec = default_catalog().servers.get(server)
    domain_kw = spec.nodes_per_nvlink_domain * spec.power_kw if spec is not None else 0.0
    bp: dict = {
        "apiVersion": "cluster-blueprint/v1",
        "name": f"{server}-x{nodes}",
        "site": {
            "rows": 2,
            "racks_per_row": 16,
            "rack": {"units": 48, "power_kw": max(44, math.ceil(domain_kw))},
        },
        "pools": [{"name": "gpu", "count": nodes, "server": server}],
    }
    if fabric is not None:
        bp["fabrics"] = {"compute": fabric}
    return bp


def l40s_nodes(name: str, nodes: int, ports: int, speed_gbps: float, topology: dict) -> dict:
    """``nodes`` 4 x L40S PCIe servers, each with ``ports`` compute NIC ports of ``speed_gbps``, on an Ethernet
    compute fabric of that speed cabled as ``topology`` (the test cubes and dragonflies)."""
    spec = {
        "gpu": "l40s",
        "gpus": 4,
        "gpu_interconnect": "pcie4",
        "pcie_gen": 4,
        "power_kw": 2.2,
        "rack_units": 2,
        "nics": [
            {"purpose": "compute", "model": "cx6-dx", "count": ports, "ports": 1, "speed_gbps": speed_gbps}
        ],
    }
    return {
        "apiVersion": "cluster-blueprint/v1",
        "name": name,
        "site": {"rows": 8, "racks_per_row": 16, "rack": {"units": 42, "power_kw": 40}},
        "pools": [{"name": "node", "role": "gpu", "count": nodes, "spec": spec}],
        "fabrics": {"compute": {"technology": f"ethernet-{speed_gbps:g}", "topology": topology}},
    }


def build(data: dict, directory: Path, name: str = "bp.yaml"):  # type: ignore[no-untyped-def]
    """Write a blueprint dict, load, resolve and plan it: returns (cluster, plan, path)."""
    path = directory / name
    with path.open("w") as fh:
        YAML().dump(data, fh)
    _, cluster = load_and_resolve(path)
    return cluster, build_plan(cluster), path


def nccl_with(base: PerfData, **values: float) -> PerfData:
    """``base`` with the named nccl.* constants set to ``values`` (what-if copies for tests)."""
    nc = base.nccl
    update = {k: getattr(nc, k).model_copy(update={"value": v}) for k, v in values.items()}
    return base.model_copy(update={"nccl": nc.model_copy(update=update)})


def reproduced(entry_id: str, directory: Path) -> Path:
    """The blueprint of an evaluation row, as `benchmarks/evaluate.py --reproduce` prints it, written to
    ``directory``."""
    benchmarks = str(Path(__file__).resolve().parents[2] / "benchmarks")
    if benchmarks not in sys.path:
        sys.path.insert(0, benchmarks)
    import evaluate

    buf = io.StringIO()
    assert evaluate.reproduce(entry_id, out=buf) == 0
    path = directory / f"{entry_id}.yaml"
    path.write_text(buf.getvalue())
    return path


EVALUATION = Path(__file__).parents[2] / "benchmarks" / "evaluation.yaml"


def outside_runs(name: str) -> dict:
    """A file of published runs kept outside the evaluation set (tests/perf/data/``name``)."""
    return YAML(typ="safe", pure=True).load((Path(__file__).parent / "data" / name).read_text())
