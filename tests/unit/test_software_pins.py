"""GPU-dependent software pins and the compatibility rules, against NVIDIA's published minimums.

Expected values are the vendor's (kept here, independent of data/software.yaml): Blackwell is first
built by CUDA 12.8 (Blackwell Compatibility Guide 1.4.2) and CUDA 12.8 needs driver >= 570.26 (CUDA
Toolkit Release Notes, Table 3); CUDA 12.4 needs >= 550.54.14.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible.parsing.yaml.loader import AnsibleLoader
from conftest import run_cli

from generator.pipeline import load_and_resolve

FIX = Path(__file__).resolve().parents[1] / "rules" / "fixtures"
BLACKWELL_MIN_CUDA = "12.8"
BLACKWELL_MIN_BRANCH = "570"


def test_validate_refuses_dgx_b200_on_driver_550() -> None:
    path = FIX / "SFT001" / "fail.yaml"
    code, out, _ = run_cli("validate", str(path))
    assert code == 1
    assert f"{path}:10:3: error SFT001" in out  # software.driver_branch line
    assert f"{path}:11:3: error SFT001" in out  # software.cuda line
    assert f"needs driver branch {BLACKWELL_MIN_BRANCH} or newer" in out


def test_blackwell_without_software_gets_pins_that_drive_it() -> None:
    cluster = load_and_resolve(FIX / "SFT001" / "pass.yaml")[1]
    assert (cluster.software.driver_branch, cluster.software.cuda) == (
        BLACKWELL_MIN_BRANCH,
        BLACKWELL_MIN_CUDA,
    )
    code, out, _ = run_cli("validate", str(FIX / "SFT001" / "pass.yaml"))
    assert code == 0 and " SFT001 " not in out and " SFT002 " not in out


def test_written_pins_are_kept_and_hopper_defaults_unchanged() -> None:
    written = load_and_resolve(FIX / "SFT002" / "pass.yaml")[1]
    assert (written.software.driver_branch, written.software.cuda) == ("550", "12.4")
    code, out, _ = run_cli("validate", str(FIX / "SFT002" / "fail.yaml"))
    assert code == 0 and "warning SFT002 software.cuda 12.8 needs driver 570.26" in out


def test_default_pins_reach_the_ansible_group_vars(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "generate", str(FIX / "SFT001" / "pass.yaml"), "-o", str(tmp_path / "b"), "--only", "ansible"
    )
    assert code == 0, err
    text = (tmp_path / "b" / "ansible" / "group_vars" / "all.yml").read_text()
    # as ansible-playbook reads them (ansible-core's loader): strings, not the numbers they look like
    # (2.19 reads `!unsafe "12.8"` as the float 12.8)
    values = yaml.load(text, Loader=AnsibleLoader)  # Ansible's own loader is the oracle
    assert values["nvidia_driver_branch"] == str(BLACKWELL_MIN_BRANCH)
    assert values["nccl_cuda"] == str(BLACKWELL_MIN_CUDA)
    assert isinstance(values["nvidia_driver_branch"], str) and isinstance(values["nccl_cuda"], str)


# NVIDIA's NCCL download index, v2.12/: nccl_2.12.12-1+cuda10.2, +cuda11.0 and +cuda11.6 only.
NCCL_2_12_12_CUDA = ("10.2", "11.0", "11.6")
# Build lists of NCCL 2.18-2.22 as their sources give them (independent of data/software.yaml):
# NVIDIA/nccl#1142 quoting the NCCL release notes (2.18.3, 2.18.5, 2.19.3); NVIDIA/nccl#1093, NCCL
# maintainer: "we only build for 3 CUDA releases, which is why 12.1 got dropped" (2.19.3);
# cupy/cupy .pfnci/schema.yaml, nccl "2.21": CUDA 12.2, 12.4, 12.5; NVIDIA/nccl#1408, NCCL maintainer:
# "NCCL 2.22.3 was tested with CUDA 12.2, 12.4, and 12.5" plus cupy's 12.6.
PUBLISHED_BUILDS = {
    "2.18.3": ("11.0", "12.0", "12.1", "12.2"),
    "2.18.5": ("11.0", "12.0", "12.2"),
    "2.19.3": ("11.0", "12.0", "12.2", "12.3"),
    "2.21.5": ("12.2", "12.4", "12.5"),
    "2.22.3": ("12.2", "12.4", "12.5", "12.6"),
}
# The model's default NCCL (blueprints/models/software.py) and the Blackwell default (a 2.25 release:
# NVIDIA's NCCL 2.26 release post says 2.25 was solely Blackwell platform support).
DEFAULT_NCCL = "2.21.5"
BLACKWELL_DEFAULT_NCCL = "2.25.1"


def _pins(tmp_path: Path, cuda: str, nccl: str, server: str = "dgx-a100") -> Path:
    text = (FIX / "SFT004" / "fail.yaml").read_text()
    text = text.replace('cuda: "11.4"', f'cuda: "{cuda}"').replace('nccl: "2.12.12"', f'nccl: "{nccl}"')
    path = tmp_path / f"nccl-{nccl}-cuda-{cuda}.yaml"
    path.write_text(text.replace("server: dgx-a100", f"server: {server}"))
    return path


def test_validate_refuses_an_nccl_without_a_build_for_the_cuda_pin() -> None:
    path = FIX / "SFT004" / "fail.yaml"
    code, out, _ = run_cli("validate", str(path))
    assert code == 1
    assert f"{path}:13:3: error SFT004" in out  # the software.nccl line
    assert "libnccl2=2.12.12-1+cuda11.4 does not exist" in out
    assert "CUDA " + ", ".join(NCCL_2_12_12_CUDA) + " only" in out


def test_every_published_build_of_an_nccl_release_validates(tmp_path: Path) -> None:
    for nccl, builds in {"2.12.12": NCCL_2_12_12_CUDA, **PUBLISHED_BUILDS}.items():
        for cuda in builds:
            _, out, _ = run_cli("validate", str(_pins(tmp_path, cuda, nccl)))
            assert " SFT004 " not in out, (nccl, cuda, out)


def test_the_dropped_cuda_releases_are_refused_at_the_nccl_line(tmp_path: Path) -> None:
    # 12.1 is what NVIDIA dropped after 2.18.3 (NVIDIA/nccl#1093); 12.3 is missing between 2.21.5's builds
    for nccl, cuda in (("2.18.5", "12.1"), ("2.19.3", "12.1"), ("2.19.3", "11.8"), (DEFAULT_NCCL, "12.3")):
        path = _pins(tmp_path, cuda, nccl)
        code, out, _ = run_cli("validate", str(path))
        assert code == 1 and f"{path}:13:3: error SFT004" in out, out
        assert f"libnccl2={nccl}-1+cuda{cuda} does not exist" in out
        assert "CUDA " + ", ".join(PUBLISHED_BUILDS[nccl]) + " only" in out


def test_a_cuda_release_outside_the_recorded_builds_is_a_warning(tmp_path: Path) -> None:
    # the default NCCL with Blackwell's CUDA 12.8: no build recorded, but newer than the list
    path = _pins(tmp_path, "12.8", DEFAULT_NCCL)
    code, out, _ = run_cli("validate", str(path))
    assert code == 0 and f"{path}:13:3: warning SFT004" in out, out
    assert f"libnccl2={DEFAULT_NCCL}-1+cuda12.8 may not exist" in out
    _, out, _ = run_cli("validate", str(_pins(tmp_path, "12.4", "2.12.12")))
    assert "warning SFT004" in out and "libnccl2=2.12.12-1+cuda12.4 may not exist" in out


def test_default_pins_are_checked_and_validate_clean() -> None:
    hopper = load_and_resolve(FIX / "SFT002" / "pass.yaml")[1]
    blackwell = load_and_resolve(FIX / "SFT001" / "pass.yaml")[1]
    assert hopper.software.nccl == DEFAULT_NCCL and blackwell.software.nccl == BLACKWELL_DEFAULT_NCCL
    for cluster in (hopper, blackwell):
        builds = {b.nccl: b.cuda for b in cluster.catalog.software.nccl_cuda_builds}
        assert cluster.software.cuda in builds[cluster.software.nccl]  # the rule has a list to check
    for path in (FIX / "SFT002" / "pass.yaml", FIX / "SFT001" / "pass.yaml"):
        code, out, _ = run_cli("validate", str(path))
        assert code == 0 and " SFT004 " not in out, out


def test_catalogue_build_lists_match_their_sources() -> None:
    cluster = load_and_resolve(FIX / "SFT004" / "pass.yaml")[1]
    builds = {b.nccl: b.cuda for b in cluster.catalog.software.nccl_cuda_builds}
    for nccl, cuda in PUBLISHED_BUILDS.items():
        assert builds[nccl] == cuda, nccl


def test_validate_refuses_a_driver_version_outside_its_branch_on_nvswitch(tmp_path: Path) -> None:
    path = FIX / "SFT005" / "fail.yaml"
    code, out, _ = run_cli("validate", str(path))
    assert code == 1
    assert f"{path}:11:3: error SFT005" in out  # the software.driver_version line
    # NVIDIA/yum-packaging-fabric-manager: package nvidia-fabricmanager-<first field of the driver version>
    assert "need nvidia-fabricmanager-570 (software.os ubuntu-22.04) at exactly 550.127.08" in out
    # the same pins on a server without NVSwitch have no Fabric Manager to match
    pcie = tmp_path / "pcie.yaml"
    pcie.write_text(path.read_text().replace("server: dgx-h100", "server: pcie-h100-8"))
    code, out, _ = run_cli("validate", str(pcie))
    assert " SFT005 " not in out, out


@pytest.mark.parametrize(
    ("os", "package", "source"),
    [
        # NVIDIA/gpu-driver-container rhel9/install.sh, below branch 580: nvidia-fabric-manager-<version>-1
        ("rhel-9", "nvidia-fabric-manager", "gpu-driver-container rhel9"),
        # its ubuntu22.04/install.sh, below branch 580: nvidia-fabricmanager-<branch>=<version>-1
        ("ubuntu-24.04", "nvidia-fabricmanager-570", "gpu-driver-container ubuntu22.04"),
    ],
)
def test_sft005_names_the_fabric_manager_package_of_the_blueprints_os(
    tmp_path: Path, os: str, package: str, source: str
) -> None:
    """The package and its source come from the catalogue's entry for software.os (driver_packages), not the
    Debian name for every OS."""
    path = tmp_path / "fm.yaml"
    text = (FIX / "SFT005" / "fail.yaml").read_text()
    path.write_text(text.replace("software:\n", f"software:\n  os: {os}\n", 1))
    code, out, _ = run_cli("validate", str(path))
    assert code == 1
    assert f"need {package} (software.os {os}) at exactly 550.127.08" in out, out
    assert source in out, out


def test_an_nccl_release_without_a_recorded_build_list_is_named_as_unchecked(tmp_path: Path) -> None:
    # 2.27.3 is an NCCL release (oci-hpc recommends "NCCL 2.27.3+") whose CUDA build list no source recorded
    cluster = load_and_resolve(FIX / "SFT004" / "pass.yaml")[1]
    assert "2.27.3" not in {b.nccl for b in cluster.catalog.software.nccl_cuda_builds}
    path = _pins(tmp_path, "12.9", "2.27.3")
    code, out, _ = run_cli("validate", str(path))
    assert code == 0 and f"{path}:13:3: info SFT004" in out, out
    assert "is not checked" in out and "libnccl2=2.27.3-1+cuda12.9" in out
