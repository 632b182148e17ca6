"""The transceiver at the appliance end of an optical cable: the cage comes from the catalogue or the
blueprint (``port_form_factor``), never from a pool NIC; unknown, the plan counts the modules as not chosen
and rule NET024 says so at the appliance, instead of a ``generic-...-unknown`` "no catalogue match" line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli

HERE = Path(__file__).resolve().parent
PAIR = HERE / "fixtures" / "ufm-pair.yaml"

# ufm01 in a rack of the other row, so its one cable to c-leaf-su1-r0 is fibre (mmf), not a DAC
FAR = "    power_w: 600\n  - name: ufm02"


def _far(tmp_path: Path, extra: str = "") -> Path:
    text = PAIR.read_text()
    assert text.count(FAR) == 1
    out = tmp_path / "far.yaml"
    out.write_text(text.replace(FAR, f"    power_w: 600\n    rack: r02-08\n{extra}  - name: ufm02"))
    return out


def _bom(path: Path) -> list[dict[str, object]]:
    code, out, err = run_cli("plan", str(path), "--format", "json")
    assert code == 0, err
    return json.loads(out)["bom"]


def _transceivers(path: Path) -> dict[str, tuple[int, str]]:
    return {
        str(b["model"]): (int(str(b["count"])), str(b["detail"]))
        for b in _bom(path)
        if b["item"] == "transceiver"
    }


def test_unknown_form_factor_is_counted_not_chosen_and_warned(tmp_path: Path) -> None:
    bp = _far(tmp_path)
    cables = [b for b in _bom(bp) if b["item"] == "cable" and b["model"] == "mmf"]
    assert cables, "the fixture's far appliance should be on multimode fibre"
    mods = _transceivers(bp)
    assert not any("no catalogue match" in d or m.startswith("generic-") for m, (_n, d) in mods.items()), mods
    count, detail = mods["appliance-port-mmf-400g"]
    assert count == 1 and "port_form_factor" in detail and "NET024" in detail
    # the switch end of that cable still gets its module (one twin-port cage more than the DAC variant's)
    assert mods["mma4z00-ns"][0] == _transceivers(PAIR)["mma4z00-ns"][0] + 1
    code, out, _err = run_cli("validate", str(bp))
    assert code == 0
    line = next(i for i, ln in enumerate(bp.read_text().splitlines(), 1) if "name: ufm01" in ln)
    warned = [ln for ln in out.splitlines() if "NET024" in ln and "ufm01" in ln]
    assert len(warned) == 1 and "form factor" in warned[0] and f":{line + 1}:" in warned[0], out
    assert not any("NET024" in ln and "ufm02" in ln for ln in out.splitlines())  # its cable is a DAC


def test_declared_form_factor_picks_the_catalogue_module(tmp_path: Path) -> None:
    bp = _far(tmp_path, "    port_form_factor: osfp\n")
    mods = _transceivers(bp)
    assert mods["mma4z00-ns400"][0] == 1  # 400G single-port OSFP SR4, the ConnectX-7 OSFP module
    assert not any(m.startswith(("appliance-port-", "generic-")) for m in mods), mods
    code, out, _err = run_cli("validate", str(bp))
    assert code == 0 and "form factor" not in out


@pytest.mark.parametrize("command", ["validate", "plan"])
def test_unknown_declared_form_factor_is_a_located_error(tmp_path: Path, command: str) -> None:
    bp = _far(tmp_path, "    port_form_factor: osfpp\n")
    code, out, err = run_cli(command, str(bp))
    assert code == (1 if command == "validate" else 2), out + err
    line = next(i for i, ln in enumerate(bp.read_text().splitlines(), 1) if "osfpp" in ln)
    text = out + err
    assert f"{bp}:{line}:" in text and "`osfpp`" in text and "did you mean `osfp`" in text, text
    assert "Traceback" not in text
