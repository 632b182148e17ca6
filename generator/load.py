"""YAML → blueprint models, keeping every key's position so errors say file:line:col."""

from __future__ import annotations

import difflib
import hashlib
import re
import sys
import types
import typing
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError, YAMLWarning
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scanner import Scanner

from blueprints.models import Blueprint
from blueprints.models.base import SAFE_NAME_RE
from blueprints.models.nodes import NETDEV_PATTERN
from generator.findings import BlueprintError, Finding, Location, Path, Severity, dotted
from generator.foreign import ForeignInputError, read_foreign

MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = 200_000  # bounds alias expansion ("billion laughs") and absurd documents
MAX_DEPTH = 40
UNION_TAGS = ("fat-tree", "dragonfly", "torus", "hypercube", "leaf-spine")


@dataclass(frozen=True)
class SourceMap:
    """Positions (1-based) of every key and sequence item in one YAML file."""

    file: str
    positions: Mapping[Path, tuple[int, int]]
    data: Any

    def locate(self, path: Path) -> Location:
        """The position of ``path`` or of its deepest existing ancestor (skipping union tags)."""
        node = self.data
        found: Path = ()
        for part in path:
            # a segment the data does not have (a union tag, a missing key) is skipped
            if isinstance(node, Mapping):
                if part not in node:
                    continue
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                continue
            found = (*found, part)
        line, col = self.positions.get(found, (1, 1))
        return Location(self.file, line, col)


@dataclass(frozen=True)
class LoadedBlueprint:
    """A blueprint file read and validated: the model, its key positions, path and the sha256 of its bytes."""

    blueprint: Blueprint
    source: SourceMap
    path: FsPath
    sha256: str

    def locate(self, finding: Finding) -> Finding:
        return finding.located(self.source.locate(finding.path))


class _Counter:
    def __init__(self, limit: int = MAX_NODES) -> None:
        self.n = 0
        self.limit = limit


def _check_bounds(
    path: Path, positions: dict[Path, tuple[int, int]], counter: _Counter, depth: int, file: str
) -> None:
    """Refuse documents with too many values (alias bombs) or too deep nesting."""
    counter.n += 1
    if counter.n > counter.limit:
        # aliases share their anchor's nodes (and positions): point at the top-level key being expanded
        top = path[:1]
        raise BlueprintError(
            [
                Finding(
                    "LOAD002",
                    Severity.ERROR,
                    f"document too large: more than {counter.limit:,} values"
                    + (f" under `{top[0]}` (alias expansion?)" if top else ""),
                    top,
                    "blueprints are small; remove anchors that multiply data",
                    Location(file, *positions.get(top, (1, 1))),
                )
            ]
        )
    if depth > MAX_DEPTH:
        message = f"nesting deeper than {MAX_DEPTH} levels"
        location = Location(file, *positions.get(path, (1, 1)))
        raise BlueprintError([Finding("LOAD002", Severity.ERROR, message, path, None, location)])


def _plain(
    node: Any, path: Path, positions: dict[Path, tuple[int, int]], counter: _Counter, depth: int, file: str
) -> Any:
    """Copy ruamel's tree into plain dict/list, recording positions; bounded in size and depth."""
    _check_bounds(path, positions, counter, depth, file)
    if isinstance(node, CommentedMap):
        return _plain_map(node, path, positions, counter, depth, file)
    if isinstance(node, CommentedSeq):
        items = []
        for i, value in enumerate(node):
            _record(positions, (*path, i), path, node.lc.item, i)
            items.append(_plain(value, (*path, i), positions, counter, depth + 1, file))
        return items
    for kind in (str, bool, int, float):  # ruamel's scalar subclasses → the plain types (bool before int)
        if isinstance(node, kind):
            return kind(node)
    return node


def _record(
    positions: dict[Path, tuple[int, int]], key_path: Path, parent: Path, where: Any, key: Any
) -> None:
    """The 1-based position of a key or item (ruamel's 0-based ``lc``), else its parent's."""
    try:
        line, col = where(key)
        positions[key_path] = (line + 1, col + 1)
    except (KeyError, TypeError, AttributeError):
        positions[key_path] = positions.get(parent, (1, 1))


