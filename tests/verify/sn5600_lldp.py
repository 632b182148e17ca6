"""Saved real lldpd output of a split-cage RoCE fabric (fixtures/lldp-sn5600): the cabled-as-planned files,
and variants in which a few devices' files are replaced by what lldpd printed after a cabling fault."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lldp-sn5600"
BLUEPRINT = FIXTURES / "sn5600.yaml"  # one RoCE fabric of SN5600s, every 800G cage split in two
TWO_FABRICS = FIXTURES / "sn5600m.yaml"  # the same, with a management fabric (mgmt/: every device's file)


def discovered(tmp_path: Path, variant: str | None = None) -> Path:
    """A directory of one file per device: the clean run, with the files of ``variant`` in place of theirs
    (a ``.json0`` file replaces the device's ``.json``)."""
    out = tmp_path / f"lldp-{variant or 'clean'}"
    if out.exists():
        return out
    shutil.copytree(FIXTURES / "clean", out)
    for f in sorted((FIXTURES / variant).iterdir()) if variant else ():
        (out / f"{f.name.split('.')[0]}.json").unlink(missing_ok=True)
        shutil.copy(f, out / f.name)
    return out
