"""README.md's checkable claims cannot drift from the tool.

* "The blueprint" snippet validates (exit 0) and is part of the shipped example it says it is: every key it
  sets has the example's value (it once declared 128 nodes and an OpenSM SHARP that NET022/NET023 refuse).
* The rule count in its opening list is the number of rules `validate` runs (it said 92 with 98).
* The evaluation set's size and misses are `benchmarks/evaluate.py`'s.
* "Every key is described in docs/blueprint.md": every property name of `blueprint schema` is in a code span
  there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from conftest import EXAMPLES, REPO, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")


def _blueprint_snippet() -> str:
    section = README.split("\n## The blueprint\n", 1)[1]
    match = re.search(r"```yaml\n(.*?)```\n", section, re.S)
    assert match, "README's `## The blueprint` section has no yaml block"
    return match.group(1)


def test_readme_blueprint_validates(tmp_path: Path) -> None:
    path = tmp_path / "readme.yaml"
    path.write_text(_blueprint_snippet(), encoding="utf-8")
    code, out, err = run_cli("validate", str(path))
    assert code == 0, out + err


def _within(part: Any, whole: Any, where: str = "$") -> None:
    """``part`` sets nothing ``whole`` does not set to the same value (mappings may leave keys out)."""
    if isinstance(part, dict):
        assert isinstance(whole, dict), where
        for key, value in part.items():
            assert key in whole, f"{where}.{key}: not in the example"
            _within(value, whole[key], f"{where}.{key}")
    elif isinstance(part, list):
        assert isinstance(whole, list) and len(part) == len(whole), where
        for i, (p, w) in enumerate(zip(part, whole, strict=True)):
            _within(p, w, f"{where}[{i}]")
    else:
        assert part == whole, f"{where}: README {part!r}, example {whole!r}"


def test_readme_blueprint_is_part_of_the_shipped_example() -> None:
    example = yaml.safe_load((EXAMPLES / "superpod-h100-4su.yaml").read_text(encoding="utf-8"))
    snippet = yaml.safe_load(_blueprint_snippet())
    assert snippet["name"] == "superpod-h100-4su"
    _within(snippet, example)


def test_readme_rule_count_is_the_rules_validate_runs() -> None:
    from generator.rules.registry import all_rules

    (stated,) = re.findall(r"\*\*validates\*\* it against (\d+) performance and design rules", README)
    assert int(stated) == len(all_rules())


def _schema_keys(node: Any, keys: set[str]) -> set[str]:
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            keys.update(properties)
        for value in node.values():
            _schema_keys(value, keys)
    elif isinstance(node, list):
        for value in node:
            _schema_keys(value, keys)
    return keys


def test_every_schema_key_is_in_the_blueprint_reference() -> None:
    """README: "Every key is described in docs/blueprint.md" (its table lacked `flavour`, `names`, ...)."""
    from blueprints.models import Blueprint

    doc = (REPO / "docs" / "blueprint.md").read_text(encoding="utf-8")
    keys = _schema_keys(Blueprint.model_json_schema(), set())
    assert len(keys) > 150
    in_code = set(re.findall(r"\w+", " ".join(re.findall(r"`([^`\n]+)`", doc))))  # words in `code` spans
    assert sorted(keys - in_code) == []


def test_readme_evaluation_counts_are_the_benchmarks() -> None:
    """The measurement count (Performance model, Benchmarks) and the misses (rows outside ±15 %) are
    `python benchmarks/evaluate.py`'s (the Benchmarks section said 67 measurements, the misses 75 rows)."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    import evaluate

    outcomes = evaluate.evaluate()
    stated = re.findall(r"(\d+) published nccl-tests \(and rccl-tests\) measurements", README)
    assert len(stated) == 2 and {int(n) for n in stated} == {len(outcomes)}
    (misses,) = re.findall(r"Misses left as error rather than fitted \((\d+) rows outside ±15 %\)", README)
    assert int(misses) == sum(abs(o.error) > evaluate.WITHIN for o in outcomes)
