"""Defaults and catalogue look-ups → one immutable ResolvedCluster that every later stage reads.

Naming scheme (docs/blueprint.md, docs/ports.md): hosts are ``<prefix><NNN>`` numbered from 1 per
pool; compute port *k* of a node carries rail *k*. Port names (RDMA device, interface, faceplate) come
from the platform's port map or the pool's declared ``ports`` (generator/platform/ports.py); where none
is published the plan keeps placeholder ids (``mlx5_<n>``, ``ib<k>``/``eth<k>``, ``nic<n>`` on mapped
servers) that are flagged unknown and never written into host configuration.

This module is the driver; the records are in ``model.py``, pools in ``pools.py`` (their ports in
``ports.py``), fabrics in ``fabrics.py``, size limits in ``size_checks.py`` and software pins in
``software.py``.
"""

from __future__ import annotations

from pathlib import Path as FsPath
from typing import NamedTuple, NoReturn

from blueprints.catalog import Catalog, CatalogError, default_catalog
from blueprints.models import Blueprint
from generator.findings import BlueprintError, Finding, Location, Severity
from generator.foreign import path_text
from generator.load import LoadedBlueprint
from generator.resolve.fabrics import resolve_fabrics
from generator.resolve.model import FABRIC_NAMES, NicPort, ResolvedCluster, ResolvedFabric, ResolvedPool
from generator.resolve.pools import duplicate_hostnames, resolve_pool
from generator.resolve.size_checks import refuse_too_many_nodes, size_budget_errors
from generator.resolve.software import default_pins

# the resolved records, imported from here by every later stage
__all__ = [
    "FABRIC_NAMES",
    "NicPort",
    "ResolvedCluster",
    "ResolvedFabric",
    "ResolvedPool",
    "catalog_path",
    "resolve",
]


class _Source(NamedTuple):
    blueprint: Blueprint
    file: str
    sha256: str
    base_dir: FsPath  # relative catalogue extensions are found from here


def _source(loaded: LoadedBlueprint | Blueprint) -> _Source:
    if isinstance(loaded, LoadedBlueprint):
        return _Source(loaded.blueprint, str(loaded.path), loaded.sha256, loaded.path.parent)
    return _Source(loaded, "<blueprint>", "", FsPath("."))


def catalog_path(loaded: LoadedBlueprint | Blueprint) -> FsPath | None:
    """The catalogue file the blueprint's ``catalog:`` names (None: it names none), found from the
    blueprint's folder (the working folder for standard input or a bare model). The one answer: resolve()
    reads this file and the commands refuse to write over it (generator.commands._common.blueprint_inputs),
    so the file protected is always the file read."""
    src = _source(loaded)
    return src.base_dir / src.blueprint.catalog if src.blueprint.catalog else None


def _catalog(loaded: LoadedBlueprint | Blueprint, catalog: Catalog | None, errors: list[Finding]) -> Catalog:
    """The built-in (or given) catalogue, extended by the blueprint's own catalogue file if it names one."""
    cat = catalog or default_catalog()
    where = catalog_path(loaded)
    if where is not None:
        try:
            return cat.extended(where)
        except CatalogError as exc:
            at = Location(exc.source, exc.line, exc.column or 1) if exc.source and exc.line else None
            errors.append(Finding("CAT002", Severity.ERROR, exc.message, ("catalog",), exc.hint, at))
    return cat


def _refuse(loaded: LoadedBlueprint | Blueprint, errors: list[Finding]) -> NoReturn:
    if isinstance(loaded, LoadedBlueprint):
        errors = [e if e.location else loaded.locate(e) for e in errors]  # catalogue errors keep theirs
    raise BlueprintError(errors)


def resolve(loaded: LoadedBlueprint | Blueprint, catalog: Catalog | None = None) -> ResolvedCluster:
    """Resolve defaults and catalogue references; raises BlueprintError with located findings."""
    src = _source(loaded)
    bp = src.blueprint
    errors: list[Finding] = []
    refuse_too_many_nodes(bp, loaded)
    cat = _catalog(loaded, catalog, errors)
    if errors:  # the refused file's entries are unknown below: one error at its line, not one per use
        _refuse(loaded, errors)
    fabrics = resolve_fabrics(bp, cat, errors)
    fabric_kinds = {n: f.kind for n, f in fabrics.items()}
    compute_topo = bp.fabrics.compute.topology if bp.fabrics.compute else None
    su_size = getattr(compute_topo, "scalable_unit", None)
    resolved = [resolve_pool(i, pool, cat, fabric_kinds, su_size, errors) for i, pool in enumerate(bp.pools)]
    pools = [p for p in resolved if p is not None]
    errors += duplicate_hostnames(pools)
    errors += size_budget_errors(fabrics, pools) if not errors else []
    if errors:
        _refuse(loaded, errors)
    suppressed = {s.rule: s.reason for s in bp.suppress}
    pins = default_pins(bp.software, cat, [p.gpu.sm_arch for p in pools if p.gpu is not None])
    # the name as text: headers, workbooks and reports are UTF-8, which a name's non-UTF-8 bytes are not
    name = path_text(src.file)
    return ResolvedCluster(bp, cat, tuple(pools), fabrics, suppressed, name, src.sha256, pins)
