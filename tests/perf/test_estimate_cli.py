"""`blueprint estimate` on every example, its agreement with `blueprint plan`, plots and bad input."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, run_cli
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.perf.sizes import SizeError, parse_sizes


def _examples() -> list:
    return sorted(EXAMPLES.glob("*.yaml"))


def test_there_are_examples() -> None:
    assert _examples()


@pytest.mark.parametrize("path", _examples(), ids=lambda p: p.stem)
def test_estimate_prints_for_every_example(path) -> None:
    code, out, err = run_cli("estimate", str(path), "--collective", "all", "--sizes", "1K..8G:32")
    assert code == 0, err
    for coll in ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"):
        assert coll in out
    assert "bottleneck" in out
    code, out, err = run_cli(
        "estimate", str(path), "--collective", "all", "--sizes", "1K..8G:32", "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)["blueprints"][0]
    for rows in doc["collectives"].values():
        assert len(rows) == 5
        assert all(r["bottleneck"] for r in rows)
        assert rows[-1]["busbw_gbytes"] > 0 or doc["ranks"] == 1
        busbw = [r["busbw_gbytes"] for r in rows]
        assert busbw == sorted(busbw)  # more bytes never lower bandwidth in an alpha-beta model


@pytest.mark.parametrize("path", _examples(), ids=lambda p: p.stem)
def test_estimate_and_plan_agree(path) -> None:
    code, out, _ = run_cli("plan", str(path), "--format", "json")
    assert code == 0
    plan = json.loads(out)
    code, out, _ = run_cli("estimate", str(path), "--sizes", "1G", "--format", "json")
    assert code == 0
    system = json.loads(out)["blueprints"][0]["system"]
    if "compute" in plan["fabrics"]:
        assert system["bisection_gbps"] == plan["bisection_gbps"]
        assert system["oversubscription"] == plan["oversubscription"]
        assert system["mean_hops"] == plan["mean_hops"]
    else:
        assert system["bisection_gbps"] is None


def test_plot_svg_is_byte_stable(tmp_path) -> None:
    path = str(EXAMPLES / "superpod-h100-4su.yaml")
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    assert run_cli("estimate", path, "--collective", "all", "--plot", str(a))[0] == 0
    assert run_cli("estimate", path, "--collective", "all", "--plot", str(b))[0] == 0
    assert a.read_bytes() == b.read_bytes()
    assert b"<svg" in a.read_bytes() and b"all_reduce" in a.read_bytes()


def test_comparison_of_several_blueprints(tmp_path) -> None:
    files = [str(p) for p in _examples()[:3]]
    png = tmp_path / "cmp.png"
    code, out, err = run_cli("estimate", *files, "--collective", "all_reduce,alltoall", "--plot", str(png))
    assert code == 0, err
    assert "fabric comparison" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_placement_and_nodes_options(tmp_path) -> None:
    bp = server_nodes(
        "dgx-a100",
        64,
        {
            "technology": "infiniband-hdr",
            "subnet_manager": {"kind": "opensm", "ha": True},
            "topology": {
                "kind": "fat-tree",
                "switch": "qm8700",
                "rail_optimized": True,
                "oversubscription": "2:1",
            },
        },
    )
    path = tmp_path / "over.yaml"
    with path.open("w") as fh:
        YAML().dump(bp, fh)

    def busbw(*extra: str) -> float:
        code, out, err = run_cli("estimate", str(path), "--sizes", "8G", "--format", "json", *extra)
        assert code == 0, err
        return json.loads(out)["blueprints"][0]["collectives"]["all_reduce"][-1]["busbw_gbytes"]

    packed, spread = busbw(), busbw("--placement", "scattered")
    assert spread < 0.8 * packed
    assert busbw("--nodes", "2") > packed * 0.95  # two nodes: one leaf group, nothing spreads


def test_ranks_per_node_reach_the_nics_nearest_them() -> None:
    """--ranks-per-node (mpirun -N): one rank on each of two nodes of eight 400G rails sends through one
    NIC, so the ring is held to one NIC's line rate (400 Gb/s = 50 GB/s; busbw = algbw on two ranks), while
    eight ranks a node fill all eight NICs."""
    path = str(EXAMPLES / "superpod-h100-4su.yaml")

    def run(*extra: str) -> dict:
        code, out, err = run_cli(
            "estimate", path, "--nodes", "2", "--sizes", "8G", "--algo", "ring", "--format", "json", *extra
        )
        assert code == 0, err
        return json.loads(out)["blueprints"][0]

    one = run("--ranks-per-node", "1")
    (row,) = one["collectives"]["all_reduce"]
    assert one["ranks"] == 2 and one["settings"] == "NCCL_ALGO=ring; 1 rank a node"
    assert row["busbw_gbytes"] == pytest.approx(row["algbw_gbytes"], abs=2e-3)
    assert 0.8 * 50 < row["busbw_gbytes"] <= 50
    (full,) = run()["collectives"]["all_reduce"]
    assert full["busbw_gbytes"] > 4 * row["busbw_gbytes"]
    code, out, err = run_cli("estimate", path, "--nodes", "2", "--ranks-per-node", "4", "--sizes", "8G")
    assert code == 0, err
    assert "collectives over 2 nodes = 8 GPUs" in out and "4 ranks a node" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--ranks-per-node", "9"), "9 ranks per node on a 8-GPU node"),
        (("--ranks-per-node", "0"), "give a whole number from 1 to 9,999,999"),
        (("--ranks-per-node", "2", "--gpus-per-process", "4"), "4 GPUs a process, but the run has 2 ranks"),
        (("--collective", "allreduce"), "did you mean `all_reduce`"),
        (("--sizes", "8X"), "is not a size"),
        (("--sizes", "8G..1K"), "smaller size to the larger"),
        (("--plot", "x.pdf"), ".svg or .png"),
        (("--nodes", "100000"), "cannot run on 100000"),
        (("--nodes", "0"), "give a whole number from 1"),  # was taken as "every node"
        (("--algo", "butterfly"), "unknown algorithm"),
        (("--pool", "nope"), "no GPU pool named"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle) -> None:
    code, out, err = run_cli("estimate", str(EXAMPLES / "superpod-h100-4su.yaml"), *args)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err + out


def test_missing_file_exit_2() -> None:
    code, _, err = run_cli("estimate", "/nonexistent/bp.yaml")
    assert code == 2 and "Traceback" not in err


def test_size_parser() -> None:
    assert parse_sizes("1M..8M") == [1 << 20, 2 << 20, 4 << 20, 8 << 20]
    assert parse_sizes("8..8G:8")[-1] == 8 << 30
    assert parse_sizes("1G,64M,1G") == [64 << 20, 1 << 30]
    assert parse_sizes("2KiB") == [2048]
    with pytest.raises(SizeError):
        parse_sizes("1M..8M:1")
    with pytest.raises(SizeError):
        parse_sizes("0.5")
