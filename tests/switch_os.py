"""Blueprint variants that differ only in ``fabrics.<f>.switch_os`` (the tests of both switch configuration
forms start from the same fixtures)."""

from __future__ import annotations

from pathlib import Path

import yaml


def with_switch_os(src: Path | str, out_dir: Path, **os_by_fabric: str) -> Path:
    """Copy of ``src`` with ``switch_os`` set on the named fabrics, written into ``out_dir``."""
    doc = yaml.safe_load(Path(src).read_text())
    for fabric, os_name in os_by_fabric.items():
        doc["fabrics"][fabric]["switch_os"] = os_name
    tag = "-".join(f"{f}-{o}" for f, o in sorted(os_by_fabric.items()))
    dst = out_dir / f"{Path(src).stem}-{tag}.yaml"
    dst.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dst
