"""Every step a generated Pulumi program requires is in its project (issue 29).

The program stops (`pulumi up` fails) on a configuration key it `require`s, or on a RunError that tells the
user to `pulumi config set KEY`. Each such key must be set by the generated stack file or named by a
`pulumi config set KEY` line of the generated README: the OCI README left out `imageId`, so `pulumi up`
stopped with "no OCI GPU/HPC image configured" for a user who followed it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from ruamel.yaml import YAML

CLOUD_EXAMPLES = ("aws-p5-efa", "azure-ndh100v5", "gcp-a3-ultra", "oci-bm-h100", "maas-onprem-h100")
_CONFIGS = re.compile(r"^(\w+) = pulumi\.Config\((?:\"([\w-]+)\")?\)", re.M)
_REQUIRE = re.compile(r"\b(\w+)\.require(?:_secret|_int|_bool|_float|_object)?\(\"([\w:-]+)\"\)")
_TOLD = re.compile(r"pulumi config set (?:--secret )?([\w:-]+)")


def required_keys(program: str, project: str) -> set[str]:
    """Fully qualified keys the program cannot run without (`project:key` or `provider:key`)."""
    namespaces = {var: ns or project for var, ns in _CONFIGS.findall(program)}
    keys = {f"{namespaces[var]}:{key}" for var, key in _REQUIRE.findall(program) if var in namespaces}
    for key in _TOLD.findall(program):  # RunError texts: the step the user is told to take
        keys.add(key if ":" in key else f"{project}:{key}")
    return keys


def provided_keys(stack_file: Path, readme: str, project: str) -> set[str]:
    config = (YAML(typ="safe", pure=True).load(stack_file.read_text(encoding="utf-8")) or {}).get(
        "config"
    ) or {}
    told = {k if ":" in k else f"{project}:{k}" for k in _TOLD.findall(readme)}
    return set(config) | told


@pytest.mark.parametrize("example", CLOUD_EXAMPLES)
def test_readme_names_every_required_setting(example: str, tmp_path: Path) -> None:
    build = tmp_path / "b"
    code, _, err = run_cli(
        "generate", str(EXAMPLES / f"{example}.yaml"), "-o", str(build), "-q", "--only", "pulumi"
    )
    assert code == 0, err
    pulumi = build / "pulumi"
    project = YAML(typ="safe", pure=True).load((pulumi / "Pulumi.yaml").read_text(encoding="utf-8"))["name"]
    (stack_file,) = [p for p in pulumi.glob("Pulumi.*.yaml")]
    program = (pulumi / "__main__.py").read_text(encoding="utf-8")
    missing = required_keys(program, project) - provided_keys(
        stack_file, (pulumi / "README.md").read_text(encoding="utf-8"), project
    )
    assert not missing, (
        f"{example}: the program needs {sorted(missing)}, neither the stack nor README sets them"
    )


def test_the_parser_finds_what_a_program_requires() -> None:
    program = (
        'config = pulumi.Config()\ngcp_config = pulumi.Config("gcp")\nA = gcp_config.require("project")\n'
        'B = config.require_int("hours")\nraise pulumi.RunError("`pulumi config set imageId <ocid>` first")\n'
    )
    assert required_keys(program, "p") == {"gcp:project", "p:hours", "p:imageId"}
