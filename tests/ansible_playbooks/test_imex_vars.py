"""The nvidia_imex role's generated variables: one node list per multi-node NVLink domain (GB200 NVL72, 18
trays of 4 GPUs), grouped as Slurm's topology blocks are; nothing for pools whose NVLink stays inside a server;
the role's own defaults equal to catalog:software.imex."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from ansible_helpers import build
from conftest import EXAMPLES

from generator.resources import playbooks_dir

FIXTURES = Path(__file__).resolve().parent.parent / "rules" / "fixtures"


def gb200_blueprint(tmp: Path, trays: int) -> Path:
    """The SFT007 pass fixture (GB200 NVL72 trays) with ``trays`` trays: one NVLink domain per 18."""
    doc = yaml.safe_load((FIXTURES / "SFT007" / "pass.yaml").read_text())
    doc["pools"][0]["count"] = trays
    doc["site"]["racks_per_row"] = 8  # the trays' racks and the network racks
    path = tmp / f"gb200-{trays}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _vars(out: Path, pool: str) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((out / "ansible" / "group_vars" / f"pool_{pool}.yml").read_text()) or {}


@pytest.fixture(scope="module")
def two_domains(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("imex")
    return build(gb200_blueprint(tmp, 36), tmp / "build")


def test_two_domains_get_two_node_lists(two_domains: Path) -> None:
    domains = _vars(two_domains, "gpu")["nvidia_imex_domains"]
    assert domains == {
        "nvl01": [f"gpu{i:03d}" for i in range(1, 19)],
        "nvl02": [f"gpu{i:03d}" for i in range(19, 37)],
    }


def test_domains_are_the_slurm_blocks(two_domains: Path, tmp_path: Path) -> None:
    """One grouping: the IMEX domains are topology-block.conf's blocks, by name and nodes."""
    from generator.emit.slurm.topology import slurm_topology
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    _, cluster = load_and_resolve(gb200_blueprint(tmp_path, 36))
    topo = slurm_topology(cluster, build_plan(cluster))
    blocks = {b.name: list(b.nodes) for b in topo.blocks}
    assert blocks == _vars(two_domains, "gpu")["nvidia_imex_domains"]


def test_facts_come_from_the_catalogue(two_domains: Path) -> None:
    from blueprints.catalog import default_catalog

    imex = default_catalog().software.imex
    assert imex is not None
    v = _vars(two_domains, "gpu")
    # the fixture's Blackwell default branch 570: NVIDIA's repository names the package with the branch
    assert v["nvidia_imex_package"] == "nvidia-imex-570"
    assert v["nvidia_imex_service"] == "nvidia-imex.service"
    assert v["nvidia_imex_nodes_config_file"] == "/etc/nvidia-imex/nodes_config.cfg"
    assert v["nvidia_imex_node_config_key"] == "IMEX_NODE_CONFIG_FILE"
    assert v["nvidia_imex_config_file"] == "/etc/nvidia-imex/config.cfg"


@pytest.mark.parametrize("example", ["superpod-h100-4su", "single-dgx-h100", "aws-p5-efa"])
def test_servers_without_a_multi_node_domain_get_nothing(example: str, tmp_path: Path) -> None:
    out = build(EXAMPLES / f"{example}.yaml", tmp_path / example)
    for f in (out / "ansible" / "group_vars").glob("*.yml"):
        assert "nvidia_imex" not in f.read_text(), f


def test_role_defaults_equal_the_catalogue() -> None:
    """The role used on its own (no generated group_vars) installs and writes what the catalogue says."""
    from blueprints.catalog import default_catalog

    imex = default_catalog().software.imex
    assert imex is not None
    text = (playbooks_dir() / "roles" / "nvidia_imex" / "defaults" / "main.yml").read_text()
    defaults = yaml.safe_load(text)
    assert defaults["nvidia_imex_packages"] == [
        {"first": p.first, "last": p.last, "name": p.name} for p in imex.packages
    ]
    assert defaults["nvidia_imex_service"] == f"{imex.service}.service"
    assert defaults["nvidia_imex_config_file"] == imex.config_file
    assert defaults["nvidia_imex_node_config_key"] == imex.node_config_key
    assert defaults["nvidia_imex_nodes_config_file"] == imex.nodes_config_file
    assert re.search(r"^nvidia_imex_domains: \{\}$", text, re.M)


def _gb200(tmp: Path, **software: str) -> Path:
    """The two-domain GB200 blueprint with ``software`` pins added."""
    path = gb200_blueprint(tmp, 36)
    doc = yaml.safe_load(path.read_text())
    doc["software"].update(software)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("branch", "package"), [("550", "nvidia-imex-550"), ("575", "nvidia-imex-575"), ("580", "nvidia-imex")]
)
def test_package_named_per_branch(branch: str, package: str, tmp_path: Path) -> None:
    """NVIDIA's CUDA repository drops the branch from the name at 580 (NVIDIA/gpu-driver-container
    imex_install: >= 580 nvidia-imex, >= 550 nvidia-imex-<branch>): the build names the package itself."""
    out = build(_gb200(tmp_path, driver_branch=branch, cuda="12.8"), tmp_path / "build")
    text = (out / "ansible" / "group_vars" / "pool_gpu.yml").read_text()
    assert _vars(out, "gpu")["nvidia_imex_package"] == package
    assert "gpu-driver-container" in text  # the source of the name, next to it


