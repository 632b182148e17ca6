"""Schema versions and the upgrades between them (``blueprint migrate``).

Policy (docs/schema-versions.md): a blueprint names its schema with ``apiVersion``. Within one version,
changes are additive only (new optional keys, new catalogue ids, new rules); anything that would make a
valid file invalid or change its meaning gets the next version, and a ``Migration`` from the previous one
is added here in the same change, so ``blueprint migrate`` upgrades every older file, step by step,
keeping its comments and layout (ruamel round-trip). This tool reads only ``CURRENT``; a file of a newer
version is refused with a hint to upgrade cluster-blueprint.

``cluster-blueprint/v1`` is the first version: there are no migrations yet, and ``migrate`` reports a v1
file as current.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML

from blueprints.api_version import API_VERSION

CURRENT = API_VERSION


class MigrationError(ValueError):
    """The document cannot be migrated (not a mapping, unknown or newer apiVersion)."""


@dataclass(frozen=True)
class Migration:
    """One step: rewrites a document of ``source`` into ``target`` in place; returns notes for the user."""

    source: str
    target: str
    summary: str
    apply: Callable[[Any], list[str]]


# Ordered, oldest first; each target is the next step's source and the last target is CURRENT.
MIGRATIONS: tuple[Migration, ...] = ()


@dataclass
class Migrated:
    text: str
    source: str
    target: str
    steps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.steps)


def known_versions(migrations: Sequence[Migration] | None = None) -> list[str]:
    return [*(m.source for m in (MIGRATIONS if migrations is None else migrations)), CURRENT]


def version_hint(found: object) -> str:
    """What to do about a file whose apiVersion this tool does not read."""
    if isinstance(found, str) and found in known_versions()[:-1]:
        return f"`{found}` is an older schema: `blueprint migrate FILE` upgrades it to {CURRENT}"
    return (
        f"this cluster-blueprint reads {CURRENT}; a newer apiVersion needs a newer cluster-blueprint "
        "(docs/schema-versions.md)"
    )


def _yaml() -> YAML:
    yaml = YAML()  # round-trip: comments, key order and quoting survive
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def _bounded_version(text: str, file: str) -> tuple[object, str]:
    """The document's apiVersion and where it is (``file:line:col: ``), read by the loader's bounded parser
    first: it refuses alias bombs, deep flow nesting (quadratic in ruamel's scanner) and huge numbers in
    bounded time, located, before the round-trip parser (which keeps comments, and is unbounded) ever sees
    the text."""
    from generator.findings import BlueprintError
    from generator.load import parse_yaml

    try:
        source = parse_yaml(text, file)
    except BlueprintError as exc:
        first = exc.findings[0]
        at = first.location
        where = f"{at.file}:{at.line}:{at.column}: " if at else ""
        raise MigrationError(f"{where}{first.message}") from None
    data = source.data
    if not isinstance(data, Mapping):
        raise MigrationError(f"{file}:1:1: not a blueprint: the document is not a mapping of keys")
    if "apiVersion" not in data:
        raise MigrationError(
            f"{file}:1:1: no `apiVersion` key: a blueprint names its schema (apiVersion: {CURRENT})"
        )
    at = source.locate(("apiVersion",))
    return data["apiVersion"], f"{at.file}:{at.line}:{at.column}: "


def migrate_text(
    text: str, migrations: Sequence[Migration] | None = None, file: str = "<blueprint>"
) -> Migrated:
    """The document upgraded to CURRENT, one step at a time (unchanged text when already current)."""
    migrations = MIGRATIONS if migrations is None else migrations
    version, where = _bounded_version(text, file)
    if version == CURRENT:
        return Migrated(text, CURRENT, CURRENT)
    by_source = {m.source: m for m in migrations}
    if not isinstance(version, str) or version not in by_source:
        tag = getattr(getattr(version, "tag", None), "value", None)  # ruamel's TaggedScalar: `!custom v1`
        if tag:
            shown = f"`{getattr(version, 'value', '')}` tagged {tag}"
        else:
            shown = f"`{version}`" if isinstance(version, str) else f"{version!r} (not a string)"
        raise MigrationError(f"{where}apiVersion {shown} is not one this tool knows: {version_hint(version)}")
    yaml = _yaml()
    try:  # within the bounds checked above
        doc = yaml.load(text)
    except Exception as exc:  # ruamel raises several error types for broken YAML
        raise MigrationError(f"not valid YAML: {str(exc).splitlines()[0] if str(exc) else exc}") from None
    result = Migrated(text, version, CURRENT)
    while version != CURRENT:
        step = by_source[version]
        result.notes += step.apply(doc)
        doc["apiVersion"] = step.target
        result.steps.append(f"{step.source} → {step.target}: {step.summary}")
        version = step.target
    buf = io.StringIO()
    yaml.dump(doc, buf)
    result.text = buf.getvalue()
    return result
