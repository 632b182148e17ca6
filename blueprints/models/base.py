"""Shared building blocks of the blueprint models."""

import re
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints

from blueprints.models import field_docs

# Names reach hostnames, file paths, Jinja, YAML, shell and Pulumi resource names: one safe pattern.
SAFE_NAME_RE = r"^[a-z][a-z0-9-]{0,39}$"
SafeName = Annotated[str, StringConstraints(pattern=SAFE_NAME_RE)]
# Free text (descriptions, reasons) may hold anything printable but no template delimiters.
SafeText = Annotated[str, StringConstraints(max_length=2000, pattern=r"^[^{}%\x00-\x08\x0b-\x1f]*$")]
# Versions and OS ids: letters, digits and . _ - + only.
VersionStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$")]
PathStr = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._/-]{0,200}$")]
HostStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")]
RuleId = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}\d{3}$")]

SAFE_NAME = re.compile(SAFE_NAME_RE)

# The model modules (and the catalogue's, blueprints/catalog/) have no `from __future__ import annotations`:
# their annotations are objects when a class is made, where Pydantic would otherwise evaluate every string
# again (about a fifth of making the ~120 model classes of `validate`, benchmarks/startup.py). A model
# named in its own body (a validator returning it) is quoted.
#
# A nested model left out of a blueprint (`site`, `fabrics`, `software.ofed`, ...) takes its defaults as
# `Field(default_factory=dict, validate_default=True)`: the empty mapping is validated as the field's model
# by the Blueprint's one validator, which gives what `default_factory=Site` gave (the same values, no field
# set) without building a second validator for that model on first use (Fabrics alone: ~8 ms of CPU per
# `validate`, benchmarks/startup.py). tests/unit/test_model_defaults.py compares the two.


def empty_list() -> list[Any]:
    """A new empty list: the default of the models' list fields.

    A function of this module rather than ``list``: Pydantic reads each default factory's signature when
    it builds a validator, and a builtin's signature is parsed from its text by the tokenizer (~3 ms of
    each `validate` for the eight list fields, benchmarks/startup.py); a Python function's is read directly.
    """
    return []


class Model(BaseModel):
    """Every blueprint model rejects unknown keys and is immutable once loaded."""

    # defer_build: a model's validator is built when first used, once for the whole Blueprint, not at
    # import for each of its ~40 classes (benchmarks/startup.py). The docstring under a field is its
    # schema description (editors show it): field_docs.attach reads them, as use_attribute_docstrings
    # would, from one parse per module.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field_docs.attach(cls)


def upper_bound(model: type[BaseModel], field: str) -> float:
    """A numeric field's ``le`` bound, as its schema states it (for callers that must refuse the same)."""
    for constraint in model.model_fields[field].metadata:
        bound = getattr(constraint, "le", None)
        if bound is not None:
            return float(bound)
    raise KeyError(f"{model.__name__}.{field} has no upper bound")
