"""UFM with ``sharp: true``: the commands that turn SHARP on reach the operator.

An appliance is configured by hand from the build (docs/switches.md, "the files are the settings to enter
there"); before this file the flavour's catalogue commands (``ib sm sharp enable``, ``ib sharp enable``) were
read by no code, so a UFM fabric's switches and Aggregation Manager stayed off while NCCL_COLLNET_ENABLE=1
was written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

from blueprints.catalog import subnet_managers
from generator.emit import subnet_manager as sm_emit
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"


def _commands(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def test_ufm_with_sharp_writes_the_catalogue_commands_with_their_source(tmp_path: Path) -> None:
    code, _, err = run_cli("generate", str(SUPERPOD), "-o", str(tmp_path / "build"))
    assert code == 0, err
    rel = "subnet_manager/compute/appliance-commands.txt"
    text = (tmp_path / "build" / rel).read_text()
    ufm = subnet_managers._document().flavours["ufm"]
    assert ufm.sharp is not None and ufm.aggregation_manager is not None
    # SHARP on the switches first (it cannot change while OpenSM runs), then the Aggregation Manager
    assert (
        _commands(text)
        == [ufm.sharp.cli, ufm.aggregation_manager.cli]
        == ["ib sm sharp enable", "ib sharp enable"]
    )
    lines = text.splitlines()
    for step in (ufm.sharp, ufm.aggregation_manager):
        above = lines[lines.index(step.cli or "") - 1]
        assert above == f"# {step.source}" and "Command Reference Guide" in above, above
    assert rel in json.loads((tmp_path / "build" / "manifest.json").read_text())["files"]
    # the storage fabric (upstream OpenSM, no SHARP) has no such file
    assert not (tmp_path / "build" / "subnet_manager" / "storage" / sm_emit.APPLIANCE_COMMANDS).exists()


@pytest.mark.parametrize("sharp", [False, True])
def test_no_commands_without_sharp_or_without_appliance_commands(tmp_path: Path, sharp: bool) -> None:
    """SHARP off on UFM: nothing to enter. NVIDIA's OpenSM with SHARP: a head node the opensm role configures
    (sharp_enabled, sharp_am), its flavour has no appliance command."""
    text = SUPERPOD.read_text()
    old = "subnet_manager: {kind: ufm, ha: true, routing_engine: ftree, sharp: true}"
    assert old in text
    new = old.replace("sharp: true", "sharp: false") if not sharp else old
    path = tmp_path / "bp.yaml"
    path.write_text(text.replace(old, new))
    plan = build_plan(load_and_resolve(str(path))[1])
    files = sm_emit.render(plan.cluster, plan)
    assert ("compute/sharp_am.cfg" in files) is sharp
    assert ("compute/appliance-commands.txt" in files) is sharp
    nvidia = sm_emit.sm_plan(plan.cluster, "compute", plan)
    sm = nvidia.sm.model_copy(update={"kind": "opensm", "flavour": "opensm-nvidia", "sharp": True})
    assert subnet_managers.sharp_on(sm)
    assert sm_emit.render_appliance_commands(dataclasses.replace(nvidia, sm=sm)) is None


def test_catalogue_text_is_data_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command or source holding a line break cannot add a command of its own to the file."""
    plan = build_plan(load_and_resolve(str(SUPERPOD))[1])
    p = sm_emit.sm_plan(plan.cluster, "compute", plan)
    real = subnet_managers.flavour(p.sm)
    assert real is not None and real.sharp is not None
    sharp = real.sharp.model_copy(
        update={"cli": "ib sm sharp enable\nreload", "source": "doc\nno ib sharp enable"}
    )
    monkeypatch.setattr(subnet_managers, "flavour", lambda sm: real.model_copy(update={"sharp": sharp}))
    text = sm_emit.render_appliance_commands(p)
    assert text is not None
    assert _commands(text) == ["ib sm sharp enable reload", "ib sharp enable"]
