"""The JSON Schema as an editor uses it: help text on every key, and the real error for a topology typo
(validated with the `jsonschema` library, as yaml-language-server validates with a JSON Schema engine)."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from conftest import EXAMPLES, run_cli
from ruamel.yaml import YAML


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    code, out, _ = run_cli("schema")
    assert code == 0
    return json.loads(out)


def _properties(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {f"root.{k}": v for k, v in schema["properties"].items()}
    for name, model in schema["$defs"].items():
        out |= {f"{name}.{k}": v for k, v in (model.get("properties") or {}).items()}
    return out


def test_every_property_has_a_description(schema: dict[str, Any]) -> None:
    props = _properties(schema)
    assert len(props) > 100
    missing = sorted(k for k, v in props.items() if not (v.get("description") or "").strip())
    assert not missing


def _error(schema: dict[str, Any], mutate) -> jsonschema.ValidationError:  # type: ignore[no-untyped-def]
    data = YAML(typ="safe").load((EXAMPLES / "superpod-h100-4su.yaml").read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    mutate(data["fabrics"]["compute"]["topology"])
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert error is not None
    return error


def test_unknown_topology_kind_lists_the_kinds(schema: dict[str, Any]) -> None:
    error = _error(schema, lambda t: t.update(kind="fat-tre"))
    assert list(error.absolute_path) == ["fabrics", "compute", "topology", "kind"]
    assert "fat-tree" in error.message and "not valid under any" not in error.message


def test_wrong_field_of_a_fat_tree_is_reported_on_that_field(schema: dict[str, Any]) -> None:
    error = _error(schema, lambda t: t.update(tiers=5))
    assert list(error.absolute_path) == ["fabrics", "compute", "topology", "tiers"]
    error = _error(schema, lambda t: t.update(radix=64))
    assert "radix" in error.message and "not valid under any" not in error.message


def test_no_discriminator_left_for_editors_to_ignore(schema: dict[str, Any]) -> None:
    assert '"discriminator"' not in json.dumps(schema)
