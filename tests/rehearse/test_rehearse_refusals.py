"""Refusals of `blueprint rehearse` (exit 2, a sentence the user can act on); no real tool needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from generator.rehearse import tools


def _build(tmp_path: Path) -> Path:
    """The smallest build with a routed fabric: a manifest, one NVUE switch, the cabling header."""
    root = tmp_path / "build"
    sw = root / "switches" / "compute" / "c-leaf-001"
    sw.mkdir(parents=True)
    (root / "manifest.json").write_text('{"blueprint": {"name": "t"}}')
    (sw / "startup.yaml").write_text(
        "- set:\n    router:\n      bgp:\n        autonomous-system: 4200000000\n"
        "    interface:\n      lo:\n        ip:\n          address:\n            10.254.0.1/32: {}\n"
    )
    (root / "cabling").mkdir()
    (root / "cabling" / "cables.csv").write_text("cable_id,fabric,layer,a_device,a_port,b_device,b_port\n")
    return root


def test_not_root_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools, "is_root", lambda: False)
    code, _, err = run_cli("rehearse", str(_build(tmp_path)))
    assert code == 2 and "run it as root" in err


def test_a_missing_tool_names_its_debian_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools, "is_root", lambda: True)
    real = tools.tool
    monkeypatch.setattr(tools, "tool", lambda name: None if name == "bgpd" else real(name))
    code, _, err = run_cli("rehearse", str(_build(tmp_path)))
    assert code == 2 and "not installed: bgpd" in err and "apt-get install frr" in err


def test_unknown_fabric_and_fail_device_and_non_build(tmp_path: Path) -> None:
    build = _build(tmp_path)
    code, _, err = run_cli("rehearse", str(build), "--fabric", "storage")
    assert code == 2 and "no fabric storage" in err and "it has: compute" in err
    code, _, err = run_cli("rehearse", str(build), "--fail", "c-spine-009")
    assert code == 2 and "--fail c-spine-009: not a switch of compute" in err
    code, _, err = run_cli("rehearse", str(tmp_path))
    assert code == 2 and "no manifest.json" in err


def test_a_build_without_switches_has_nothing_to_rehearse(tmp_path: Path) -> None:
    """A single node, a cloud fabric or a direct-attach torus: exit 0, said, without root or tools."""
    root = tmp_path / "build"
    (root / "cabling").mkdir(parents=True)
    (root / "manifest.json").write_text('{"blueprint": {"name": "t"}}')
    code, out, _ = run_cli("rehearse", str(root), "--format", "json")
    assert code == 0 and '"nothing_to_rehearse": "nothing to rehearse: the build has no switch' in out
    code, _, err = run_cli("rehearse", str(root), "--fabric", "compute")
    assert code == 2 and "no fabric compute" in err and "it has: none" in err


@pytest.mark.parametrize("value", ["-5", "0", "nan", "inf", "1e3", "86401", "1_0", "٣"])
def test_a_timeout_that_is_not_a_wait_is_refused(tmp_path: Path, value: str) -> None:
    """float() takes nan, inf, 1e999 and negatives, which reached subprocess and the polls (an internal error,
    exit 3, for nan and -5 before)."""
    code, _, err = run_cli("rehearse", str(_build(tmp_path)), "--timeout", value)
    assert code == 2 and "argument --timeout" in err and "give seconds above 0 and at most 86400" in err


def test_the_report_never_replaces_a_file_of_the_build(tmp_path: Path) -> None:
    """`-o BUILD/ansible/inventory.yml` replaced the build's inventory with the report after the whole run (the
    next `generate` refused it as edited); refused before anything runs, like a file that is not a build."""
    build = _build(tmp_path)
    (build / "manifest.json").write_text('{"blueprint": {"name": "t"}, "files": {"cabling/cables.csv": "x"}}')
    for target in (build / "cabling" / "cables.csv", build / "manifest.json"):
        before = target.read_bytes()
        code, _, err = run_cli("rehearse", str(build), "-o", str(target))
        assert code == 2 and "would replace that file" in err, err
        assert target.read_bytes() == before
    code, _, err = run_cli("rehearse", str(build / "manifest.json"))
    assert code == 2 and "not a directory" in err, err
