"""The expected fabric as the tools on site report it: ibnetdiscover net files (InfiniBand) and expected
LLDP neighbours (Ethernet/RoCE). The renderers live in generator.emit.ibnetdiscover / generator.emit.lldp
(shared with verify-cabling); this module picks the fabrics they apply to and names the files.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from generator.emit.cabling.rows import CablingError
from generator.plan.model import Plan
from generator.resolve import ResolvedCluster


def _module(name: str) -> ModuleType:
    try:
        return importlib.import_module(f"generator.emit.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"generator.emit.{name}":
            raise
        raise CablingError(
            f"the {name} renderer (generator.emit.{name}) is not available in this install"
        ) from exc


def fabrics_of_kind(cluster: ResolvedCluster, plan: Plan, infiniband: bool) -> list[str]:
    """Fabrics with cables whose technology is (or is not) InfiniBand, in blueprint order."""
    out = []
    for name, fabric in cluster.fabrics.items():
        if (fabric.kind == "infiniband") == infiniband and any(link.fabric == name for link in plan.links):
            out.append(name)
    return out


def _select(
    cluster: ResolvedCluster, plan: Plan, fabric: str | None, infiniband: bool, what: str
) -> list[str]:
    names = fabrics_of_kind(cluster, plan, infiniband)
    if fabric is None:
        return names
    if fabric not in names:
        kind = "an InfiniBand" if infiniband else "an Ethernet/RoCE"
        have = ", ".join(names) or "none"
        raise CablingError(
            f"--fabric {fabric}: not {kind} fabric with cables, so no {what} output "
            f"(fabrics that have one: {have})"
        )
    return [fabric]


def ibnetdiscover_files(cluster: ResolvedCluster, plan: Plan, fabric: str | None = None) -> dict[str, str]:
    """``<fabric>.net`` → ibnetdiscover/ibsim net file, for each InfiniBand fabric (or just ``fabric``)."""
    names = _select(cluster, plan, fabric, True, "ibnetdiscover")
    if not names:
        return {}
    render = _module("ibnetdiscover").render_netfile
    return {f"{name}.net": render(plan, fabric=name) for name in names}


def lldp_files(cluster: ResolvedCluster, plan: Plan, fabric: str | None = None) -> dict[str, str]:
    """``<fabric>.json`` → expected LLDP neighbours of every switch, for each Ethernet/RoCE fabric (or just
    ``fabric``): one file per fabric, not one per switch."""
    names = _select(cluster, plan, fabric, False, "lldp")
    if not names:
        return {}
    render = _module("lldp").render_lldp_fabric
    texts = {f"{name}.json": render(plan, name) for name in names}
    return {file: text for file, text in texts.items() if text is not None}
