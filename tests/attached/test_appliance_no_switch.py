"""An appliance on a fabric with no switch to cable it to: the direct-attach torus (examples/ethernet-torus.yaml,
`attach: direct`: the nodes are the vertices, cabled to one another) and a fabric the blueprint does not
declare. `ports: N` there was refused with "no free leaf port left ... the topology uses every port", and a
`links` entry with "no switch `x`": both misled. Now one located error says the fabric has no switch and why;
`validate` (rule PLN001, which builds the plan) says what `plan` and `generate` say, as for every other
appliance check of generator/plan/attached.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

TORUS = EXAMPLES / "ethernet-torus.yaml"
NO_SWITCH = (
    "the compute fabric has no switch to cable it to: its topology is a direct-attach torus (attach: direct), "
    "whose nodes are cabled to one another; cable the appliance to `fabric: management`, or give the torus "
    "`attach: switch` and a `switch` model"
)


def _torus_with(tmp_path: Path, appliance: str) -> Path:
    text = TORUS.read_text()
    assert "\nstorage:\n" in text and "appliances:" not in text
    bp = tmp_path / "torus.yaml"
    bp.write_text(text.replace("\nstorage:\n", f"\nappliances:\n  - {appliance}\nstorage:\n"))
    return bp


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), start=1) if needle in ln)


@pytest.mark.parametrize(
    "appliance",
    [
        "{name: app01, fabric: compute, ports: 1, rack_units: 1, power_w: 300}",
        "{name: app01, fabric: compute, links: [{switch: c-leaf-0, port: 1}], rack_units: 1, power_w: 300}",
        "{name: app01, ports: 2}",  # the fabric by default: located at the entry
    ],
)
def test_a_direct_attach_torus_has_no_switch_for_an_appliance(tmp_path: Path, appliance: str) -> None:
    bp = _torus_with(tmp_path, appliance)
    where = f"{bp}:{_line_of(bp, 'name: app01')}:"
    code, out, err = run_cli("validate", str(bp))
    errors = [ln for ln in (out + err).splitlines() if " error PLN001 " in ln]
    assert code == 1 and len(errors) == 1 and NO_SWITCH in errors[0], out + err
    assert errors[0].startswith(where) and "free leaf port" not in errors[0], errors
    code, _o, err = run_cli("plan", str(bp))
    assert code == 2 and NO_SWITCH in err and where in err, err
    out_dir = tmp_path / "out"
    code, _o, err = run_cli("generate", str(bp), "-o", str(out_dir), "-q")
    assert code == 1 and NO_SWITCH in err and where in err and not out_dir.exists(), err


def test_an_appliance_on_an_undeclared_fabric_says_so(tmp_path: Path) -> None:
    bp = _torus_with(tmp_path, "{name: app01, fabric: storage, ports: 1}")
    code, out, _err = run_cli("validate", str(bp))
    assert code == 1 and "appliance `app01`: the blueprint declares no storage fabric" in out, out
    assert f"{bp}:{_line_of(bp, 'name: app01')}:" in out


def test_an_appliance_on_the_torus_management_switches_is_cabled(tmp_path: Path) -> None:
    """What the error proposes works: the same appliance on the management fabric's leaf."""
    bp = _torus_with(tmp_path, "{name: app01, fabric: management, ports: 1, rack_units: 1, power_w: 300}")
    code, out, err = run_cli("validate", str(bp))
    assert code == 0 and " PLN001 " not in out + err, out + err