def _plain_map(
    node: CommentedMap,
    path: Path,
    positions: dict[Path, tuple[int, int]],
    counter: _Counter,
    depth: int,
    file: str,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if not isinstance(key, str | int | float | bool) or key is None:
            location = Location(file, *positions.get(path, (1, 1)))
            message = "mapping keys must be plain scalars"
            raise BlueprintError([Finding("LOAD001", Severity.ERROR, message, path, None, location)])
        skey = str(key)
        _record(positions, (*path, skey), path, node.lc.key, key)
        out[skey] = _plain(value, (*path, skey), positions, counter, depth + 1, file)
    return out


def _first_key_line(text: str, key: str, mapping_mark: Any, dup_line: int, dup_col: int) -> int | None:
    """The line of the first ``key:`` at the duplicate's column inside the mapping that repeats it."""
    lines = text.splitlines()
    start = mapping_mark.line if mapping_mark is not None else 0
    for i in range(start, min(dup_line - 1, len(lines))):
        rest = lines[i][dup_col - 1 :]
        if rest.startswith((f"{key}:", f'"{key}":', f"'{key}':")) and (
            lines[i][: dup_col - 1].strip() in ("", "-")
        ):
            return i + 1
    return None


_HUGE_NUMBER = re.compile(r"\d{4000,}")


# quoted scalars and comments (skipped), or a flow bracket (counted)
_FLOW_TOKEN = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|#[^\n]*|[\[\]{}]""")


def flow_too_deep(text: str, limit: int) -> int | None:
    """The offset where flow nesting (``[[[`` / ``{{{``) passes ``limit``, or None. The YAML scanner's
    work grows with the square of the flow depth (4 KB of ``[`` took minutes), so this runs first."""
    if text.count("[") + text.count("{") <= limit:  # cannot nest deeper: no need to tokenize
        return None
    depth = 0
    for m in _FLOW_TOKEN.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return m.start()
        elif token in "]}":
            depth = max(0, depth - 1)
    return None


def _offset_position(text: str, at: int) -> tuple[int, int]:
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def _unmarked_position(text: str, exc: BaseException) -> tuple[int, int]:
    """Line and column for the errors the YAML parser raises without a mark: where flow nesting passes
    MAX_DEPTH (recursion), the run of digits too long for an int, or the character YAML does not allow;
    else the start of the file."""
    at: int | None = None
    if isinstance(exc, RecursionError):
        at = flow_too_deep(text, MAX_DEPTH)
    elif isinstance(exc, ValueError) and (m := _HUGE_NUMBER.search(text)):
        at = m.start()
    elif isinstance(exc, ReaderError) and isinstance(exc.position, int) and 0 <= exc.position <= len(text):
        at = exc.position  # a character YAML does not allow (an escape sequence): its index in the text
    return (1, 1) if at is None else _offset_position(text, at)


def _error(rule: str, message: str, hint: str | None, location: Location) -> BlueprintError:
    """A load error about the whole document (empty path) at ``location``."""
    return BlueprintError([Finding(rule, Severity.ERROR, message, (), hint, location)])


def _duplicate_key_problem(exc: MarkedYAMLError, text: str, line: int, col: int) -> str:
    """``duplicate key `count` (first at line 12)`` from ruamel's message."""
    # ruamel: problem = 'found duplicate key "count" with value "8" (original value: "4")'
    dup = re.search(r'duplicate key "([^"]*)"', str(exc.problem or exc))
    if dup is None:
        return "duplicate key"
    first = _first_key_line(text, dup.group(1), exc.context_mark, line, col)
    return f"duplicate key `{dup.group(1)}`" + (f" (first at line {first})" if first else "")


def _syntax_error(exc: MarkedYAMLError, text: str, file: str) -> BlueprintError:
    """A YAML error the parser located (its problem mark, else its context mark)."""
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = (exc.problem or exc.context or "invalid YAML").strip()
    hint = None
    if "duplicate key" in str(exc):
        problem = _duplicate_key_problem(exc, text, line, col)
        hint = "each key may appear once in a mapping"
    return _error("LOAD001", f"YAML syntax error: {problem}", hint, Location(file, line, col))


def _unmarked_error(exc: BaseException, text: str, file: str) -> BlueprintError:
    """A YAML error without a mark (deep recursion, huge number, ...), located by ``_unmarked_position``."""
    if isinstance(exc, RecursionError):
        what = "nesting too deep"
    elif isinstance(exc, ValueError) and "sys.set_int_max_str_digits" in str(exc):
        # Python's own advice would follow: "use sys.set_int_max_str_digits() to increase the limit"
        what = f"a number of more than {sys.get_int_max_str_digits():,} digits"
    else:
        what = str(exc).splitlines()[0] if str(exc) else ""
    message = f"YAML error: {what or type(exc).__name__}"
    return _error("LOAD001", message, None, Location(file, *_unmarked_position(text, exc)))


# Blanks and a comment up to the end of the line, in block context (only spaces) and in flow context
# (spaces and tabs); the line-break characters are ruamel's _THE_END. _LINES: whole such lines ending in
# the common breaks, skipped in one step. Possessive quantifiers: a greedy group repeated 400k times
# keeps 200 MB of backtracking state in `re` (and 2 s); these keep none.
_END = "\\0\\r\\n\\x85\\u2028\\u2029"
_BLOCK_GAP = re.compile(f"[ ]*+(?:#[^{_END}]*+)?+")
_FLOW_GAP = re.compile(f"[ \\t]*+(?:#[^{_END}]*+)?+")
_BLOCK_LINES = re.compile(f"(?:[ ]*+(?:#[^{_END}]*+)?+\\r?\\n)++")
_FLOW_LINES = re.compile(f"(?:[ \\t]*+(?:#[^{_END}]*+)?+\\r?\\n)++")


class _LinearScanner(Scanner):
    """ruamel's scanner without comment tokens, skipping blank and comment lines a run at a time.

    The round-trip scanner turns every comment into tokens and marks (42 µs a line: 800k comment lines
    took 34 s) and the plain scanner still steps through them a character at a time; the loader needs the
    positions of keys, never the comments. Tokens and marks are those of ruamel's ``scan_to_next_token``:
    a skipped run of whole lines moves the line count by its line feeds (``\\r\\n`` is one break, as in
    ruamel's Reader.forward); a gap inside a line holds no break, so only the column moves (a BOM in it
    is not counted, as Reader.forward does not count it)."""

    def _skip(self, pattern: re.Pattern[str]) -> str:
        reader = self.reader
        run = pattern.match(reader.buffer, reader.pointer)
        text = run.group() if run else ""
        reader.pointer += len(text)
        reader.index += len(text)
        return text

    def scan_to_next_token(self) -> Any:
        reader = self.reader
        if reader.index == 0 and reader.peek() == "\ufeff":
            reader.forward()
        flow = self.flow_level > 0
        while True:
            lines = self._skip(_FLOW_LINES if flow else _BLOCK_LINES)
            if lines:
                reader.line += lines.count("\n")
                reader.column = 0
                if not flow:
                    self.allow_simple_key = True
            gap = self._skip(_FLOW_GAP if flow else _BLOCK_GAP)
            reader.column += len(gap) - gap.count("\ufeff")
            if not self.scan_line_break():
                return None
            if not flow:
                self.allow_simple_key = True


class _CountingComposer(Composer):
    """ruamel's composer refusing the value past ``loader.max_values`` when it meets it: a megabyte of
    ``[0,0,…]`` took 43 s to parse whole before _plain counted it (ruamel's pure reader, ~80 µs a value);
    this stops where the limit is passed. Mapping keys are not values (_plain does not count them)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if index is not None or parent is None:
            self.values = getattr(self, "values", 0) + 1
            limit: int = self.loader.max_values
            if self.values > limit:
                mark = self.parser.peek_event().start_mark
                raise _error(
                    "LOAD002",
                    f"document too large: more than {limit:,} values",
                    None,
                    Location(self.loader.file, mark.line + 1, mark.column + 1),
                )
        return super().compose_node(parent, index)


def _yaml_document(text: str, file: str, max_values: int = MAX_NODES) -> Any:
    """ruamel's round-trip tree of ``text`` (keeps positions), duplicate keys refused, at most
    ``max_values`` values composed."""
    yaml = YAML(typ="rt", pure=True)
    yaml.Scanner = _LinearScanner  # type: ignore[assignment]  # positions without comment tokens
    yaml.Composer = _CountingComposer  # type: ignore[assignment]
    yaml.max_values = max_values  # type: ignore[attr-defined]  # read by _CountingComposer
    yaml.file = file  # type: ignore[attr-defined]
    yaml.allow_duplicate_keys = False
    try:
        with warnings.catch_warnings():
            # ruamel's warnings went to stderr raw (a site-packages path and code to silence them), e.g. on a
            # `%YAML 1.1` document's 70e9, which is read as the YAML 1.2 float the schema documents
            warnings.simplefilter("ignore", YAMLWarning)
            return yaml.load(text)
    except MarkedYAMLError as exc:
        raise _syntax_error(exc, text, file) from None
    except (YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise _unmarked_error(exc, text, file) from None


def parse_yaml(text: str, file: str, max_values: int = MAX_NODES) -> SourceMap:
    """``text`` as plain data with the position of every key; located BlueprintError past ``max_values``
    values (aliases expanded) or MAX_DEPTH levels, or where it is no YAML."""
    deep = flow_too_deep(text, MAX_DEPTH)
    if deep is not None:
        location = Location(file, *_offset_position(text, deep))
        raise _error("LOAD002", f"nesting deeper than {MAX_DEPTH} levels", None, location)
    doc = _yaml_document(text, file, max_values)
    positions: dict[Path, tuple[int, int]] = {(): (1, 1)}
    data = _plain(doc, (), positions, _Counter(max_values), 0, file)
    return SourceMap(file, positions, data)


# ---- hints -------------------------------------------------------------------------------------


def _unwrap(tp: Any) -> list[Any]:
    """The concrete types inside Optional/Union/Annotated/list."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(tp):
            out.extend(_unwrap(arg))
        return out
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return _unwrap(args[0]) if args else []
    return [tp]


def _model_at(path: Path, data: Any) -> type[BaseModel] | None:
    """Which model class validates the mapping at ``path`` (following the data for unions)."""
    model: type[BaseModel] = Blueprint
    node = data
    for part in path:
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part or n == part), None)
        if field is None:
            return None
        node = node.get(part) if isinstance(node, Mapping) else None
        candidates = [
            t for t in _unwrap(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)
        ]
        if not candidates:
            return None
        chosen = candidates[0]
        if len(candidates) > 1 and isinstance(node, Mapping):
            for cand in candidates:
                kind = cand.model_fields.get("kind")
                if kind is not None and node.get("kind") in typing.get_args(kind.annotation):
                    chosen = cand
        model = chosen
    return model


