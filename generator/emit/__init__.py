"""Emitters: one module per output folder of `blueprint generate` (Plan + ResolvedCluster in, files out).

A module is an emitter when it defines ``NAME``, ``applies(cluster)`` and ``emit(cluster, plan, out)``.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

# The folders of build/, in the order they are produced (the product's output contract).
OUTPUTS = (
    "cabling",
    "ansible",
    "nccl",
    "pulumi",
    "slurm",
    "diagrams",
    "report",
    "subnet_manager",
    "switches",
)


@cache
def emitters() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(module, "NAME", None)
        if (
            name in OUTPUTS
            and callable(getattr(module, "emit", None))
            and callable(getattr(module, "applies", None))
        ):
            found[name] = module
    return {n: found[n] for n in OUTPUTS if n in found}
