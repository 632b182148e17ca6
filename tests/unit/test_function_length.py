"""Functions read as a list of named phases: none in generator/ or blueprints/ is longer than MAX_LINES.

The functions still over the limit are listed below with their current length and why they are still here;
the test fails when a new one appears or a listed one grows, and warns when a listed one has been split
(remove it then, so the list only shrinks). docs/architecture.md refers to this list.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 60

# (file, function) -> lines today, for a function that must stay long; each needs its reason here and in
# docs/architecture.md. None does today.
KNOWN_LONG: dict[tuple[str, str], int] = {}


def _lengths() -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for path in sorted(
        [*ROOT.joinpath("generator").rglob("*.py"), *ROOT.joinpath("blueprints").rglob("*.py")]
    ):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                key = (rel, node.name)
                out[key] = max(out.get(key, 0), length)
    return out


def test_no_new_long_functions_and_listed_ones_do_not_grow() -> None:
    too_long = {k: n for k, n in _lengths().items() if n > MAX_LINES}
    new = {k: n for k, n in too_long.items() if k not in KNOWN_LONG}
    grown = {k: (KNOWN_LONG[k], n) for k, n in too_long.items() if k in KNOWN_LONG and n > KNOWN_LONG[k]}
    assert not new, f"functions over {MAX_LINES} lines: split them into named phases: {new}"
    assert not grown, f"listed long functions grew (listed, now): {grown}"


def test_the_list_only_shrinks() -> None:
    lengths = _lengths()
    done = [k for k in KNOWN_LONG if lengths.get(k, 0) <= MAX_LINES]
    if done:  # a warning, not a failure: another branch splitting a function must not break this one
        warnings.warn(f"split now (or gone): remove from KNOWN_LONG: {done}", stacklevel=1)
    assert all(n > MAX_LINES for n in KNOWN_LONG.values())