def _field_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def _hint(err: Mapping[str, Any], path: Path, data: Any) -> str | None:
    kind = err["type"]
    if tuple(path) == ("apiVersion",):
        from generator.migrate import version_hint

        return version_hint(err.get("input"))
    if kind == "extra_forbidden":
        model = _model_at(path[:-1], data)
        if model is not None:
            names = _field_names(model)
            close = difflib.get_close_matches(str(path[-1]), names, n=1, cutoff=0.5)
            if close:
                return f"did you mean `{close[0]}`?"
            return "allowed keys: " + ", ".join(names)
    if kind in ("literal_error", "enum"):
        expected = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
        close = difflib.get_close_matches(str(err.get("input")), expected, n=1, cutoff=0.4)
        if close:
            return f"did you mean `{close[0]}`?"
        if expected:
            return "expected one of: " + ", ".join(expected)
    if kind == "union_tag_invalid":
        expected = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected_tags", ""))
        close = difflib.get_close_matches(str(err.get("ctx", {}).get("tag")), expected, n=1, cutoff=0.4)
        if close:
            return f"did you mean `{close[0]}`?"
        return "expected one of: " + ", ".join(expected)
    if kind == "string_pattern_mismatch":
        return _PATTERN_HINTS.get(err.get("ctx", {}).get("pattern", ""))
    if kind == "missing":
        return f"add `{path[-1]}`" if path else None
    return None


