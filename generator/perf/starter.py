"""The starter blueprint of a candidate design: its pool, fabric and site sections as blueprint YAML data,
the YAML text `blueprint advise` / `init --from-advice` write, and the checked, atomic write."""

from __future__ import annotations

import math
import re
from typing import Any

from blueprints.catalog import Catalog
from blueprints.catalog.perf import perf_data
from blueprints.catalog.schema import Gpu, Server
from blueprints.models import Blueprint
from generator.perf.advice import Advice, AdviceError, Request


def _nic_model(cat: Catalog, preferred: str, speed: float, kind: str) -> str:
    protocol = "infiniband" if kind == "infiniband" else "roce" if kind == "roce" else "ethernet"

    def ok(nid: str) -> bool:
        n = cat.nics.get(nid)
        return n is not None and speed in n.speeds_gbps and protocol in n.protocols

    if ok(preferred):
        return preferred
    for nid in sorted(cat.nics):
        if ok(nid):
            return nid
    raise AdviceError(f"no catalogue NIC runs {kind} at {speed:g} Gb/s")


def _own_interconnect(gpu: Gpu) -> str:
    """The GPU's own link for a one-GPU server: its NVLink generation, else its PCIe generation."""
    if gpu.nvlink is not None:
        return f"nvlink{gpu.nvlink.generation}"
    if gpu.pcie_gen is None:
        raise AdviceError(f"the catalogue gives {gpu.name} neither NVLink nor a PCIe generation")
    return f"pcie{gpu.pcie_gen}"


def starter_pool(
    cat: Catalog, server_id: str, server: Server, nodes: int, technology: str | None, scope: str, gpu_id: str
) -> dict[str, Any]:
    pool: dict[str, Any] = {"name": "gpu", "role": "gpu", "count": nodes}
    gpu = cat.gpu(gpu_id)
    if scope == "gpu":
        units = int(perf_data().advisor.single_gpu_server_units.value)
        pool["spec"] = {
            "gpu": gpu_id,
            "gpus": 1,
            "gpu_interconnect": _own_interconnect(gpu),
            "nvlink_domain_gpus": 1,
            "nvswitches": 0,
            "pcie_gen": max(gpu.pcie_gen or server.pcie_gen, 4),
            "nics": [
                {"purpose": n.purpose, "model": n.model, "count": 1, "ports": 1, "speed_gbps": n.speed_gbps}
                for n in server.nics
                if n.purpose == "management"
            ],
            "power_kw": round(math.ceil(server.power_kw / server.gpus * 10) / 10, 1),
            "rack_units": units,
        }
        return pool
    if technology is None:
        pool["server"] = server_id
        return pool
    tech = cat.fabric(technology)
    nics = []
    changed = False
    for n in server.nics:
        entry = {
            "purpose": n.purpose,
            "model": n.model,
            "count": n.count,
            "ports": n.ports,
            "speed_gbps": n.speed_gbps,
        }
        if n.cage_ports != 1:
            entry["cage_ports"] = n.cage_ports
        if n.purpose == "compute" and n.speed_gbps != tech.speed_gbps:
            entry["model"] = _nic_model(cat, n.model, tech.speed_gbps, tech.kind)
            entry["speed_gbps"] = tech.speed_gbps
            changed = True
        nics.append(entry)
    if not changed:
        pool["server"] = server_id
        return pool
    pool["spec"] = server_spec(server, nics)
    return pool


def server_spec(server: Server, nics: list[dict[str, Any]]) -> dict[str, Any]:
    """A pool ``spec`` of the catalogue ``server`` (its GPUs, NVLink, PCIe, power and height) with ``nics``
    in place of its own adapters."""
    return {
        "gpu": server.gpu,
        "gpus": server.gpus,
        "gpu_interconnect": server.gpu_interconnect,
        "nvlink_domain_gpus": server.nvlink_domain_gpus,
        "nvswitches": server.nvswitches,
        "pcie_gen": server.pcie_gen,
        "nics": nics,
        "power_kw": server.power_kw,
        "rack_units": server.rack_units,
    }


