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
        or f'nvidia_driver_branch: !unsafe "{BLACKWELL_MIN_BRANCH}"' in text
    )
    assert f'nccl_cuda: !unsafe "{BLACKWELL_MIN_CUDA}"' in text


# NVIDIA's NCCL download index, v2.12/: nccl_2.12.12-1+cuda10.2, +cuda11.0 and +cuda11.6 only.
NCCL_2_12_12_CUDA = ("10.2", "11.0", "11.6")


def test_validate_refuses_an_nccl_without_a_build_for_the_cuda_pin() -> None:
    path = FIX / "SFT004" / "fail.yaml"
    code, out, _ = run_cli("validate", str(path))
    assert code == 1
    assert f"{path}:12:3: error SFT004" in out  # the software.nccl line
    assert "libnccl2=2.12.12-1+cuda12.4 does not exist" in out
    assert "CUDA " + ", ".join(NCCL_2_12_12_CUDA) + " only" in out


def test_every_published_build_of_an_nccl_release_validates(tmp_path: Path) -> None:
    text = (FIX / "SFT004" / "fail.yaml").read_text()
    for cuda in NCCL_2_12_12_CUDA:
        path = tmp_path / f"nccl-{cuda}.yaml"
        path.write_text(text.replace('cuda: "12.4"', f'cuda: "{cuda}"'))
        _, out, _ = run_cli("validate", str(path))
        assert " SFT004 " not in out, out


def test_validate_refuses_a_driver_version_outside_its_branch_on_nvswitch(tmp_path: Path) -> None:
    path = FIX / "SFT005" / "fail.yaml"
    code, out, _ = run_cli("validate", str(path))
    assert code == 1
    assert f"{path}:11:3: error SFT005" in out  # the software.driver_version line
    # NVIDIA/yum-packaging-fabric-manager: package nvidia-fabricmanager-<first field of the driver version>
    assert "need nvidia-fabricmanager-570 at exactly 550.127.08" in out
    # the same pins on a server without NVSwitch have no Fabric Manager to match
    pcie = tmp_path / "pcie.yaml"
    pcie.write_text(path.read_text().replace("server: dgx-h100", "server: pcie-h100-8"))
    code, out, _ = run_cli("validate", str(pcie))
    assert " SFT005 " not in out, out