def test_declared_package_for_an_unrecorded_branch(tmp_path: Path) -> None:
    """A branch no source names: the blueprint's software.imex_package is what the role installs."""
    out = build(
        _gb200(tmp_path, driver_branch="595", imex_package="nvidia-imex", cuda="12.8"), tmp_path / "b"
    )
    text = (out / "ansible" / "group_vars" / "pool_gpu.yml").read_text()
    assert _vars(out, "gpu")["nvidia_imex_package"] == "nvidia-imex"
    assert "software.imex_package (driver branch 595)" in text


def test_unrecorded_branch_without_a_package_is_refused(tmp_path: Path) -> None:
    """No guess: the blueprint is refused, located at software.driver_branch, telling what to set."""
    from conftest import run_cli

    path = _gb200(tmp_path, driver_branch="595", cuda="12.8")
    code, out, err = run_cli("validate", str(path))
    assert code == 1, out + err
    line = next(line for line in out.splitlines() if " SFT010 " in line)
    assert line.startswith(f"{path}:") and "595" in line, line
    assert "software.imex_package" in out


def test_role_defaults_name_the_package_per_branch(tmp_path: Path) -> None:
    """The role on its own (no generated group_vars) picks the same names from its table, and none (the
    install stops) for a branch outside it."""
    from ansible_helpers import ansible_bin

    play = tmp_path / "play.yml"
    defaults = playbooks_dir() / "roles" / "nvidia_imex" / "defaults" / "main.yml"
    play.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "localhost",
                    "gather_facts": False,
                    "vars_files": [str(defaults)],
                    "tasks": [{"ansible.builtin.debug": {"msg": "PKG=[{{ nvidia_imex_package }}]"}}],
                }
            ]
        )
    )
    import subprocess

    for branch, want in (
        ("570", "nvidia-imex-570"),
        ("580", "nvidia-imex"),
        ("590", "nvidia-imex"),
        ("600", ""),
    ):
        proc = subprocess.run(
            [
                ansible_bin("ansible-playbook"),
                "-i",
                "localhost,",
                "-c",
                "local",
                str(play),
                "-e",
                f"nvidia_driver_branch={branch}",
                "-e",
                "ansible_os_family=Debian",  # facts are not gathered here
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"PKG=[{want}]" in proc.stdout, (branch, proc.stdout)


def test_the_imex_pin_reads_the_driver_package_the_build_installs(two_domains: Path, tmp_path: Path) -> None:
    """IMEX is pinned to the installed driver's version, read from the driver package's version. On GB200
    (Blackwell: the open kernel modules) the build installs `nvidia-driver-<branch>-open`; the role read
    `nvidia-driver-<branch>`, never installed there, so the pin was empty and IMEX came at the branch's
    newest version, which the service refuses on another loaded driver. Played by real ansible-playbook with
    the generated group_vars."""
    import subprocess

    from ansible_helpers import ansible_bin

    pool = _vars(two_domains, "gpu")
    defaults = playbooks_dir() / "roles" / "nvidia_imex" / "defaults" / "main.yml"
    play = tmp_path / "play.yml"
    play.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "localhost",
                    "gather_facts": False,
                    "vars_files": [
                        str(defaults),
                        str(two_domains / "ansible" / "group_vars" / "pool_gpu.yml"),
                    ],
                    "tasks": [{"ansible.builtin.debug": {"msg": "PKG=[{{ nvidia_imex_driver_package }}]"}}],
                }
            ]
        )
    )
    proc = subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            str(play),
            "-e",
            "ansible_os_family=Debian",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    installed = pool["nvidia_driver_version_package"]
    assert installed.endswith("-open"), installed  # Blackwell gets the open flavour (catalogue)
    assert f"PKG=[{installed}]" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    ("software", "channel0"),
    [
        ({"slurm": "24.11.1"}, False),
        ({"slurm": "24.05.2"}, False),
        ({"slurm": "24.05.1"}, True),
        ({}, True),
        ({"slurm": "24.11.1", "imex_channels": "shared"}, True),
    ],
)
def test_channel0_only_where_slurm_gives_no_channel_per_job(
    software: dict[str, str], channel0: bool, tmp_path: Path
) -> None:
    """Slurm's switch/nvidia_imex (from 24.05.2, catalog:software.imex.slurm_switch) gives each job its own
    channel: the role then makes no channel 0 for all. Below it, unset, or asked for (shared), it does."""
    from generator.emit.slurm import render
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    path = _gb200(tmp_path, **software)
    out = build(path, tmp_path / "b")
    assert _vars(out, "gpu")["nvidia_imex_create_channel0"] is channel0
    _, cluster = load_and_resolve(path)
    fragment = render(cluster, build_plan(cluster))["slurm.conf.fragment"]
    # one answer: the role's channel 0 and Slurm's plugin never both, never neither
    assert ("SwitchType=switch/nvidia_imex" in fragment.splitlines()) is (not channel0), fragment
