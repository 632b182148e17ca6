"""Software pins: the driver branch, CUDA and NCCL a blueprint gets when it leaves them out (raised to what
its GPUs need), and the version comparison key the SFT rules use."""

from __future__ import annotations

from blueprints.catalog import Catalog
from blueprints.models.software import Software


def default_pins(software: Software, catalog: Catalog, sm_archs: list[int]) -> Software:
    """``software`` with the driver branch / CUDA the blueprint left out raised to what its GPUs need.

    A Blackwell blueprint without ``software:`` gets the architecture's default pins (R570 / CUDA 12.8 and
    an NCCL built for CUDA 12.8, data/software.yaml) instead of the model's 550 / 12.4 / NCCL 2.21.5, which
    cannot drive the GPU. Values the user wrote are kept as written (rules SFT001 and SFT004 judge them).
    """
    if catalog.software is None:
        return software
    update: dict[str, str] = {}
    for sm in sorted(set(sm_archs)):
        found = catalog.software.arch_of(sm)
        if found is None:
            continue
        for field_name, default in (
            ("driver_branch", found[1].default_driver_branch),
            ("cuda", found[1].default_cuda),
            ("nccl", found[1].default_nccl),
        ):
            current = update.get(field_name, getattr(software, field_name))
            given = field_name in software.model_fields_set
            if default and not given and version_key(default) > version_key(current):
                update[field_name] = default
    return software.model_copy(update=update) if update else software


def version_key(text: str) -> tuple[int, ...]:
    """``12.8`` → (12, 8); non-numeric parts count as 0 (a comparison key, not a parser)."""
    return tuple(int(p) if p.isdigit() else 0 for p in text.replace("-", ".").split("."))
