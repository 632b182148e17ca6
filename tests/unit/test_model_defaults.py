"""A nested model left out of a blueprint gets exactly what its own constructor gives (blueprints/models/
base.py: `Field(default_factory=dict, validate_default=True)`, validated by the Blueprint's one validator
instead of a second validator built for that model)."""

from __future__ import annotations

import importlib
import pkgutil
import typing
from typing import Any

from pydantic import BaseModel

import blueprints.models as models_pkg
from blueprints.models import Blueprint

# (model, field) -> the model the left-out field must equal, built by its own constructor
EXPECTED = {
    ("Blueprint", "site"),
    ("Blueprint", "fabrics"),
    ("Blueprint", "software"),
    ("Blueprint", "deployment"),
    ("Site", "rack"),
    ("Site", "cabling"),
    ("NodePool", "placement"),
    ("Software", "ofed"),
    ("Workload", "parallelism"),
}

MINIMAL: dict[str, Any] = {
    "apiVersion": "cluster-blueprint/v1",
    "name": "defaults",
    "pools": [{"name": "dgx", "role": "gpu", "count": 1, "server": "dgx-a100"}],
    "workload": {"params": 13e9, "mode": "full-finetune", "precision": "bf16"},
}


def _model_classes() -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    for info in pkgutil.iter_modules(models_pkg.__path__, models_pkg.__name__ + "."):
        module = importlib.import_module(info.name)
        out += [
            v
            for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, BaseModel) and v.__module__ == module.__name__
        ]
    return out


def _nested_defaults() -> dict[tuple[str, str], type[BaseModel]]:
    found = {}
    for model in _model_classes():
        for name, info in model.model_fields.items():
            kind = info.annotation
            if info.default_factory is dict and info.validate_default:
                assert isinstance(kind, type) and issubclass(kind, BaseModel), (model, name)
                found[(model.__name__, name)] = kind
            elif isinstance(kind, type) and issubclass(kind, BaseModel) and info.default_factory is kind:
                found[(model.__name__, name)] = kind  # the old form: listed, so the set below fails
    return found


def test_every_nested_default_is_listed() -> None:
    assert set(_nested_defaults()) == EXPECTED


def test_left_out_nested_models_equal_their_constructors() -> None:
    bp = Blueprint.model_validate(MINIMAL)
    assert bp.model_fields_set == {"api_version", "name", "pools", "workload"}
    left_out = {
        ("Blueprint", "site"): bp.site,
        ("Blueprint", "fabrics"): bp.fabrics,
        ("Blueprint", "software"): bp.software,
        ("Blueprint", "deployment"): bp.deployment,
        ("Site", "rack"): bp.site.rack,
        ("Site", "cabling"): bp.site.cabling,
        ("NodePool", "placement"): bp.pools[0].placement,
        ("Software", "ofed"): bp.software.ofed,
        ("Workload", "parallelism"): typing.cast(Any, bp.workload).parallelism,
    }
    kinds = _nested_defaults()
    for key, value in left_out.items():
        built = kinds[key]()  # what default_factory=<model> gave
        assert type(value) is kinds[key], key
        assert value == built, key
        assert value.model_fields_set == built.model_fields_set == set(), key
        assert value.model_dump() == built.model_dump(), key
