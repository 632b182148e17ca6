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
import re
from collections import Counter
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


def _yaml(text: str = "") -> YAML:
    """ruamel's round-trip YAML (comments, key order and quoting survive), writing as ``text`` is written:
    its block-sequence indentation (ruamel's guess; a fixed one re-indented every list of the file), its
    document markers, and no line folded."""
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 1 << 30  # never fold: a 5,000-character description was wrapped
    if text:
        mapping, sequence, offset = _indents(text.replace("\r\n", "\n"))
        yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
        yaml.explicit_start = _DOC_START.search(text) is not None
        yaml.explicit_end = _DOC_END.search(text) is not None
    return yaml


# a block key whose value starts on the next line, and that line: its indentation and, for a list, the
# dash and the blanks after it
_NESTED = re.compile(r"^( *)[^ #\n-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*( *)(- *)?", re.M)


def _indents(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as ruamel's ``YAML.indent`` takes them, from the first
    nested mapping and the first block list under a key: ruamel writes its own (2, 2, 0) otherwise, and
    its guess reads the two from the lists alone (4-space mappings came back with 2)."""
    mapping: int | None = None
    sequence: tuple[int, int] | None = None
    for m in _NESTED.finditer(text):
        depth = len(m[2]) - len(m[1])
        if depth <= 0:
            continue
        if m[3] is None and mapping is None:
            mapping = depth
        elif m[3] is not None and sequence is None:
            sequence = (depth + len(m[3]), depth)
        if mapping is not None and sequence is not None:
            break
    seq, offset = sequence or (2, 0)
    return mapping or 2, max(seq, offset + 2), offset


_DOC_START = re.compile(r"^---(?:[ \t]|$)", re.M)  # a `---` marker (after comments or a %YAML directive)
_DOC_END = re.compile(r"^\.\.\.[ \t]*$", re.M)


def _as_written(out: str, text: str) -> str:
    """``out`` with ``text``'s byte-order mark and line breaks (ruamel writes neither: a CRLF file came
    back LF, a BOM was dropped)."""
    if "\r\n" in text:
        out = out.replace("\r\n", "\n").replace("\n", "\r\n")
    return ("\ufeff" + out) if text.startswith("\ufeff") and not out.startswith("\ufeff") else out


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
    yaml = _yaml(text)
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
    result.text = _as_written(buf.getvalue(), text)
    result.notes += _comments_lost(text, result.text)
    return result


_COMMENT = re.compile(r"(?:^|[ \t])(#.*)$", re.M)


def _comments_lost(before: str, after: str) -> list[str]:
    """A note for each comment of ``before`` the upgraded text no longer has: ruamel drops one inside a flow
    collection (`rack: {units: 42, # note`), and the upgrade must say so rather than lose it silently."""
    kept = Counter(m[1].rstrip() for m in _COMMENT.finditer(after))
    notes = []
    for m in _COMMENT.finditer(before):
        comment = m[1].rstrip()
        if kept[comment] > 0:
            kept[comment] -= 1
            continue
        line = before.count("\n", 0, m.start(1)) + 1
        notes.append(f"line {line}: the comment `{comment[:80]}` could not be kept; put it back by hand")
    return notes
