"""verify-cabling identifies UFM appliances on leaf ports in what real ``ibnetdiscover`` prints.

The node description a UFM appliance's HCA reports is not published by NVIDIA, so the simulated fabric
gives the appliances' HCAs the ConnectX-7 firmware default (their catalogued adapter): verify-cabling
identifies them by position (the planned port of an identified leaf), reports their cables ok with a
'description not set' warning, and reports a UFM cable moved to another leaf port.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ib_fixtures import plan_of, run_cli, simulators
from ibsim_harness import REQUIRES_TOOLS, Simulator, first_ca

from generator.emit.ibnetdiscover import render_netfile

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]

PAIR = str(Path(__file__).resolve().parents[1] / "attached" / "fixtures" / "ufm-pair.yaml")
FIRMWARE = "MT4129 ConnectX7   Mellanox Technologies"


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    yield from simulators(tmp_path)


def _appliance_descriptions(net: str) -> str:
    """The appliances' CA headers with the firmware-default description (what UFM writes is unpublished)."""
    return re.sub(
        r'^(Ca\s+\d+\s+"H-(?:ufm0\d|spare01)-p\d+"\s+)# "[^"]*"', rf'\1# "{FIRMWARE}"', net, flags=re.M
    )


def _discover(simulator: Callable[..., Simulator], net: str, tmp_path: Path, name: str) -> Path:
    sim = simulator(net, name)
    host = first_ca(net)
    assert "SUBNET UP" in sim.opensm(host, "ftree,minhop").log
    out = tmp_path / f"{name}.ibnetdiscover"
    out.write_text(sim.ibnetdiscover(host))
    return out


def _verify(dump: Path) -> tuple[int, dict]:
    code, out, err = run_cli(
        "verify-cabling", PAIR, "--discovered", str(dump), "--sim-speed", "HDR", "--format", "json"
    )
    assert code in (0, 1), err
    return code, json.loads(out)


def test_appliances_identified_by_position(simulator: Callable[..., Simulator], tmp_path: Path) -> None:
    plan = plan_of(PAIR)
    net = _appliance_descriptions(render_netfile(plan, "compute", sim_speed="HDR"))
    assert net.count(FIRMWARE) == 3
    dump = _discover(simulator, net, tmp_path, "clean")
    assert FIRMWARE in dump.read_text()
    code, report = _verify(dump)
    planned = len(plan.links_of("compute"))
    assert code == 0, report["summary"]
    assert report["summary"]["ok"] == planned
    ufm = [r for r in report["results"] if r.get("cable_id", r.get("id", "")).startswith("C-AS-")]
    assert len(ufm) in (0, 3)  # --all not given: ok cables may be left out of results
    text = json.dumps(report)
    for name in ("ufm01", "ufm02", "spare01"):
        assert f"{name} (p1)" in text and "identified by position only" in text


def test_moved_ufm_cable_is_reported(simulator: Callable[..., Simulator], tmp_path: Path) -> None:
    """ufm01's cable moved from c-leaf-su1-r0 port 31 to port 30: missing where planned, unexpected there."""
    plan = plan_of(PAIR)
    net = render_netfile(plan, "compute", sim_speed="HDR")
    moved = net.replace('[31]\t"H-ufm01-p1"[1]', '[30]\t"H-ufm01-p1"[1]').replace(
        '[1]\t"S-c-leaf-su1-r0"[31]', '[1]\t"S-c-leaf-su1-r0"[30]'
    )
    assert moved.count("[30]") == net.count("[30]") + 2
    dump = _discover(simulator, moved, tmp_path, "moved")
    code, report = _verify(dump)
    assert code == 1
    assert report["summary"]["missing"] == 1 and report["summary"]["unexpected"] == 1
    bad = [r for r in report["results"] if "C-AS-000001" in json.dumps(r)]
    assert bad and all(r["status"] != "ok" for r in bad), bad
