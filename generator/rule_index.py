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
import os
from pathlib import Path

from blueprints.snapshot import cache_root, private_dir

FORMAT = "1"
TEXT_FIELDS = ("id", "severity", "title", "doc", "why", "fix")
PACKAGES = (Path(__file__).resolve().parent, Path(__file__).resolve().parents[1] / "blueprints")
SOURCE_SUFFIXES = (".py", ".yaml", ".yml", ".json")

Entry = dict[str, object]  # TEXT_FIELDS as str, "tags" as list[str]


class Index:
    """Every id `explain` answers: rules first, then the other diagnostics; and the old spellings."""

    __slots__ = ("entries", "renamed")

    def __init__(self, entries: list[Entry], renamed: dict[str, str]) -> None:
        self.entries, self.renamed = entries, renamed

    def find(self, wanted: str) -> Entry | None:
        return next((e for e in self.entries if e["id"] == wanted), None)

    def ids(self) -> list[str]:
        return sorted(str(e["id"]) for e in self.entries)


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

    entries: list[Entry] = [
        _entry(r.id, r.severity, r.title, r.doc(), r.rationale, r.fix, list(r.tags)) for r in all_rules()
    ]
    entries += [
        _entry(d.id, d.severity, d.title, d.doc, d.rationale, d.fix, []) for d in DIAGNOSTICS.values()
    ]
    return Index(entries, dict(RENAMED))


def _entry(*fields: object) -> Entry:
    *text, tags = fields
    return {**{k: str(v) for k, v in zip(TEXT_FIELDS, text, strict=True)}, "tags": tags}


def source_key(packages: tuple[Path, ...]) -> str:
    """sha256 over the relative path and bytes of every source and data file under ``packages``."""
    digest = hashlib.sha256(f"{FORMAT}\0".encode())
    for top in packages:
        for root, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(n for n in names if n.endswith(SOURCE_SUFFIXES)):
                full = os.path.join(root, name)
                with open(full, "rb") as fh:
                    body = fh.read()
                rel = f"{top.name}/{os.path.relpath(full, top)}".encode()
                digest.update(len(rel).to_bytes(8, "big") + rel + len(body).to_bytes(8, "big") + body)
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
    return Index(entries, renamed)


def _write(where: Path, key: str, index: Index) -> None:
    """The index at ``where/key.json``, whole or not at all; older indexes are removed."""
    try:
        text = json.dumps({"entries": index.entries, "renamed": index.renamed}, ensure_ascii=False)
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(where):
            return
        import tempfile  # only on a miss

        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, where / f"{key}.json")  # concurrent writers each replace the file whole
        except BaseException:
            os.unlink(tmp)
            raise
        for old in where.glob("*.json"):
            if old.name != f"{key}.json":
                old.unlink(missing_ok=True)
    except (OSError, TypeError, ValueError):
        return  # an unwritable or full directory: the next process builds the index again
