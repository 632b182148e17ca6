"""What `blueprint explain` says of every rule and diagnostic, kept between processes.

Listing the rules imports every rule module and, with them, the models, the catalogue and the plan:
about 0.18 s of CPU, twenty times Python's own start-up, to print a paragraph (issue 32: `explain`
imports none of them). What `explain` prints of an id is plain strings (severity, title, doc, why,
fix, tags), so the whole index is kept as JSON in $XDG_CACHE_HOME/cluster-blueprint/explain/, keyed by
the sha256 of the bytes of every module and data file of the ``generator`` and ``blueprints`` packages
(a rule's text can only come from them): an edited rule, model or catalogue is a new key. As the
catalogue's parse cache, it is read only from a directory of this user that nobody else can write, and
only when every entry has exactly the expected string fields; a miss, a damaged or foreign file or an
unwritable directory only costs that process the imports.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TypedDict

from blueprints.snapshot import PACKAGE_DIR, cache_root, code_digest, private_dir

FORMAT = "1"
TEXT_FIELDS = ("id", "severity", "title", "doc", "why", "fix")
PACKAGES = (Path(__file__).resolve().parent, PACKAGE_DIR)  # generator/ and blueprints/
SOURCE_SUFFIXES = (".py", ".yaml", ".yml", ".json")


class Entry(TypedDict):
    id: str
    severity: str
    title: str
    doc: str
    why: str
    fix: str
    tags: list[str]


class Index:
    """Every id `explain` answers: rules first, then the other diagnostics; and the old spellings."""

    __slots__ = ("entries", "renamed")

    def __init__(self, entries: list[Entry], renamed: dict[str, str]) -> None:
        self.entries, self.renamed = entries, renamed

    def find(self, wanted: str) -> Entry | None:
        return next((e for e in self.entries if e["id"] == wanted), None)

    def ids(self) -> list[str]:
        return sorted(e["id"] for e in self.entries)


def load_index() -> Index:
    """The index from the cache when it was made from these very files, else built (and kept)."""
    where = _cache_dir()
    try:
        key = source_key(PACKAGES) if where is not None else ""
    except OSError:  # a package file cannot be read: no key, so no cache (the import says what is wrong)
        where = None
    found = _read(where / f"{key}.json") if where is not None and private_dir(where) else None
    if found is not None:
        return found
    made = build_index()
    if where is not None:
        _write(where, key, made)
    return made


def build_index() -> Index:
    """Imports every rule module (the models, the catalogue, the plan with them)."""
    from generator.diagnostics import DIAGNOSTICS, RENAMED
    from generator.rules.registry import all_rules

    entries = [_entry(r.id, r.severity, r.title, r.doc(), r.rationale, r.fix, r.tags) for r in all_rules()]
    entries += [_entry(d.id, d.severity, d.title, d.doc, d.rationale, d.fix) for d in DIAGNOSTICS.values()]
    return Index(entries, dict(RENAMED))


def _entry(
    id_: str, severity: object, title: str, doc: str, why: str, fix: str, tags: tuple[str, ...] = ()
) -> Entry:
    return Entry(id=id_, severity=str(severity), title=title, doc=doc, why=why, fix=fix, tags=list(tags))


def source_key(packages: tuple[Path, ...]) -> str:
    """sha256 over every module and data file under ``packages`` (blueprints/snapshot.py ``code_digest``)."""
    digest = hashlib.sha256(f"{FORMAT}\0".encode())
    for top in packages:
        digest.update(code_digest(top, SOURCE_SUFFIXES).encode())
    return digest.hexdigest()


def _cache_dir() -> Path | None:
    root = cache_root()
    return None if root is None else root / "explain"


def _read(path: Path) -> Index | None:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None  # none yet, or damaged: build again
    return _checked(doc)


def _checked(doc: object) -> Index | None:
    """The index a file holds, if it has exactly the shape this module writes; else None."""
    if not isinstance(doc, dict) or set(doc) != {"entries", "renamed"}:
        return None
    entries, renamed = doc["entries"], doc["renamed"]
    if not isinstance(entries, list) or not isinstance(renamed, dict):
        return None
    for e in entries:
        if not isinstance(e, dict) or set(e) != {*TEXT_FIELDS, "tags"}:
            return None
        tags = e["tags"]
        if not all(isinstance(e[k], str) for k in TEXT_FIELDS) or not isinstance(tags, list):
            return None
        if not all(isinstance(t, str) for t in tags):
            return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in renamed.items()):
        return None
    return Index(entries, renamed)  # type: ignore[arg-type]  # each entry's shape checked above


def _write(where: Path, key: str, index: Index) -> None:
    """The index at ``where/key.json``, whole or not at all; older indexes are removed."""
    try:
        text = json.dumps({"entries": index.entries, "renamed": index.renamed}, ensure_ascii=False)
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(where):
            return
        from generator.fsutil import atomic_write_text  # only on a miss

        atomic_write_text(where / f"{key}.json", text)  # concurrent writers each replace the file whole
        for old in where.glob("*.json"):
            if old.name != f"{key}.json":
                old.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        return  # an unwritable or full directory: the next process builds the index again