# what a pattern means, for the patterns a user meets most (others: the message shows the pattern)
_PATTERN_HINTS = {
    SAFE_NAME_RE: "names are lower-case letters, digits and '-', starting with a letter (at most 40)",
    NETDEV_PATTERN: "a Linux interface name: at most 15 letters, digits, '_', '.' or '-', no ':' or '/' (an "
    "`eth0:1` alias is not an interface)",
}


def _clean_path(loc: tuple[Any, ...], data: Any) -> Path:
    """Pydantic locations include union tags (``fat-tree``) and function names; keep data keys."""
    out: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, Mapping) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int):
            out.append(part)
            node = node[part] if 0 <= part < len(node) else None
        elif isinstance(part, str) and (part.startswith(("function-", "tagged-union")) or "[" in part):
            continue
        elif (isinstance(node, Mapping) or node is None) and isinstance(part, str) and part not in UNION_TAGS:
            # a key the data lacks (missing field) or an extra key already consumed
            out.append(part)
            node = None
    return tuple(out)


def validation_findings(exc: ValidationError, source: SourceMap) -> list[Finding]:
    findings = []
    for err in exc.errors(include_url=False):
        path = _clean_path(tuple(err["loc"]), source.data)
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = f"unknown key `{path[-1]}`"
        elif err["type"] == "missing":
            msg = f"missing required key `{path[-1]}`" if path else "missing required key"
        elif "input" in err and not isinstance(err["input"], dict | list):
            shown = repr(err["input"])
            msg = f"{msg} (got {shown[:60]})"
        findings.append(
            Finding(
                "SCHEMA",
                Severity.ERROR,
                f"{dotted(path) or '<document>'}: {msg}",
                path,
                _hint(err, path, source.data),
                source.locate(_offending(err, path)),
            )
        )
    return findings


