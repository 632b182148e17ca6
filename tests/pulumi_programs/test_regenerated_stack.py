"""Regenerating into the same build drops the stack settings the blueprint dropped.

The stack file is merged so that keys added with `pulumi config set` survive a regenerate; every key
missing from the new file was taken for such a key, so a reservation id or zone the blueprint no longer
sets stayed in `Pulumi.prod.yaml` and the program still used it (the dropped reservation in the launch
template, the dropped zone on the scale set). The previous build's manifest records what it wrote
(`stack_config`): such keys are the blueprint's and go; a key the user added stays; a written key edited by
hand since is refused like any other hand edit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")

from pulumi_cases import run_target
from pulumi_harness import stack_config

from generator.load import load_file
from generator.resolve import resolve

pytestmark = pytest.mark.pulumi

ON_DEMAND = "    capacity: capacity-block\n    capacity_hours: 168\n"
RESERVED = "    capacity: reservation\n    reservation_id: cr-0aaaaaaaaaaaaaaaa\n"


def _generate(blueprint: Path, out: Path, *extra: str) -> tuple[int, str]:
    code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "--quiet", "--only", "pulumi", *extra)
    return code, err


def _aws(tmp_path: Path) -> tuple[Path, str]:
    text = (EXAMPLES / "aws-p5-efa.yaml").read_text()
    assert ON_DEMAND in text
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(text.replace(ON_DEMAND, RESERVED))
    return blueprint, text.replace(ON_DEMAND, "    capacity: on-demand\n")


def test_a_reservation_dropped_from_the_blueprint_leaves_the_stack_and_the_program(tmp_path: Path) -> None:
    blueprint, on_demand = _aws(tmp_path)
    out = tmp_path / "build"
    assert _generate(blueprint, out) == (0, "")
    stack = out / "pulumi" / "Pulumi.prod.yaml"
    name = resolve(load_file(blueprint)).name
    assert stack_config(out / "pulumi")[f"{name}:reservationId"] == "cr-0aaaaaaaaaaaaaaaa"
    # what `pulumi config set` adds stays
    stack.write_text(stack.read_text() + f'  {name}:mine: "kept"\n  aws:profile: "lab"\n')
    blueprint.write_text(on_demand)
    code, err = _generate(blueprint, out)
    assert code == 0, err
    config = stack_config(out / "pulumi")
    assert f"{name}:reservationId" not in config and config[f"{name}:capacity"] == "on-demand"
    assert config[f"{name}:mine"] == "kept" and config["aws:profile"] == "lab"
    run = run_target(resolve(load_file(blueprint)), out / "pulumi")
    launch = run.one("aws:ec2/launchTemplate:LaunchTemplate")
    assert "capacityReservationSpecification" not in launch.inputs, launch.inputs


def test_a_dropped_key_edited_by_hand_is_refused(tmp_path: Path) -> None:
    blueprint, on_demand = _aws(tmp_path)
    out = tmp_path / "build"
    assert _generate(blueprint, out) == (0, "")
    stack = out / "pulumi" / "Pulumi.prod.yaml"
    stack.write_text(stack.read_text().replace("cr-0aaaaaaaaaaaaaaaa", "cr-0bbbbbbbbbbbbbbbb"))
    blueprint.write_text(on_demand)
    code, err = _generate(blueprint, out)
    assert code == 1 and "reservationId (no longer in the blueprint)" in err, err
    assert "cr-0bbbbbbbbbbbbbbbb" in stack.read_text(), "nothing written"
    code, err = _generate(blueprint, out, "--overwrite-edited")
    assert code == 0, err
    assert "reservationId" not in stack.read_text(), "the blueprint's value: none"


def test_an_azure_zone_dropped_from_the_blueprint_leaves_the_scale_set(tmp_path: Path) -> None:
    text = (EXAMPLES / "azure-ndh100v5.yaml").read_text()
    assert '    zone: "1"\n' in text
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(text)
    out = tmp_path / "build"
    assert _generate(blueprint, out) == (0, "")
    name = resolve(load_file(blueprint)).name
    assert stack_config(out / "pulumi")[f"{name}:zone"] == "1"
    blueprint.write_text(text.replace('    zone: "1"\n', ""))
    code, err = _generate(blueprint, out)
    assert code == 0, err
    assert f"{name}:zone" not in stack_config(out / "pulumi")
    run = run_target(resolve(load_file(blueprint)), out / "pulumi")
    vmss = run.one("azure-native:compute:VirtualMachineScaleSet")
    assert not vmss.inputs.get("zones"), vmss.inputs.get("zones")
