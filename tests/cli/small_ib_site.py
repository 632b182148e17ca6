"""A small InfiniBand cluster (one SU of four DGX H100, a two-tier NDR fat-tree) and a catalogue file
beside it that redefines its leaf switch: the shape the review h154 reproductions used."""

from __future__ import annotations

from pathlib import Path

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: small-ib
description: small
site:
  name: dc1
  rows: 1
  racks_per_row: 4
  rack: {units: 42, power_kw: 60}
pools:
  - name: dgx
    role: gpu
    count: 4
    server: dgx-h100
    placement: {nodes_per_rack: 4}
fabrics:
  compute:
    technology: infiniband-ndr
    topology:
      kind: fat-tree
      tiers: 2
      switch: qm9700
      rail_optimized: true
      scalable_unit: 4
    subnet_manager: {kind: opensm, ha: true}
"""

SWITCH = """\
switches:
  qm9700:
    name: {name}
    manufacturer: {manufacturer}
    technology: infiniband
    speed_gbps: 400
    ports: 64
    cages: 32
    ports_per_cage: 2
    splits: {{200: 128}}
    form_factor: osfp-twin
    rack_units: 1
    power_w: 1720
    power_estimated: true
    latency_ns: 130
    sharp: true
    managed: true
    sharp_port: 65
"""


def write(folder: Path, catalog: str | None = None, name: str = "bp.yaml", extra_site: str = "") -> Path:
    """The blueprint in ``folder`` (with ``catalog: cat.yaml`` and that file when ``catalog`` is given);
    ``extra_site`` adds lines under `site:` (indented two spaces)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = BLUEPRINT
    if extra_site:
        text = text.replace(
            "  rack: {units: 42, power_kw: 60}\n", "  rack: {units: 42, power_kw: 60}\n" + extra_site
        )
    if catalog is not None:
        text = text.replace("name: small-ib\n", "name: small-ib\ncatalog: cat.yaml\n")
        (folder / "cat.yaml").write_text(catalog, encoding="utf-8")
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def switch_catalog(name: str = "'QM9700'", manufacturer: str = "NVIDIA") -> str:
    """A catalogue file redefining qm9700 with the given (YAML-quoted) name and manufacturer."""
    return SWITCH.format(name=name, manufacturer=manufacturer)
