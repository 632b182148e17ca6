"""A field's docstring as its schema description, read once per module instead of once per class.

The blueprint models document each field with a string under it (PEP 257's "attribute docstrings").
Pydantic's ``use_attribute_docstrings`` turns those into ``description`` (the text editors show from
`blueprint schema`), but it finds each class's source by walking the interpreter's frames and
tokenising the class again, which cost about a third of importing the model (benchmarks/startup.py).
Here each model module's source is parsed once with :mod:`ast` and every class's strings are read from
that tree, by the same rule as Pydantic's (pydantic/_internal/_docs_extraction.py): a string statement
right after an annotated name in the class body documents that name; a ``description=`` given in
``Field`` wins. tests/cli/test_model_docs.py checks the result equals Pydantic's own extraction.
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache
from pathlib import Path
from typing import Any

from blueprints.snapshot import cache_root, snapshot


def attach(cls: type[Any]) -> None:
    """Give each field of the model ``cls`` declared with a docstring under it that description.

    Called before the model's schema is built (the models defer building: ``defer_build``), so the
    descriptions reach the JSON schema as if Pydantic had read them.
    """
    docs = _class_docs(cls.__module__).get(cls.__qualname__)
    if not docs:
        return
    for name, info in cls.__pydantic_fields__.items():
        if info.description is None and name in docs:
            info.description = docs[name]


@cache
def _class_docs(module_name: str) -> dict[str, dict[str, str]]:
    """Per top-level class of the module (by name): its attribute docstrings. Parsed once per change of
    the package's source, not once per process (blueprints/snapshot.py: ~10 ms of each `validate`)."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return {}  # no source to read (a .pyc-only install): no descriptions, as Pydantic would find
    root = cache_root()
    name = "docs_" + module_name.replace(".", "_")
    return snapshot(root / "models" if root else None, name, [Path(path)], dict, lambda: _parse_docs(path))


def _parse_docs(path: str) -> dict[str, dict[str, str]]:
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return {}
    return {node.name: _attribute_docs(node) for node in tree.body if isinstance(node, ast.ClassDef)}


def _attribute_docs(node: ast.ClassDef) -> dict[str, str]:
    docs: dict[str, str] = {}
    for before, stmt in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(before, ast.AnnAssign)
            and isinstance(before.target, ast.Name)
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            docs[before.target.id] = inspect.cleandoc(stmt.value.value)
    return docs
