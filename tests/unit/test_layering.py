"""Data flows one way: a module may import only modules of its own layer or of a lower one.

The layer order is the one written in docs/architecture.md ("Layers"). Every import counts: module level,
inside functions (late imports) and under ``TYPE_CHECKING``. The test parses the sources with ``ast``; it
does not import them.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # utilities that know nothing of blueprints
    (
        "generator",
        "generator.findings",
        "generator.fsutil",
        "generator.gcpause",
        "generator.forked",
        "generator.resources",
        "generator.foreign",
    ),
    ("blueprints", "blueprints.models"),
    ("blueprints.catalog",),
    ("generator.load", "generator.migrate"),
    ("generator.resolve", "generator.platform"),
    ("generator.topology",),
    ("generator.plan",),
    ("generator.perf",),
    ("generator.deploy",),
    ("generator.rules",),
    ("generator.pipeline", "generator.report", "generator.rule_index"),
    ("generator.emit",),
    ("generator.build", "generator.diff", "generator.verify", "generator.rehearse", "generator.sot"),
    ("generator.commands",),
    ("generator.cli",),
)

# Known reach-backs, each with the reason it is still here. Keys: (importing module, imported module).
ALLOWED: dict[tuple[str, str], str] = {
    # Shell completion lists every command's options by walking the parser the CLI builds from all
    # command modules; it reads the finished parser, it does not call back into a command.
    ("generator.commands.completion", "generator.cli"): "completion reads the whole parser",
}


class Import(NamedTuple):
    importer: str
    imported: str
    line: int


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path = ROOT) -> list[Import]:
    """Every project module ``path`` imports (absolute and relative, at any depth of the syntax tree)."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[Import] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.extend(Import(name, alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.append(Import(name, target, node.lineno))
    return [i for i in out if i.imported.split(".")[0] in ("generator", "blueprints")]


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    if best < 0:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS and docs/architecture.md")
    return best


def _allowed_key(imp: Import) -> tuple[str, str] | None:
    for importer, imported in ALLOWED:
        if imp.importer == importer and (imp.imported == imported or imp.imported.startswith(imported + ".")):
            return importer, imported
    return None


def _sources() -> list[Path]:
    return sorted([*ROOT.joinpath("generator").rglob("*.py"), *ROOT.joinpath("blueprints").rglob("*.py")])


def _upward_imports() -> list[Import]:
    return [i for p in _sources() for i in _imports(p) if layer_of(i.imported) > layer_of(i.importer)]


def test_no_lower_layer_imports_a_higher_one() -> None:
    bad = [i for i in _upward_imports() if _allowed_key(i) is None]
    assert not bad, "imports against the layer order (docs/architecture.md):\n" + "\n".join(
        f"  {i.importer}:{i.line} imports {i.imported}" for i in bad
    )


def test_every_allowlist_entry_is_still_needed() -> None:
    used = {_allowed_key(i) for i in _upward_imports()}
    stale = [key for key in ALLOWED if key not in used]
    if stale:  # a warning, not a failure: the branch that removes the import must not break on this list
        warnings.warn(f"remove these allowlist entries, the imports are gone: {stale}", stacklevel=1)
    assert all(reason for reason in ALLOWED.values())


def test_architecture_doc_lists_every_layer() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [p for layer in LAYERS for p in layer if f"`{p}`" not in doc]
    assert not missing, f"docs/architecture.md does not name these layers: {missing}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from generator.plan.model import Plan\n", ["generator.plan.model"]),
        ("def f():\n    from generator.pipeline import check\n", ["generator.pipeline"]),
        ("from . import nccl\n", ["generator.emit"]),
        ("from ..plan import model\n", ["generator.plan"]),
        ("import json\nimport generator.resolve as r\n", ["generator.resolve"]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from generator.cli import main\n",
            ["generator.cli"],
        ),
    ],
)
def test_import_parser_sees_every_kind_of_import(tmp_path: Path, source: str, expected: list[str]) -> None:
    mod = tmp_path / "generator" / "emit" / "x.py"  # a module at generator/emit/x.py in a scratch tree
    mod.parent.mkdir(parents=True)
    mod.write_text(source, encoding="utf-8")
    assert [i.imported for i in _imports(mod, tmp_path)] == expected


def test_layer_of_uses_the_longest_prefix() -> None:
    assert layer_of("generator.plan.model") < layer_of("generator.emit.cabling.rows")
    assert layer_of("generator.findings") == 0
    assert layer_of("generator.pipeline") > layer_of("generator.rules.base")
    with pytest.raises(AssertionError):
        layer_of("generator_other")
