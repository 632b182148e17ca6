"""Rule NET025 against the real simulator and the real ibnetdiscover: a switch planned as one node with more
than 254 ports (a Quantum-X800 Q3400 split to 288 x 400G) is a node no subnet can show — ibsim keeps
NumPorts in 8 bits and ibnetdiscover prints the switch with 288 mod 256 = 32 ports — and NET025 refuses that
blueprint; at XDR (144 ports) the real tools print the planned switch and NET025 is silent."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from vfy_plans import plan_of

from generator.emit.ibnetdiscover import render_netfile
from generator.pipeline import check

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "realtools"))
from ibsim_harness import REQUIRES_TOOLS, Simulator, first_ca

FIXTURES = Path(__file__).resolve().parents[1] / "rules" / "fixtures" / "NET025"
SWITCH = re.compile(r'^Switch\s+(\d+)\s+"[^"]*"\s+#\s+"([^"]+)"', re.M)

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]


def _ports_as_discovered(blueprint: Path, workdir: Path) -> tuple[dict[str, int], dict[str, int]]:
    """(switch → ports the plan's expected dump gives it, switch → ports the real ibnetdiscover prints)."""
    text = render_netfile(plan_of(blueprint), "compute")
    planned = {name: int(n) for n, name in SWITCH.findall(text)}
    netfile = workdir / "fabric.net"
    netfile.write_text(text)
    with Simulator(netfile, workdir) as sim:
        dump = sim.ibnetdiscover(first_ca(text))
    return planned, {name: int(n) for n, name in SWITCH.findall(dump)}


@pytest.mark.parametrize(("fixture", "fires"), [("fail.yaml", True), ("pass.yaml", False)])
def test_net025_fires_exactly_when_the_real_tools_cannot_show_the_planned_switch(
    fixture: str, fires: bool, tmp_path: Path
) -> None:
    blueprint = FIXTURES / fixture
    planned, seen = _ports_as_discovered(blueprint, tmp_path)
    leaves = {name for name in planned if "leaf" in name}
    assert leaves and set(seen) == set(planned)
    wrong = {name for name in leaves if seen[name] != planned[name]}
    assert (wrong == leaves) is fires and (not wrong) is (not fires), (planned, seen)
    if fires:
        assert {planned[n] for n in leaves} == {288} and {seen[n] for n in leaves} == {288 % 256}
    assert any(f.rule == "NET025" for f in check(blueprint).findings) is fires
