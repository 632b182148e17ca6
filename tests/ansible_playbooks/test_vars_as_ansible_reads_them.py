"""Every example's generated Ansible variables and inventories, read by ansible-core's own YAML loader (what
ansible-playbook reads group_vars and inventories with), hold the values the generator wrote: each string a
string. ansible-core 2.19 reads an `!unsafe` scalar as if it were unquoted, so `!unsafe "550.120"` became the
float 550.12 and `!unsafe ""` null (the driver role then failed its first assert on every example); the
generator writes the tag only where a value holds a brace. The oracle is PyYAML's SafeLoader with `!unsafe`
read as the string it tags, not the generator's own code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.parsing.yaml.loader import AnsibleLoader
from conftest import EXAMPLES, run_cli

Plain = type("Plain", (yaml.SafeLoader,), {})
Plain.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _mismatches(expected: Any, got: Any, path: str) -> list[str]:
    """Where Ansible's reading differs from the written value, type included (a str read as a float)."""
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(expected) != set(got):
            return [f"{path}: {got!r}"]
        return [m for k in expected for m in _mismatches(expected[k], got[k], f"{path}.{k}")]
    if isinstance(expected, list):
        if not isinstance(got, list) or len(expected) != len(got):
            return [f"{path}: {got!r}"]
        return [
            m
            for i, (e, g) in enumerate(zip(expected, got, strict=True))
            for m in _mismatches(e, g, f"{path}[{i}]")
        ]
    if isinstance(expected, str) != isinstance(got, str) or expected != got:
        return [f"{path}: written {expected!r}, Ansible reads {got!r}"]
    return []


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_ansible_reads_the_strings_it_was_given(example: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("generate", str(example), "-o", str(tmp_path / "b"), "--only", "ansible")
    assert code == 0, err
    ansible = tmp_path / "b" / "ansible"
    files = [p for p in ansible.rglob("*.yml") if "group_vars" in p.parts or "inventories" in p.parts]
    assert files
    wrong = []
    for f in files:
        text = f.read_text()
        written = yaml.load(text, Loader=Plain)  # SafeLoader with one string constructor
        read = yaml.load(text, Loader=AnsibleLoader)  # Ansible's own loader is the oracle
        wrong += [f"{f.relative_to(ansible)} {m}" for m in _mismatches(written, read, "$")]
    assert not wrong, "\n".join(wrong[:20])
