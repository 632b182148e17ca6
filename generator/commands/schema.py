"""`blueprint schema`: the JSON Schema of a blueprint, for editors (yaml-language-server)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from generator.commands._common import add_common, check_outputs, command, write_text

ORDER = 20


def _discriminated(node: dict[str, Any]) -> dict[str, Any]:
    """A tagged union as if/then on its tag, instead of `oneOf` + OpenAPI's `discriminator`.

    Editors (yaml-language-server) and JSON Schema validators ignore `discriminator`; under `oneOf` a typo
    in one field of a `kind: fat-tree` makes every branch fail and they report only "not valid under any
    of the given schemas". With if/then, an unknown `kind` is reported against the list of kinds, and any
    other mistake against the one branch its `kind` selects.
    """
    tag = node["discriminator"]["propertyName"]
    mapping: dict[str, str] = node["discriminator"]["mapping"]
    return {
        "type": "object",
        "required": [tag],
        "properties": {
            tag: {"enum": sorted(mapping), "description": f"which kind: {', '.join(sorted(mapping))}"}
        },
        "allOf": [
            {"if": {"properties": {tag: {"const": value}}, "required": [tag]}, "then": {"$ref": ref}}
            for value, ref in sorted(mapping.items())
        ],
    }


def _rewrite(node: Any) -> Any:
    if isinstance(node, dict):
        if "discriminator" in node and "oneOf" in node:
            return _discriminated(node)
        return {k: _rewrite(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite(v) for v in node]
    return node


def blueprint_schema() -> dict[str, Any]:
    from blueprints.models import Blueprint  # the model: imported here, never at CLI start-up

    schema = _rewrite(Blueprint.model_json_schema(by_alias=True, mode="validation"))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://cluster-blueprint.dev/schema/v1/blueprint.schema.json"
    schema["title"] = "cluster-blueprint blueprint (cluster-blueprint/v1)"
    return schema


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "schema",
        "print the blueprint JSON Schema (for editors: yaml-language-server)",
        description="Print the JSON Schema of a blueprint. Point your editor at it with a first line "
        "`# yaml-language-server: $schema=blueprint.schema.json` for completion and inline errors.",
    )
    add_common(p, formats=("json",), default_format="json", format_help="schema format")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_outputs([("-o", args.output)], [], force=args.force)
    write_text(
        json.dumps(blueprint_schema(), indent=2, sort_keys=True) + "\n", args.output, replace=args.force
    )
    return 0
