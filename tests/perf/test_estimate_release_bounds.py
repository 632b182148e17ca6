"""What `estimate` does with an NCCL release and channel counts the release cannot have, found by a sweep of
`estimate` inputs: NCCL 2.3.7, 1.0 and 0.0.0 were predicted with CollNet, LL128 and NVLS; `2.21.x` was taken as
2.21; `--channels 65` was echoed while the run had NCCL's maximum; JSON printed the bandwidth of 8 bytes as 0.0;
and on RCCL, `--algo` / `--proto` rows that MSCCL still ran said nothing.

The releases below are the first that have each feature, as NVIDIA's release notes and NCCL's headers give
them, written here by hand: trees 2.4.2, LL128 2.5.6 (core.h NCCL_PROTO_LL128), CollNet 2.6.4 ("Added support
for in-network collectives"), NVLS 2.17.1 (devcomm.h NCCL_ALGO_NVLS), MAXCHANNELS 64 from 2.25.1 (32 before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from perf_blueprints import reproduced
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
SHARP_H100 = ROOT / "examples" / "superpod-h100-4su.yaml"  # DGX H100 SuperPOD, NDR with IB SHARP
ONE_H100 = ROOT / "examples" / "single-dgx-h100.yaml"
A100_HDR = ROOT / "examples" / "hdr-fat-tree-a100.yaml"  # pins NCCL 2.21.5


def _rows(*args: str) -> tuple[dict, dict[str, list[dict]]]:
    code, out, err = run_cli("estimate", *args, "--format", "json", "-q")
    assert code == 0, err
    doc = json.loads(out)["blueprints"][0]
    return doc, doc["collectives"]


def _algorithms(path: Path, version: str, *more: str) -> set[tuple[str, str]]:
    _, series = _rows(str(path), "--nccl-version", version, "--sizes", "64K..1G:4", *more)
    return {(r["algorithm"], r["protocol"]) for rows in series.values() for r in rows}


@pytest.mark.parametrize("version", ["2.21.x", "2.021.05", "2.21.5.1", "2.21.5+cuda12.4", "v2.21.5", "2", ""])
def test_a_version_nccl_does_not_number_is_refused(version: str) -> None:
    code, _, err = run_cli("estimate", str(ONE_H100), "--nccl-version", version, "--sizes", "1G")
    assert code == 2 and "is not a release like 2.21.5" in err, err


@pytest.mark.parametrize("version", ["2.21", "2.21.5", "2.21.5-1+cuda12.4"])
def test_nccls_own_numbers_and_the_package_version_are_taken(version: str) -> None:
    doc, _ = _rows(str(ONE_H100), "--nccl-version", version, "--sizes", "1G")
    assert doc["settings"] == f"NCCL {version}"


@pytest.mark.parametrize("version", ["2.3.7", "1.0", "0.0.0"])
def test_a_release_before_trees_is_refused(version: str) -> None:
    code, _, err = run_cli("estimate", str(ONE_H100), "--nccl-version", version, "--sizes", "1G")
    assert code == 2 and f"NCCL {version} (--nccl-version) predates NCCL 2.4" in err, err


def test_a_blueprint_pinning_a_release_before_trees_is_refused_at_its_pin(tmp_path: Path) -> None:
    data = YAML(typ="safe").load(ONE_H100.read_text())
    data.setdefault("software", {})["nccl"] = "2.3.7"
    path = tmp_path / "old.yaml"
    with path.open("w") as fh:
        YAML().dump(data, fh)
    code, _, err = run_cli("estimate", str(path), "--sizes", "1G")
    assert code == 2 and "NCCL 2.3.7 (software.nccl) predates NCCL 2.4" in err, err


def test_each_algorithm_and_protocol_from_its_first_release() -> None:
    def used(version: str) -> set[tuple[str, str]]:
        return _algorithms(SHARP_H100, version, "--nodes", "2", "--collective", "all_reduce,all_gather")

    # LL128 from 2.5.6, CollNet (IB SHARP) from 2.6.4
    assert not {p for _, p in used("2.4.8")} & {"ll128"}
    assert {p for _, p in used("2.5.6")} & {"ll128"}
    assert "collnet" not in {a for a, _ in used("2.5.6")}
    assert "collnet" in {a for a, _ in used("2.6.4")}
    # NVLS on one node from 2.17.1
    assert "nvls" not in {a for a, _ in _algorithms(ONE_H100, "2.16.2", "--collective", "all_reduce")}
    assert "nvls" in {a for a, _ in _algorithms(ONE_H100, "2.17.1", "--collective", "all_reduce")}


def test_the_notes_and_a_forced_algorithm_name_what_the_release_predates() -> None:
    doc, _ = _rows(str(SHARP_H100), "--nodes", "2", "--nccl-version", "2.5.6", "--sizes", "1G")
    notes = "\n".join(doc["system"]["notes"])
    assert "predates collnet" in notes and "predates nvls" in notes and "predates ll128" not in notes
    code, _, err = run_cli(
        "estimate",
        str(SHARP_H100),
        "--nodes",
        "2",
        "--nccl-version",
        "2.5.6",
        "--algo",
        "collnet",
        "--sizes",
        "1G",
    )
    assert code == 2 and "predates collnet" in err and "2.6.4" in err, err


def test_channels_above_the_releases_maximum_are_that_maximum() -> None:
    base = (str(A100_HDR), "--nodes", "3", "--sizes", "1G", "--collective", "all_reduce")
    doc, above = _rows(*base, "--channels", "65")
    _, at_most = _rows(*base, "--channels", "32")
    assert above == at_most
    assert doc["settings"].startswith("32 inter-node channels")
    assert any("runs at most 32 channels" in n and "--channels 65" in n for n in doc["system"]["notes"])
    # from 2.25.1 MAXCHANNELS is 64: 64 is taken as asked
    doc, _ = _rows(*base, "--channels", "64", "--nccl-version", "2.25.1")
    assert doc["settings"].startswith("64 inter-node channels")
    assert not any("runs at most" in n for n in doc["system"]["notes"])


def test_a_minimum_above_the_maximum_copies_the_channels() -> None:
    # NCCL applies NCCL_MAX_NCHANNELS, then copies channels up to NCCL_MIN_NCHANNELS (connect.cc)
    doc, _ = _rows(str(A100_HDR), "--nodes", "3", "--channels", "4", "--min-channels", "16", "--sizes", "1G")
    assert doc["settings"] == "4 inter-node channels; copied to NCCL_MIN_NCHANNELS=16"


def test_json_keeps_the_bandwidth_of_a_few_bytes() -> None:
    _, series = _rows(str(ONE_H100), "--sizes", "8", "--collective", "all_reduce")
    (row,) = series["all_reduce"]
    # 8 bytes in ~29 µs: ~2.8e-4 GB/s, which three decimals printed as 0.0
    assert 1e-4 < row["algbw_gbytes"] < 1e-3 and row["busbw_gbytes"] > row["algbw_gbytes"]


def test_rccl_rows_msccl_runs_under_a_forced_algorithm_say_so(tmp_path: Path) -> None:
    path = reproduced("mi300x-hisohara-aac8-1node-allreduce-16m", tmp_path)
    doc, series = _rows(
        str(path), "--algo", "ring", "--proto", "ll", "--sizes", "4M", "--collective", "all_reduce"
    )
    assert series["all_reduce"][0]["algorithm"] == "msccl_allpairs"
    assert any("ignore --algo / --proto" in n for n in doc["system"]["notes"])
    doc, _ = _rows(str(path), "--sizes", "4M", "--collective", "all_reduce")
    assert not any("ignore --algo" in n for n in doc["system"]["notes"])
