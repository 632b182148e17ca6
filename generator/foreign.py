"""Reading files this tool did not write: bounded, regular files only, refused with a located error.

Every foreign input (Pulumi stack outputs, ibnetdiscover and LLDP dumps, nccl-tests results, advice JSON,
blueprints given to `migrate`) is read through :func:`read_foreign`: the path must name a regular file
(a symlink to `/dev/zero` or a FIFO would otherwise be read until the memory cap), at most `limit` bytes
are read, and every file a command reads is charged to one :class:`ByteBudget`, so six files just under the
per-file limit cannot add up to an exhaustion either. A refusal is a :class:`ForeignInputError`, which
names the file and, where known, the line or JSON path; the CLI prints it and exits 2.
"""

from __future__ import annotations

import ipaddress
import json
import operator
import os
import re
import stat
import sys
from collections.abc import Iterable, Sequence
from itertools import accumulate, count
from pathlib import Path
from typing import Any

from generator.safetext import one_line

STDIN = "-"

# One command reads at most this much foreign text in all (the largest real input, a discovered 100k-GPU
# fabric, is ~60 MB of ibnetdiscover text).
DEFAULT_BUDGET = 256 * 1024 * 1024


class ForeignInputError(ValueError):
    """A foreign file cannot be used: `where` is `file`, `file:line` or `file: $.json.path`."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


class ByteBudget:
    """The bytes one command may still read from foreign files, all files together."""

    def __init__(self, total: int = DEFAULT_BUDGET) -> None:
        self.total = total
        self.left = total

    def charge(self, where: str, size: int) -> None:
        if size > self.left:
            raise ForeignInputError(
                where,
                f"the files given to this command exceed {self.total:,} bytes in all: "
                "give fewer or smaller files",
            )
        self.left -= size


def path_text(name: str) -> str:
    """A file name as text any UTF-8 output can hold: the bytes of a name that are not UTF-8, which Python
    keeps as lone surrogates (os.fsdecode's surrogateescape) and no UTF-8 stream writes, shown as
    ``\\xNN``."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def _regular(path: Path) -> None:
    try:
        st = path.stat()  # follows a symlink: what matters is what is read
    except OSError as exc:
        raise ForeignInputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (device, FIFO or socket)"
        raise ForeignInputError(str(path), f"{kind}: give a regular file")


def read_foreign(path: str | Path, limit: int, budget: ByteBudget | None = None) -> bytes:
    """At most `limit` bytes of a regular file (or standard input for `-`), else a located refusal."""
    where = "<stdin>" if str(path) == STDIN else str(path)
    if str(path) == STDIN:
        data = sys.stdin.buffer.read(limit + 1)
    else:
        fs = Path(path)
        _regular(fs)
        try:
            with open(fs, "rb") as fh:
                # the type is checked again on the open descriptor: the path may have been swapped
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    raise ForeignInputError(where, "not a regular file: give a regular file")
                data = fh.read(limit + 1)
        except OSError as exc:
            raise ForeignInputError(where, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ForeignInputError(where, f"larger than {limit:,} bytes: not a file this command reads")
    if budget is not None:
        budget.charge(where, len(data))
    return data


def read_foreign_text(path: str | Path, limit: int, budget: ByteBudget | None = None) -> str:
    """UTF-8 text without NUL bytes (the line of the first bad byte in the refusal)."""
    raw = read_foreign(path, limit, budget)
    where = "<stdin>" if str(path) == STDIN else str(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ForeignInputError(f"{where}:{line}", "not UTF-8 text (binary file?)") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ForeignInputError(f"{where}:{line}", "not a text file (NUL byte)")
    return text


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


MAX_JSON_DEPTH = 64


_JSON_MARKS = re.compile(r'["\\\[\]{}]')
# A JSON string as _depth_scan reads one: from a quote to the next quote no backslash escapes, or to the end
# of the text if none does. Possessive, so a 16 MB string keeps no backtracking state, and it always matches
# once started (nothing to backtrack into).
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\[\s\S]?)*+(?:"|\Z)')
_NOT_BRACKET = re.compile(r"[^\[\]{}]++")
_MARK_STRING = re.compile(rb'"[^"]*+(?:"|\Z)')  # a string among quotes and brackets only (no backslash)
_NOT_MARK = bytes(b for b in range(256) if b not in b'"[]{}')  # UTF-8 keeps them one byte each
_BRACKET_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")  # 2 per opening bracket, 0 per closing one


def _depth_ok(text: str, limit: int) -> int | None:
    """The offset where bracket nesting first passes `limit` (strings skipped), or None. A Python step per
    quote and bracket (_depth_scan) was half the time of reading LLDP JSON (9 of 22 s for 100,000 lldpd
    entries under cProfile), so the brackets outside strings are found in C and their running depth summed
    in C (after the i-th bracket it is 2 x openings so far - i); only a text that passes `limit` is scanned
    again, for the offset."""
    depth = map(operator.sub, accumulate(_outer_brackets(text).translate(_BRACKET_STEP)), count(1))
    return _depth_scan(text, limit) if max(depth, default=0) > limit else None


def _outer_brackets(text: str) -> bytes:
    """The brackets outside strings, in order. Without a backslash (which escapes the next character, so
    it cannot be judged once the characters between the marks are gone), the quotes and brackets alone
    decide it, and two adjacent quotes can go first without a match object each: an empty string, or the end
    of one string and the start of the next with no bracket between (the two merge; every bracket keeps its
    side). LLDP JSON then keeps only its brackets (nearly every string holds none)."""
    if "\\" in text:
        return _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)).encode("ascii")
    marks = text.encode("utf-8", "surrogatepass").translate(None, _NOT_MARK).replace(b'""', b"")
    return _MARK_STRING.sub(b"", marks) if b'"' in marks else marks


def _depth_scan(text: str, limit: int) -> int | None:
    """_depth_ok one mark at a time: linear, and the loop runs only over quotes, backslashes and brackets (a
    regex finds them), not every character."""
    depth = 0
    in_string = False
    escaped_at = -2
    for m in _JSON_MARKS.finditer(text):
        ch, i = m.group(), m.start()
        if in_string:
            if ch == "\\":
                # a backslash escapes the next character; a run of them pairs up
                escaped_at = -2 if escaped_at == i - 1 else i
            elif ch == '"' and escaped_at != i - 1:
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return i
        elif ch in "]}":
            depth -= 1
    return None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = one_line(key)[:MAX_KEY_SHOWN]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: json.loads keeps the last of two, so a second `gpu001`
    entry silently replaced the first. Built by dict() in C, the pairs looked at one by one only when a key
    was lost (a Python step per key was a fifth of the time of reading LLDP JSON)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def parse_json(text: str, where: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON as the standard defines it (no NaN/Infinity), nested at most `max_depth`; located refusals."""
    deep = _depth_ok(text, max_depth)
    if deep is not None:
        line = text.count("\n", 0, deep) + 1
        raise ForeignInputError(f"{where}:{line}", f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise ForeignInputError(where, f"the key `{exc.key}` is given twice in one object") from None
    except json.JSONDecodeError as exc:
        raise ForeignInputError(f"{where}:{exc.lineno}:{exc.colno}", f"not JSON: {exc.msg}") from None
    except ValueError as exc:  # a constant refused above, or an integer longer than Python converts
        raise ForeignInputError(where, f"not JSON this command reads: {exc}") from None


MAX_YAML_DEPTH = 64


ANCHOR_REFUSED = "holds a YAML anchor or alias, which generate never writes"


def refuse_yaml_bombs(
    text: str, where: str, max_depth: int = MAX_YAML_DEPTH, why: str = ANCHOR_REFUSED
) -> None:
    """Refuse, at its line, the first anchor or alias (an alias expands without bound when the document is
    loaded and then copied: a 768-byte bomb took gigabytes, a self-referencing anchor recursed to exit 3) and
    nesting deeper than ``max_depth``. It walks the parser's events, which expands nothing: linear in the
    text. A text that is not YAML raises ruamel's YAMLError for the caller to say so."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, NodeEvent

    depth = 0
    for event in YAML(typ="safe", pure=True).parse(text):
        line = f"{where}:{event.start_mark.line + 1}" if event.start_mark is not None else where
        if isinstance(event, AliasEvent) or (isinstance(event, NodeEvent) and event.anchor):
            raise ForeignInputError(line, why)
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise ForeignInputError(line, f"nested deeper than {max_depth} levels")
        elif isinstance(event, CollectionEndEvent):
            depth -= 1


def parse_yaml(text: str, where: str, max_depth: int = MAX_YAML_DEPTH) -> Any:
    """YAML this tool wrote into a build (inventory, startup.yaml), read back as foreign text: safe types,
    no anchors or aliases (the build holds none), nesting at most ``max_depth`` (:func:`refuse_yaml_bombs`,
    before anything is loaded); then the document is loaded."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        refuse_yaml_bombs(text, where, max_depth)
        return YAML(typ="safe", pure=True).load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"{where}:{mark.line + 1}" if mark is not None else where
        raise ForeignInputError(line, f"not YAML: {str(exc).splitlines()[0]}") from None
    except ForeignInputError:
        raise
    except (ValueError, OverflowError) as exc:  # a tagged or typed scalar the safe loader cannot make
        # (`2001-13-01` as a date, `!!int abc`): was an internal error (exit 3)
        raise ForeignInputError(
            where, f"a value YAML cannot read as its type: {one_line(str(exc))[:MAX_KEY_SHOWN]}"
        ) from None


MAX_KEY_SHOWN = 80  # characters of a foreign key shown: a 100,000-character key made a 100 KB line


def json_path(loc: Sequence[int | str]) -> str:
    """`$.nodes["gpu001"].address` from a Pydantic error location (each key cut to MAX_KEY_SHOWN)."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        shown = part if len(part) <= MAX_KEY_SHOWN else f"{part[:MAX_KEY_SHOWN]}… ({len(part):,} characters)"
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out += f".{shown}"
        else:
            out += "[" + json.dumps(shown) + "]"
    return out


def pydantic_refusal(where: str, errors: Iterable[Any]) -> ForeignInputError:
    """The first validation error of a foreign document, at its JSON path."""
    first = next(iter(errors))
    loc = [p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
    return ForeignInputError(f"{where}: {json_path(loc)}", str(first["msg"]))


# RFC 1123 host name label: letters, digits and hyphens, 1-63 characters, no leading or trailing hyphen.
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


# Names every host gives itself, in any case (Debian's and RHEL's default /etc/hosts; RFC 6761 §6.3:
# "localhost" names resolve to loopback addresses): as a node's address they mean the controller, as a
# planned host or switch name ssh and Ansible connect to the operator's own machine.
THIS_MACHINE = frozenset(
    {
        "localhost",
        "localhost.localdomain",
        "localhost4",
        "localhost4.localdomain4",
        "localhost6",
        "localhost6.localdomain6",
        "ip6-localhost",
        "ip6-loopback",
    }
)


def host_name_problem(name: str) -> str | None:
    """Why `name` cannot be a host or switch name (None when it can): one RFC 1123 label (no dots, so it
    is the same name in DNS, Ansible, Slurm and OpenSM), not all digits, not an address literal (Ansible
    and ssh would connect to that address: `0x7f000001` is 127.0.0.1 to inet_aton)."""
    if not _LABEL.fullmatch(name):
        return "not a host name: 1-63 letters, digits and hyphens, starting and ending with a letter or digit"
    if name.isdigit():
        return "all digits: resolvers read it as an address"
    if re.fullmatch(r"0[xX][0-9A-Fa-f]+", name):
        return "a hexadecimal number: resolvers (inet_aton) read it as an address"
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return None
    return "an IP address literal, not a name"