def fabric_section(cat: Catalog, technology: str, topology: dict[str, Any]) -> dict[str, Any]:
    tech = cat.fabric(technology)
    out: dict[str, Any] = {"technology": technology, "topology": topology}
    if tech.kind == "infiniband":
        switch = cat.switch(topology["switch"])
        if topology["kind"] == "fat-tree":
            # NVIDIA's SuperPOD design: the SM and SHARP's Aggregation Manager on UFM appliances, never on
            # a GPU node (rules NET022/NET023; data/subnet_managers.yaml)
            out["subnet_manager"] = {
                "kind": "ufm",
                "ha": True,
                "routing_engine": "ftree",
                "sharp": bool(switch.sharp),
            }
        else:  # upstream OpenSM's Nue: deadlock-free in one VL, so on NCCL's one SL (NET029); SHARP needs a
            # flavour upstream OpenSM is not
            out["subnet_manager"] = {"kind": "opensm", "ha": True, "routing_engine": "nue"}
    elif tech.kind == "roce":
        out["lossless"] = {"pfc": True, "ecn": True}  # priority, DSCP and trust: the blueprint's defaults
    return out


def _safe_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    if not name or not name[0].isalpha():
        name = f"bp-{name}".strip("-")
    return name[:40].rstrip("-") or "starter"


def _site(racks: int, rack_kw: float) -> dict[str, Any]:
    adv = perf_data().advisor
    row = int(adv.racks_per_row.value)
    per_row = row if racks > row else max(1, racks)
    rows = max(1, math.ceil(racks / per_row))
    return {
        "name": "dc1",
        "rows": rows,
        "racks_per_row": per_row,
        "rack": {"units": int(adv.rack_units.value), "power_kw": rack_kw},
    }


def rack_power_kw(server: Server, scope: str) -> float:
    """The starter rack's power budget: the advisor's reference rack, or one whole NVLink-domain rack of the
    server where its domain spans several nodes (an NVL72 rack's 18 trays must share one rack; the
    catalogue's trays draw ~120 kW together, which no 44 kW rack holds)."""
    budget = float(perf_data().advisor.rack_power_kw.value)
    trays = server.nodes_per_nvlink_domain
    if scope == "gpu" or trays == 1:
        return budget
    return max(budget, math.ceil(trays * server.power_kw * 10) / 10)


def rack_estimate(server: Server, nodes: int, scope: str) -> int:
    adv = perf_data().advisor
    units = adv.rack_units.value - adv.reserved_rack_units.value
    ru = adv.single_gpu_server_units.value if scope == "gpu" else server.rack_units
    power = server.power_kw / server.gpus if scope == "gpu" else server.power_kw
    # a hair of tolerance: 18 trays x 6.7 kW = 120.6 kW, and 120.6 // 6.7 is 17.0 in binary floating point
    per_rack = max(1, int(min(rack_power_kw(server, scope) / max(power, 0.1) + 1e-9, units // ru)))
    return math.ceil(nodes / per_rack)


def network_racks(compute_racks: int) -> int:
    adv = perf_data().advisor
    return math.ceil(compute_racks / adv.compute_racks_per_switch_rack.value) + int(adv.spine_racks.value)


def starter_blueprint(
    req: Request, pool: dict[str, Any], fabric: dict[str, Any] | None, racks: int, precision: str,
    rack_kw: float,
) -> dict[str, Any]:  # fmt: skip
    bp: dict[str, Any] = {
        "apiVersion": "cluster-blueprint/v1",
        "name": _safe_name(req.name),
        "description": f"starter from blueprint advise: {req.params:.3g} parameters, {req.mode}",
        "site": _site(racks, rack_kw),
        "pools": [pool],
    }
    if fabric is not None:
        mgmt = perf_data().advisor.management
        bp["fabrics"] = {
            "compute": fabric,
            "management": {
                "technology": mgmt.technology,
                "topology": {"kind": "leaf-spine", "switch": mgmt.leaf, "spine_switch": mgmt.spine},
            },
        }
    wl: dict[str, Any] = {
        "params": req.params,
        "mode": req.mode,
        "precision": precision,
        "sequence_length": req.sequence_length,
    }
    if req.tokens:
        wl["tokens"] = req.tokens
    if req.target_days:
        wl["target_days"] = req.target_days
    bp["workload"] = wl
    Blueprint.model_validate(bp)  # the schema must accept what we write
    return bp


def starter_yaml(adv: Advice) -> str:
    import io

    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.default_flow_style = False
    yaml.width = 120
    buf = io.StringIO()
    yaml.dump(adv.starter, buf)
    head = [
        "# Starter blueprint written by `blueprint advise`.",
        f"# {adv.request.params:.3g} parameters, {adv.request.mode}: {adv.gpus} × {adv.gpu_id} on "
        f"{adv.nodes} node(s)"
        + (f", {adv.technology}, {adv.options[adv.chosen].label}" if adv.technology else ""),
        *(f"# - {r}" for r in adv.reasons),
        "# Review site, racks, storage and software before building; `blueprint validate` checks it.",
    ]
    return "\n".join(head) + "\n" + buf.getvalue()
