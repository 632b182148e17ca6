"""`verify-cabling --accept`: a port is a port number or an interface name, nothing YAML makes of other text.
pydantic's lax mode took `port: true` and `port: 1.0` (and "1.0", "+1", "0_1") as port 1, so an
acknowledgement meant for no port passed for one and the command said MATCHES THE PLAN, exit 0. Each is now
refused at its `file:line:col`, exit 2; the documented forms (docs/existing-site.md: `port: 40`; the module's
`port: swp20s1`) and a number in quotes are accepted as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from vfy_plans import TINY, plan_of, run_cli

from generator.foreign import ForeignInputError
from generator.verify.accept import read_accept

SIM = Path(__file__).resolve().parent / "fixtures" / "tiny-ndr-compute-sim-hdr.ibnetdiscover"


def _write(tmp_path: Path, port: str) -> Path:
    path = tmp_path / "accepted.yaml"
    path.write_text(f"ports:\n  - {{device: c-leaf-su1-r0, port: {port}, reason: UFM}}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("port", "what"),
    [
        ("true", "a boolean"),
        ("false", "a boolean"),
        ("yes", "a boolean"),  # YAML 1.1, as the loader reads it, or a string refused as no interface
        ("1.0", "a float"),
        ("40.0", "a float"),
        ('"1.0"', "front-panel interface"),
        ('"+1"', "front-panel interface"),
        ('"0_1"', "front-panel interface"),
        ("null", "null"),
        ("[1]", "a list"),
    ],
)
def test_what_is_no_port_is_refused_at_its_line(tmp_path: Path, port: str, what: str) -> None:
    path = _write(tmp_path, port)
    with pytest.raises(ForeignInputError) as exc:
        read_accept(path, plan_of(TINY), "compute")
    message = str(exc.value)
    assert message.startswith(f"{path}:2:") and "$.ports[0].port" in message, message
    if what != "a boolean" or port != "yes":
        assert what in message, message


# swp20s1 on this plan's split cages: cage 20, sub-port 2, logical port 40 (PlanIndex.switch_port)
@pytest.mark.parametrize(("port", "key"), [("40", "40"), ('"40"', "40"), ("'7'", "7"), ("swp20s1", "40")])
def test_the_documented_forms_are_accepted(tmp_path: Path, port: str, key: str) -> None:
    accepted = read_accept(_write(tmp_path, port), plan_of(TINY), "compute")
    assert accepted.ports == {("c-leaf-su1-r0", key): "UFM"}


def test_a_boolean_port_fails_the_command_with_exit_2(tmp_path: Path) -> None:
    path = _write(tmp_path, "true")
    code, out, err = run_cli(
        "verify-cabling", str(TINY), "--discovered", str(SIM), "--sim-speed", "HDR", "--accept", str(path)
    )
    assert code == 2, out + err
    assert f"{path}:2:" in err and "not a boolean" in err and "Traceback" not in err
    assert "MATCHES THE PLAN" not in out
