"""Emitters: one output folder of `blueprint generate` each (Plan + ResolvedCluster in, files out).

The registry is generator/emit/_registry.py: a module under generator/emit/ defining an ``Emitter``
subclass (name, order, applies, emit(BuildContext)) is an output; nothing else is edited to add one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.emit._registry import Emitter

# The registry's output names in build order, written out so that `blueprint generate --help` imports no
# emitter at start-up (tests/cli/test_startup_imports.py). Only help text reads it; the build reads the
# registry, and tests/unit/test_registries.py checks the two are the same.
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


def emitters() -> dict[str, Emitter]:
    """name -> emitter of every output, in build order (imports every emitter: not for start-up)."""
    from generator.emit._registry import emitters as registered

    return registered()
