"""`blueprint schema`: the JSON Schema of a blueprint, for editors (yaml-language-server)."""

from __future__ import annotations

import argparse
import json

from blueprints.models import Blueprint
from generator.commands._common import add_common, command, write_text

ORDER = 20


def blueprint_schema() -> dict:
    schema = Blueprint.model_json_schema(by_alias=True, mode="validation")
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
    write_text(json.dumps(blueprint_schema(), indent=2, sort_keys=True) + "\n", args.output)
    return 0
