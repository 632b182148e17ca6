"""The emitter registry: every output of `blueprint generate`, found by discovery like the rules are.

An output is one module (or package) directly under ``generator/emit/`` that defines a subclass of
:class:`Emitter` with a ``name`` (its folder in the build), an ``order`` (its place in the build, the
product's output contract: data on the emitter, no central list), ``applies(cluster)`` and ``emit(ctx)``
receiving one :class:`BuildContext`. Nothing else is edited to add one.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster


@dataclass(frozen=True)
class BuildContext:
    """What `generate` hands every emitter: the checked cluster, its plan, the output's own fresh folder and
    the findings `validate` reported (the report lists them)."""

    cluster: ResolvedCluster
    plan: Plan
    out: Path
    findings: tuple[dict[str, Any], ...] = ()


class Emitter(ABC):
    """One output folder of the build."""

    name: str = ""  # the folder under build/ (and the `--only` word)
    order: int = 0  # place in the build: lower first

    @abstractmethod
    def applies(self, cluster: ResolvedCluster) -> bool:
        """Whether this blueprint has anything for this output (else `generate` reports it skipped)."""

    @abstractmethod
    def emit(self, ctx: BuildContext) -> None:
        """Write the files (deterministic bytes) under ``ctx.out``, a fresh folder for this output."""


def _declared(module: ModuleType) -> list[Emitter]:
    """The emitters ``module`` defines: its concrete Emitter subclasses, else the module convention."""
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, Emitter)
        and value.__module__ == module.__name__
        and not getattr(value, "__abstractmethods__", None)
    ]
    # none: a helper module (ibnetdiscover, lldp: what `verify` expects to discover), not an output
    return [cls() for cls in classes]


def discover(package: str, path: Sequence[str]) -> dict[str, Emitter]:
    """Every emitter of the modules directly in ``path``, in build order; a name defined twice is a bug."""
    found: dict[str, Emitter] = {}
    for info in pkgutil.iter_modules(list(path)):
        if info.name.startswith("_"):
            continue
        for emitter in _declared(importlib.import_module(f"{package}.{info.name}")):
            if not emitter.name:
                raise RuntimeError(f"emitter {type(emitter).__qualname__} ({info.name}) has no name")
            if emitter.name in found:
                raise RuntimeError(f"output {emitter.name} is defined twice ({info.name})")
            found[emitter.name] = emitter
    return {e.name: e for e in sorted(found.values(), key=lambda e: (e.order, e.name))}


@cache
def _cached(package: str, path: tuple[str, ...]) -> dict[str, Emitter]:
    return discover(package, path)


def emitters() -> dict[str, Emitter]:
    """name -> emitter of every output, in build order (cached per package path)."""
    import generator.emit as emit_pkg

    return dict(_cached(emit_pkg.__name__, tuple(emit_pkg.__path__)))
