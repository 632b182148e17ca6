"""The deployment targets (``targets.yaml`` beside this file): the one list the blueprint schema, the
resolver and the target registry (generator/deploy/targets/) all read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

DATA = Path(__file__).with_name("targets.yaml")
NO_TARGET = "none"  # deployment.target without a program: the on-prem inventory only


class Target(NamedTuple):
    provider: bool  # a cloud provider (a `deployment.cloud:` section) rather than on-prem bare metal
    own_access: tuple[str, ...] = ()  # access paths (deployment.cloud.access.via) only this provider has


# One entry per line: `name: {provider: true|false[, own_access: [path, ...]]}` and comments. Read with
# this pattern rather than a YAML library, which would double the schema's import time (benchmarks/
# startup.py); tests/unit/test_registries.py checks it reads what a YAML loader reads.
_ENTRY = re.compile(
    r"(?P<name>[a-z][a-z0-9-]*): \{provider: (?P<provider>true|false)"
    r"(?:, own_access: \[(?P<access>[a-z0-9-]+(?:, [a-z0-9-]+)*)?\])?\}\s*(?:#.*)?"
)


def _load(path: Path = DATA) -> dict[str, Target]:
    out: dict[str, Target] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _ENTRY.fullmatch(line)
        if m is None or m["name"] in out:
            raise ValueError(f"{path.name}:{number}: not `name: {{provider: true|false, own_access: [...]}}`")
        access = tuple(m["access"].split(", ")) if m["access"] else ()
        out[m["name"]] = Target(m["provider"] == "true", access)
    return out


# name -> record, in schema order (tests may add to it, as a new line in the file would)
TARGETS: dict[str, Target] = _load()


def providers() -> tuple[str, ...]:
    return tuple(name for name, t in TARGETS.items() if t.provider)


def is_provider(name: str) -> bool:
    target = TARGETS.get(name)
    return target is not None and target.provider


def access_owner(via: str) -> str | None:
    """The provider an access path belongs to (None: any target may use it)."""
    return next((name for name, t in TARGETS.items() if via in t.own_access), None)