def _offending(err: Any, path: Path) -> Path:
    """Where the error is on the page: a wrong union tag is on its `kind:` line, not the parent key."""
    if err["type"] == "union_tag_invalid":
        discriminator = str((err.get("ctx") or {}).get("discriminator", "kind")).strip("'\"")
        return (*path, discriminator)
    return path


def load_text(text: str, file: str = "<blueprint>") -> tuple[Blueprint, SourceMap]:
    source = parse_yaml(text, file)
    if source.data is None:
        raise BlueprintError(
            [
                Finding(
                    "LOAD003",
                    Severity.ERROR,
                    "the file is empty",
                    (),
                    "start from an example in examples/",
                    Location(file, 1, 1),
                )
            ]
        )
    if not isinstance(source.data, Mapping):
        raise BlueprintError(
            [
                Finding(
                    "LOAD003",
                    Severity.ERROR,
                    f"a blueprint is a mapping of keys, got a {type(source.data).__name__}",
                    (),
                    "start from an example in examples/",
                    Location(file, 1, 1),
                )
            ]
        )
    try:
        blueprint = Blueprint.model_validate(source.data)
    except ValidationError as exc:
        raise BlueprintError(validation_findings(exc, source)) from None
    return blueprint, source


STDIN = "-"  # the conventional name for "read the blueprint from standard input"


def _read_bounded(fs: FsPath, file: str) -> bytes:
    """The file's bytes; a located error when it cannot be read, is not a regular file (a symlink to
    /dev/zero has st_size 0 and would be read until the memory cap) or is larger than MAX_BYTES."""
    try:
        return read_foreign(fs, MAX_BYTES)
    except ForeignInputError as exc:
        at = Location(file, 1, 1)
        if exc.message.startswith("larger than"):
            raise _error("LOAD002", f"file larger than {MAX_BYTES} bytes", None, at) from None
        raise _error("LOAD000", exc.message, None, at) from None


def _decode(raw: bytes, file: str) -> str:
    """UTF-8 text without NUL bytes; a located error (the offending line) otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        hint = "a blueprint is a UTF-8 YAML file"
        raise _error("LOAD001", "not UTF-8 text (binary file?)", hint, Location(file, line, 1)) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise _error("LOAD001", "not a text file (NUL byte)", None, Location(file, line, 1))
    return text


def load_file(path: str | FsPath) -> LoadedBlueprint:
    fs = FsPath(path)
    file = "<stdin>" if str(path) == STDIN else str(path)
    raw = _read_bounded(fs, file)
    blueprint, source = load_text(_decode(raw, file), file)
    return LoadedBlueprint(blueprint, source, fs, hashlib.sha256(raw).hexdigest())
