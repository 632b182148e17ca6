"""One ``ResolvedFabric`` per blueprint fabric: its technology and (spine) switch models from the
catalogue."""

from __future__ import annotations

from blueprints.catalog import Catalog, CatalogError
from blueprints.catalog.schema import Switch
from blueprints.models import Blueprint, Fabric
from generator.findings import Finding, Path, Severity
from generator.resolve.model import FABRIC_NAMES, ResolvedFabric


def _switch(cat: Catalog, sid: str | None, where: Path, errors: list[Finding]) -> Switch | None:
    if sid is None:
        return None
    try:
        return cat.switch(sid)
    except CatalogError as exc:
        errors.append(Finding("CAT001", Severity.ERROR, exc.message, where, exc.hint))
        return None


def _fabric(fname: str, spec: Fabric, cat: Catalog, errors: list[Finding]) -> ResolvedFabric | None:
    path: Path = ("fabrics", fname)
    tech = cat.fabrics.get(spec.technology)
    if tech is None:
        message = f"fabric technology `{spec.technology}` is not in the catalogue"
        errors.append(Finding("CAT001", Severity.ERROR, message, (*path, "technology")))
        return None
    switch_id = getattr(spec.topology, "switch", None) if spec.topology else None
    spine_id = getattr(spec.topology, "spine_switch", None) if spec.topology else None
    switch = _switch(cat, switch_id, (*path, "topology", "switch"), errors)
    spine = _switch(cat, spine_id, (*path, "topology", "spine_switch"), errors)
    return ResolvedFabric(
        fname, spec.technology, tech, spec, switch_id, switch, spine_id or switch_id, spine or switch, path
    )


def resolve_fabrics(bp: Blueprint, cat: Catalog, errors: list[Finding]) -> dict[str, ResolvedFabric]:
    fabrics: dict[str, ResolvedFabric] = {}
    for fname in FABRIC_NAMES:
        spec: Fabric | None = getattr(bp.fabrics, fname)
        resolved = _fabric(fname, spec, cat, errors) if spec is not None else None
        if resolved is not None:
            fabrics[fname] = resolved
    return fabrics
