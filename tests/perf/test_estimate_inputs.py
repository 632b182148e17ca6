"""What `estimate` takes from its inputs. It runs the rules as `validate` does, so it never passes silently over
a blueprint `validate` refuses: an H100 declared with NVLink 5 (rule GPU001) is estimated as written, with the
errors said beside the numbers (text and JSON); it printed 951 GB/s of NVLS with no word. And `--collective all`
named with others is every collective; sizes no GPU of the run can hold (16 TiB on an H100) are said to be no
run. All found by a sweep of `estimate` inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from perf_blueprints import server_nodes
from ruamel.yaml import YAML


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "bp.yaml"
    with path.open("w") as fh:
        YAML().dump(data, fh)
    return path


def _h100_spec(interconnect: str) -> dict:
    bp = server_nodes("dgx-h100", 1)
    bp["pools"][0].pop("server")
    bp["pools"][0]["spec"] = {
        "gpu": "h100-sxm", "gpus": 8, "gpu_interconnect": interconnect, "nvlink_domain_gpus": 8,
        "nvswitches": 4, "pcie_gen": 5, "power_kw": 10.2, "rack_units": 8,
        "nics": [{"purpose": "compute", "model": "cx7", "count": 8, "speed_gbps": 400}],
    }  # fmt: skip
    return bp


def test_an_estimate_of_a_blueprint_validate_refuses_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, _h100_spec("nvlink5"))
    code, _, _ = run_cli("validate", str(path))
    assert code == 1
    code, out, err = run_cli("estimate", str(path), "--sizes", "8G")
    assert code == 0, err
    assert "`blueprint validate` finds 1 error(s)" in out and "GPU001" in out
    code, out, err = run_cli("estimate", str(path), "--sizes", "8G", "--format", "json", "-q")
    (error,) = json.loads(out)["blueprints"][0]["validation_errors"]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "gpu_interconnect" in text)
    assert error["rule"] == "GPU001" and error["at"].startswith(f"{path}:{line}:")  # located at the field


def test_a_valid_blueprint_has_no_validation_errors(tmp_path: Path) -> None:
    path = _write(tmp_path, _h100_spec("nvlink4"))
    code, out, err = run_cli("estimate", str(path), "--sizes", "8G", "--format", "json", "-q")
    assert code == 0, err
    assert json.loads(out)["blueprints"][0]["validation_errors"] == []
    code, out, _ = run_cli("estimate", str(path), "--sizes", "8G")
    assert "blueprint validate" not in out


def test_all_with_other_collectives_is_every_collective(tmp_path: Path) -> None:
    """`--collective all,all_reduce` was refused as "unknown collective `all` (known: ..., all)"."""
    path = _write(tmp_path, _h100_spec("nvlink4"))
    code, out, err = run_cli(
        "estimate", str(path), "--sizes", "1G", "--collective", "all,all_reduce", "--format", "json"
    )
    assert code == 0, err
    collectives = json.loads(out)["blueprints"][0]["collectives"]
    assert list(collectives) == ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"]


def test_an_unknown_collective_beside_all_is_refused(tmp_path: Path) -> None:
    """`--collective all,bogus` ran every collective and said nothing of `bogus`."""
    path = _write(tmp_path, _h100_spec("nvlink4"))
    code, out, err = run_cli("estimate", str(path), "--sizes", "1G", "--collective", "all,al_reduce")
    assert code == 2 and "unknown collective `al_reduce`" in out + err and "all_reduce" in out + err


def test_sizes_beyond_one_gpus_memory_are_said_to_be_no_run(tmp_path: Path) -> None:
    # nccl-tests holds a buffer of the whole size on every rank: 16 TiB is no run on an 80 GB H100
    path = _write(tmp_path, _h100_spec("nvlink4"))
    code, out, err = run_cli("estimate", str(path), "--sizes", "1G,16T", "--format", "json", "-q")
    assert code == 0, err
    notes = json.loads(out)["blueprints"][0]["system"]["notes"]
    (note,) = [n for n in notes if "exceed one" in n]
    assert "1 size(s) from 16T" in note and "80 GB" in note
    code, out, err = run_cli("estimate", str(path), "--sizes", "1G,64G", "--format", "json", "-q")
    assert not any("exceed one" in n for n in json.loads(out)["blueprints"][0]["system"]["notes"])


def test_forced_ll128_without_nvlink_says_nccl_runs_it() -> None:
    """tuning.cc gates LL128 to NVLink only when it is left to NCCL (`pEnable == 2`): NCCL_PROTO=LL128 runs
    it on a PCIe server. The refusal said NCCL never enables it there."""
    code, out, err = run_cli("estimate", str(EXAMPLES / "single-pcie5-h100.yaml"), "--proto", "LL128")
    assert code == 2
    assert "enables LL128 by default only over NVLink" in out + err and "runs it here" in out + err


@pytest.mark.parametrize("algo", ["ring, tree", " ring", "ring;allreduce: tree"])
def test_an_nccl_list_with_spaces_is_refused(algo: str) -> None:
    """NCCL compares NCCL_ALGO tokens whole (tuning.cc parseList): 2.25.1 refuses ` tree`, 2.22.3 skips it
    and runs the ring alone; estimate predicted ring and tree."""
    args = ["estimate", str(EXAMPLES / "superpod-h100-4su.yaml"), "--sizes", "1G", "--algo", algo]
    code, out, err = run_cli(*args, "--nccl-version", "2.25.1")
    assert code == 2 and "without spaces" in out + err


def test_standard_input_given_twice_is_said() -> None:
    """`estimate - --calibration -` read the blueprint and reported "-:1: not a calibration file"."""
    code, _, err = run_cli("estimate", "-", "--calibration", "-")
    assert code == 2 and "standard input is given twice" in err, err
