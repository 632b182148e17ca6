"""GPU-dependent software pins and the compatibility rules, against NVIDIA's published minimums.

Expected values are the vendor's (kept here, independent of data/software.yaml): Blackwell is first
built by CUDA 12.8 (Blackwell Compatibility Guide 1.4.2) and CUDA 12.8 needs driver >= 570.26 (CUDA
Toolkit Release Notes, Table 3); CUDA 12.4 needs >= 550.54.14.
"""

from __future__ import annotations

from pathlib import Path

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
    assert (
        f"nvidia_driver_branch: '{BLACKWELL_MIN_BRANCH}'" in text
        or f'nvidia_driver_branch: "{BLACKWELL_MIN_BRANCH}"' in text
    )
    assert f"nccl_cuda: '{BLACKWELL_MIN_CUDA}'" in text or f'nccl_cuda: "{BLACKWELL_MIN_CUDA}"' in text
