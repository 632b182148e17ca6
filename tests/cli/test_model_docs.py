"""The blueprint models' field descriptions are what Pydantic's own ``use_attribute_docstrings`` finds.

blueprints/models/field_docs.py reads the docstring under each field from one parse of its module (Pydantic's
option re-reads each class's source through the interpreter's frames, a third of the model's import). The
oracle here is Pydantic's extractor itself, run on every model class; and the schema `blueprint schema`
prints is committed (tests/unit/test_foundation.py compares it), so a lost description fails there too.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import blueprints.models  # noqa: F401  (every model class defined)
from blueprints.models.base import Model


def _models() -> list[type[Model]]:
    seen: list[type[Model]] = []
    todo: list[type[Any]] = [Model]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return sorted(seen, key=lambda c: (c.__module__, c.__qualname__))


def test_there_are_models() -> None:
    assert len(_models()) > 30


@pytest.mark.parametrize("cls", _models(), ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_descriptions_equal_pydantics_extraction(cls: type[Model]) -> None:
    expected: dict[str, str | None] = {}
    for klass in reversed(cls.__mro__):  # a field keeps the description of the class that declared it
        if isinstance(klass, type) and issubclass(klass, Model) and klass is not Model:
            own = extract_docstrings_from_cls(klass, use_inspect=True)
            for name in getattr(klass, "__annotations__", {}):
                expected[name] = own.get(name)
    for name, info in cls.model_fields.items():
        declared = info.description
        if name in expected and expected[name] is not None:
            assert declared == expected[name], f"{cls.__qualname__}.{name}"
        else:
            # no docstring under it: only an explicit Field(description=...) may give one
            assert declared is None or not expected.get(name), f"{cls.__qualname__}.{name}"


def test_model_schema_is_built_on_first_use_not_at_import() -> None:
    import subprocess
    import sys

    code = (
        "import blueprints.models as m\n"
        "assert not m.Blueprint.__pydantic_complete__\n"
        "m.Blueprint.model_json_schema()\n"
        "assert m.Blueprint.__pydantic_complete__\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
