"""PXN (NCCL 2.12+, NCCL_PXN_DISABLE): spread traffic (alltoall) keeps to its rail by relaying over NVLink to
the local GPU on the destination's rail (NVIDIA/nccl src/graph/paths.cc, "PXN = PCI + NVLink"). Without it
(`estimate --no-pxn`, a run with NCCL_PXN_DISABLE=1, or GPUs without NVLink) each GPU sends through its own
NIC, and on a rail-optimised fabric the bytes for a peer on another rail climb the leaf uplinks even inside
the node's own leaf group. The expected bounds below are worked from the plan's shape by hand (64 nodes, two
32-node scalable units, 8 rails), not from the model's code."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from itertools import product
from pathlib import Path

import pytest
from nccl_text import nccl_text
from perf_blueprints import build
from ruamel.yaml import YAML

from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.collectives import estimate
from generator.perf.nccl_results import read_runs
from generator.perf.predict import job_for
from generator.perf.system import System, system_for

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "roce-rail-2tier.yaml"
GIB = 1 << 30


def _example(tmp_path: Path, **changes: object) -> tuple[System, Path]:
    """The rail-optimised RoCE example (64 HGX H200, 2 SUs of 32, 8 rails), with pool/fabric changes."""
    data = YAML(typ="safe").load(EXAMPLE.read_text())
    if "rail_optimized" in changes:
        data["fabrics"]["compute"]["topology"]["rail_optimized"] = changes["rail_optimized"]
    if "server" in changes:
        data["pools"][0]["server"] = changes["server"]
    cluster, plan, path = build(data, tmp_path)
    return system_for(cluster, plan), path


def _alltoall(system: System, pxn: bool, collective: str = "alltoall") -> float:
    return estimate(collective, GIB, job_for(system, pxn=pxn)).busbw_gbytes


def test_without_pxn_cross_rail_bytes_climb_the_leaf_uplinks(tmp_path: Path) -> None:
    system, _ = _example(tmp_path)
    fabric, net = system.fabric, system.net
    assert fabric is not None and net is not None and system.rail_crossing is not None
    assert (fabric.fabric_nodes, fabric.domain_nodes, system.net_ports) == (64, 32, 8)
    # ECMP-hashed uplinks (RoCE, no adaptive routing): a node's bound is net / (c / e + 1 - c) for the share c
    # of its bytes that leaves the leaf, e the share of the uplinks a step gets when its flows are hashed: the
    # example's 4 equal-cost paths, one flow each (one queue pair), e = (f/k) / E[max load], counted here over
    # all 4^4 placements. With PXN, c = peers in the other SU = 32/63
    between = 32 / 63
    assert fabric.limit.name == "ECMP hash collisions"
    paths = flows = 4
    assert f"{paths} equal-cost paths" in fabric.limit.detail  # the plan's leaf uplinks (topology tests)
    loads = [max(Counter(p).values()) for p in product(range(paths), repeat=flows)]
    e = (flows / paths) / (sum(loads) / len(loads))
    assert fabric.limit.gbytes == pytest.approx(net.gbytes / (between / e + 1 - between), rel=1e-9)
    # without PXN the other 7 rails' share of the 31 peers in the same SU leaves the leaf too
    leaving = between + (31 / 63) * (7 / 8)
    assert system.rail_crossing.gbytes == pytest.approx(net.gbytes / (leaving / e + 1 - leaving), rel=1e-9)
    assert "no PXN" in system.rail_crossing.describe()
    with_pxn, without = _alltoall(system, True), _alltoall(system, False)
    assert without < 0.85 * with_pxn
    # a one-rail run (the acceptance role's NCCL_IB_HCA=<one port> runs) stays on that rail's leaves
    one_rail = [
        estimate("alltoall", GIB, job_for(system, net_share=1 / 8, pxn=pxn)).busbw_gbytes
        for pxn in (True, False)
    ]
    assert one_rail[0] == one_rail[1]
    # rings and trees are rail-aligned by NCCL's graph search: all_reduce does not change, even with ranks
    # scattered over the fabric
    assert _alltoall(system, False, "all_reduce") == _alltoall(system, True, "all_reduce")
    scattered = [
        estimate("all_reduce", GIB, job_for(system, placement="scattered", pxn=pxn)).busbw_gbytes
        for pxn in (True, False)
    ]
    assert scattered[0] == scattered[1]


def test_pxn_changes_nothing_where_every_rail_shares_the_leaves(tmp_path: Path) -> None:
    system, _ = _example(tmp_path, rail_optimized=False)
    assert system.rail_crossing is None
    assert _alltoall(system, False) == _alltoall(system, True)


def test_gpus_without_nvlink_have_no_pxn_to_turn_off(tmp_path: Path) -> None:
    """PXN relays over NVLink (paths.cc: the relay GPU 'is connected to us through NVLink'); PCIe H100 nodes
    (4 NICs, 4 rails) send every byte through their own NIC, PXN on or off."""
    system, _ = _example(tmp_path, server="pcie-h100-8")
    assert system.intra_class == "pci" and system.rail_crossing is not None
    assert _alltoall(system, True) == _alltoall(system, False)
    # ... and the rail-crossing bound is what holds them back
    assert system.spread_shape is not None
    one_rail = replace(system, spread_shape=replace(system.spread_shape, rails=1))
    assert one_rail.rail_crossing is None
    assert _alltoall(one_rail, True) > _alltoall(system, True)
    (tmp_path / "nvlink").mkdir()
    nvlink, _ = _example(tmp_path / "nvlink")
    assert nvlink.rail_crossing is not None
    assert _alltoall(nvlink, True) > _alltoall(nvlink, False)


def test_estimate_no_pxn_option(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    system, path = _example(tmp_path)
    out = {}
    for flag in ((), ("--no-pxn",)):
        argv = ["estimate", str(path), "--collective", "alltoall", "--sizes", "1G", "--format", "json"]
        assert main([*argv, *flag]) == 0
        out[flag] = json.loads(capsys.readouterr().out)["blueprints"][0]
    plain, off = out[()], out[("--no-pxn",)]
    assert "settings" not in plain and off["settings"] == "PXN off"
    assert system.rail_crossing is not None
    rail = plain["system"]["spread_traffic_without_pxn_gbytes_per_node"]
    assert rail == pytest.approx(system.rail_crossing.gbytes, abs=1e-3)
    busbw = {k: v["collectives"]["alltoall"][0]["busbw_gbytes"] for k, v in out.items()}
    assert busbw[("--no-pxn",)] == pytest.approx(_alltoall(system, False), abs=1e-3)
    assert busbw[()] == pytest.approx(_alltoall(system, True), abs=1e-3)


def _alltoall_run(hosts: list[str], *info: str) -> str:
    lines = nccl_text(hosts, 8, [(1 << 28, 30.0), (GIB, 30.0)], program="alltoall_perf").split("\n")
    return "\n".join([lines[0], *(f"{hosts[0]}:4242:4242 [0] NCCL INFO {i}" for i in info), *lines[1:]])


def test_acceptance_follows_a_runs_nccl_pxn_disable(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    system, path = _example(tmp_path)
    hosts = ["gpu001", "gpu040"]  # one node in each scalable unit
    results = tmp_path / "results"
    results.mkdir()
    (results / "pxn.txt").write_text(_alltoall_run(hosts))
    (results / "nopxn.txt").write_text(_alltoall_run(hosts, "NCCL_PXN_DISABLE set by environment to 1"))
    main(["acceptance-report", str(path), "--results", str(results), "--format", "json"])
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert runs["nopxn"]["error"] is None and runs["nopxn"]["nccl_pxn_disable"] == 1
    assert "nccl_pxn_disable" not in runs["pxn"]
    at_gib = {k: next(s for s in r["sizes"] if s["size_bytes"] == GIB) for k, r in runs.items()}
    for name, pxn in (("pxn", True), ("nopxn", False)):
        expected = estimate("alltoall", GIB, job_for(system, 2, pxn=pxn)).busbw_gbytes
        assert at_gib[name]["predicted_busbw_gbytes"] == pytest.approx(expected, abs=1e-3), name
    assert at_gib["nopxn"]["predicted_busbw_gbytes"] < at_gib["pxn"]["predicted_busbw_gbytes"]


def test_a_pxn_setting_the_model_cannot_follow_is_refused(tmp_path: Path) -> None:
    run = tmp_path / "alltoall.txt"
    run.write_text(_alltoall_run(["gpu001", "gpu002"], "NCCL_PXN_DISABLE set by environment to 2"))
    with pytest.raises(ForeignInputError, match="NCCL_PXN_DISABLE `2`"):
        read_runs(run)
