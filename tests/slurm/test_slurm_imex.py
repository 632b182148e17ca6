"""The IMEX channels of multi-node NVLink domains in the slurm.conf fragment (GB200 NVL72, 18 trays a domain).

From the Slurm release of catalog:software.imex.slurm_switch (24.05.2) the fragment sets
``SwitchType=switch/nvidia_imex``, Slurm's plugin that gives each job its own channel; below it, or with
software.slurm unset, it says jobs share channel 0 (SLM001) and sets no plugin an older slurmctld could not
load. The slurmctld of these tests is Debian's 22.05, which predates the plugin (24.05): the new release's
fragment is checked as text, the old release's is loaded by the real slurmctld (test_slurm_real's runner).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from real_tools import missing_executables
from slurm_blueprints import BLUEPRINTS

from generator.emit.slurm import render
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

_DIR = tempfile.TemporaryDirectory(prefix="slurm-imex-")


def _files(base: str, **software: str) -> dict[str, str]:
    """The Slurm files of test blueprint ``base`` with these ``software`` pins."""
    text = BLUEPRINTS[base]
    if software:
        text += "software:\n" + "".join(f"  {k}: {v!r}\n" for k, v in software.items())
    path = Path(_DIR.name) / f"{base}-{'-'.join(software.values()) or 'none'}.yaml"
    path.write_text(text)
    _, cluster = load_and_resolve(path)
    return render(cluster, build_plan(cluster))


def _fragment(base: str, **software: str) -> str:
    return _files(base, **software)["slurm.conf.fragment"]


def _settings(fragment: str) -> dict[str, str]:
    return dict(
        line.split("=", 1)
        for line in fragment.splitlines()
        if line and not line.startswith("#") and " " not in line
    )


@pytest.mark.parametrize("release", ["24.05.2", "24.11.1", "25.05"])
def test_a_release_with_the_plugin_gives_each_job_a_channel(release: str) -> None:
    fragment = _fragment("nvl72", slurm=release)
    assert _settings(fragment).get("SwitchType") == "switch/nvidia_imex", fragment
    assert "SwitchParameters=" not in fragment  # both keys' defaults apply (see generator/emit/slurm/imex.py)
    assert "channel 0" not in fragment


@pytest.mark.parametrize("release", ["23.11.10", "24.05.1", "24.05"])
def test_an_older_release_shares_channel_0_and_says_so(release: str) -> None:
    fragment = _fragment("nvl72", slurm=release)
    assert "SwitchType" not in _settings(fragment), fragment
    (line,) = [ln for ln in fragment.splitlines() if "IMEX" in ln]
    assert f"Slurm {release}" in line and "channel 0" in line and "SLM001" in line, line


def test_unknown_release_and_shared_mode() -> None:
    unknown = _fragment("nvl72")
    assert "SwitchType" not in _settings(unknown)
    assert re.search(r"channel 0 \(software\.slurm unset;.*SLM001", unknown), unknown
    shared = _fragment("nvl72", slurm="24.11.1", imex_channels="shared")
    assert "SwitchType" not in _settings(shared)
    assert "software.imex_channels: shared" in shared


def test_no_imex_without_a_multi_node_domain() -> None:
    fragment = _fragment("tier3", slurm="24.11.1")
    assert "IMEX" not in fragment and "SwitchType" not in fragment


@pytest.mark.needs_tools(
    missing_executables(("slurmctld", "scontrol")), hint="apt-get install slurmctld slurm-client"
)
def test_real_slurmctld_loads_the_old_release_fragment(tmp_path: Path) -> None:
    """The fragment of the slurmctld's own release (22.05, before the plugin) loads: a SwitchType naming a
    plugin it does not have would stop it at start, as a TopologyPlugin does (so an NVL72 domain beside DGX
    nodes: topology/tree, which 22.05 has)."""
    from test_slurm_real import _conf, _scontrol

    files = _files("nvl72-mixed", slurm="22.05.8")
    (tmp_path / "topology.conf").write_text(files["topology.conf"])
    conf = _conf(tmp_path, files["slurm.conf.fragment"])
    shown = dict(
        (k.strip(), v.strip())
        for k, _, v in (ln.partition("=") for ln in _scontrol(conf, "show", "config").splitlines())
    )
    assert shown["SwitchType"] in ("switch/none", "(null)"), shown["SwitchType"]
