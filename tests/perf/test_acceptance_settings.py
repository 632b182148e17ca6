"""`acceptance-report` predicts each run with what the run changed, as `blueprint estimate` takes it:
NCCL_MAX_NCHANNELS (--channels), NCCL_P2P_DISABLE=1 (--no-nvlink) and the NCCL release the run loaded
(--nccl-version), read from the text output (NCCL_DEBUG=INFO lines, the nccl-tests header) or the -J file
(`env`, `nccl_version`). The expected figures come from the estimate path (system_for / job_for with those
options), not from the report's own code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from nccl_text import nccl_text
from perf_blueprints import server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.foreign import ForeignInputError
from generator.perf.collectives import algorithm_list, estimate
from generator.perf.nccl_results import RecordedSettings, read_runs, release_from_code
from generator.perf.predict import job_for
from generator.perf.system import system_for
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

NDR = {
    "technology": "infiniband-ndr",
    "topology": {"kind": "fat-tree", "switch": "qm9700", "rail_optimized": True},
    "subnet_manager": {"kind": "opensm"},
}
GIB = 1 << 30
ROWS = [(1 << 28, 300.0), (GIB, 400.0)]
HOSTS = ["dgx01", "dgx02"]


def _with_lines(text: str, *info: str, library: int | None = None) -> str:
    """The output with NCCL INFO lines after its header (as NCCL_DEBUG=INFO prints them, host:pid:tid
    prefixed) and, if given, another library version code in the nccl-tests header."""
    lines = text.split("\n")
    if library is not None:
        lines[0] = f"# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library={library}"
    return "\n".join([lines[0], *(f"dgx01:4242:4242 [0] NCCL INFO {i}" for i in info), *lines[1:]])


def test_version_codes_decode_as_nccl_h_makes_them() -> None:
    assert release_from_code(2804) == "2.8.4"  # X*1000 + Y*100 + Z up to 2.8
    assert release_from_code(20906) == "2.9.6"  # X*10000 + Y*100 + Z from 2.9
    assert release_from_code(22602) == "2.26.2"
    for none in (0, 100, 2950, 9999, 20899, 100000):
        assert release_from_code(none) is None, none


def test_text_output_records_the_runs_settings(tmp_path: Path) -> None:
    text = _with_lines(
        nccl_text(HOSTS, 8, ROWS),
        "NCCL version 2.26.2+cuda12.2",
        "NCCL_MAX_NCHANNELS set by environment to 2.",
        "NCCL_P2P_DISABLE set by environment to 1",
        library=21701,
    )
    (tmp_path / "run.txt").write_text(text)
    (run,) = read_runs(tmp_path / "run.txt")
    # the nccl-tests header comes first in the file and names the library it loaded
    assert run.settings == RecordedSettings(None, None, 2, True, "2.17.1")
    assert run.settings.text() == "NCCL_MAX_NCHANNELS=2 NCCL_P2P_DISABLE=1 NCCL 2.17.1"
    plain = tmp_path / "plain.txt"
    plain.write_text(nccl_text(HOSTS, 8, ROWS).replace("nccl-library=22602", "nccl-library=1"))
    (run,) = read_runs(plain)
    assert run.settings == RecordedSettings()  # no release has code 1, nothing changed


def test_json_output_records_the_runs_settings(tmp_path: Path) -> None:
    doc = {
        "version": 2,
        "args": ["/opt/nccl-tests/build/all_reduce_perf"],
        "env": ["NCCL_MAX_NCHANNELS=4", "NCCL_P2P_DISABLE=0", "NCCL_PROTO=Simple"],
        "nccl_version": 21903,
        "config": {"devices": [{"rank": r, "hostname": HOSTS[r // 8]} for r in range(16)]},
        "results": [{"size": GIB, "out_of_place": {"time": 5000.0, "alg_bw": 200.0, "bus_bw": 400.0}}],
    }
    (tmp_path / "run.json").write_text(json.dumps(doc))
    (run,) = read_runs(tmp_path / "run.json")
    assert run.settings == RecordedSettings(None, "Simple", 4, False, "2.19.3")


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("NCCL_MAX_NCHANNELS set by environment to eight.", "NCCL_MAX_NCHANNELS `eight`"),
        ("NCCL_P2P_DISABLE set by environment to 7", "NCCL_P2P_DISABLE `7`"),
        # values that were skipped before, so the run was predicted with NCCL's defaults
        ("NCCL_MAX_NCHANNELS set by environment to 4x.", "NCCL_MAX_NCHANNELS `4x`"),
        ("NCCL_MAX_NCHANNELS set by environment to 16 .", "NCCL_MAX_NCHANNELS: `16 ` is no setting"),
        ("NCCL_ALGO set by environment to \x1b[2JRing", "NCCL_ALGO: its value is no setting NCCL prints"),
        ("NCCL_PROTO set by environment to " + "Simple," * 40, "NCCL_PROTO: its value"),
    ],
)
def test_a_setting_the_model_cannot_follow_is_refused_where_it_stands(
    tmp_path: Path, line: str, shown: str
) -> None:
    (tmp_path / "run.txt").write_text(_with_lines(nccl_text(HOSTS, 8, ROWS), line))
    with pytest.raises(ForeignInputError) as err:
        read_runs(tmp_path / "run.txt")
    assert f"{tmp_path / 'run.txt'}:2" in str(err.value) and shown in str(err.value)


@pytest.mark.parametrize(
    ("name", "value", "channels"),
    [
        # connect.cc: ncclMaxNchannels limits to MAXCHANNELS and raises a value below 1 to 1;
        # ncclMinNchannels limits to MAXCHANNELS and takes a negative value as 0 (its default: no minimum)
        ("NCCL_MAX_NCHANNELS", "999", 64),
        ("NCCL_MAX_NCHANNELS", "0", 1),
        ("NCCL_MAX_NCHANNELS", "-4", 1),
        ("NCCL_MIN_NCHANNELS", "999", 64),
        ("NCCL_MIN_NCHANNELS", "0", None),
        ("NCCL_MIN_NCHANNELS", "-1", None),
        # param.cc reads the environment with strtoll(str, NULL, 0): octal and hex in a -J file's env
        ("NCCL_MAX_NCHANNELS", "010", 8),
        ("NCCL_MAX_NCHANNELS", "0x8", 8),
        # -2 is the parameter's own "not set" (NCCL_PARAM(MaxNchannels, "MAX_NCHANNELS", -2)): NCCL's default
        ("NCCL_MAX_NCHANNELS", "-2", None),
        ("NCCL_MIN_NCHANNELS", "-2", None),
    ],
)
def test_channel_counts_are_taken_as_nccl_takes_them(
    tmp_path: Path, name: str, value: str, channels: int | None
) -> None:
    """A run's channel setting NCCL accepts and clamps is that clamped count, not a refusal of the folder."""
    doc = {
        "version": 2,
        "args": ["/opt/nccl-tests/build/all_reduce_perf"],
        "env": [f"{name}={value}"],
        "nccl_version": 22602,
        "config": {"devices": [{"rank": r, "hostname": HOSTS[r // 8]} for r in range(16)]},
        "results": [{"size": GIB, "out_of_place": {"time": 5000.0, "alg_bw": 200.0, "bus_bw": 400.0}}],
    }
    (tmp_path / "run.json").write_text(json.dumps(doc))
    (run,) = read_runs(tmp_path / "run.json")
    got = run.settings.channels if name == "NCCL_MAX_NCHANNELS" else run.settings.min_channels
    assert got == channels


def test_ranks_that_printed_different_settings_are_refused_at_the_second(tmp_path: Path) -> None:
    """NCCL_DEBUG=INFO prints a setting once per rank: the same value from every rank is one setting; two
    values mean the ranks ran differently (a launcher that did not pass the environment to every node)."""
    same = "NCCL_MAX_NCHANNELS set by environment to 4."
    (tmp_path / "same.txt").write_text(_with_lines(nccl_text(HOSTS, 8, ROWS), same, same))
    (run,) = read_runs(tmp_path / "same.txt")
    assert run.settings.channels == 4
    other = "NCCL_MAX_NCHANNELS set by environment to 8."
    (tmp_path / "mixed.txt").write_text(_with_lines(nccl_text(HOSTS, 8, ROWS), same, other))
    with pytest.raises(ForeignInputError) as err:
        read_runs(tmp_path / "mixed.txt")
    assert f"{tmp_path / 'mixed.txt'}:3" in str(err.value)
    assert f"`8` here but `4` at {tmp_path / 'mixed.txt'}:2" in str(err.value)


def test_a_bad_json_setting_is_refused_at_its_path(tmp_path: Path) -> None:
    doc = {
        "version": 2,
        "args": ["all_reduce_perf"],
        "env": ["NCCL_P2P_DISABLE=yes"],
        "config": {"devices": [{"rank": 0, "hostname": "dgx01"}]},
        "results": [{"size": GIB, "out_of_place": {"time": 5000.0, "bus_bw": 400.0}}],
    }
    (tmp_path / "run.json").write_text(json.dumps(doc))
    with pytest.raises(ForeignInputError, match=r"\$\.env.*NCCL_P2P_DISABLE"):
        read_runs(tmp_path / "run.json")


def _blueprint(tmp_path: Path) -> Path:
    path = tmp_path / "dgx.yaml"
    with path.open("w") as fh:
        YAML().dump(server_nodes("dgx-h100", 2, NDR), fh)
    return path


def test_each_run_is_predicted_as_estimate_predicts_it_with_the_same_options(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bp = _blueprint(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    base = nccl_text(HOSTS, 8, ROWS)
    (results / "default.txt").write_text(base)
    ring = "NCCL_ALGO set by environment to Ring"
    (results / "ring.txt").write_text(_with_lines(base, ring))
    (results / "channels.txt").write_text(
        _with_lines(base, ring, "NCCL_MAX_NCHANNELS set by environment to 1.")
    )
    (results / "p2p.txt").write_text(_with_lines(base, "NCCL_P2P_DISABLE set by environment to 1"))
    (results / "old.txt").write_text(_with_lines(base, library=21701))
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) in (0, 1)
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    at_gib = {k: next(s for s in r["sizes"] if s["size_bytes"] == GIB) for k, r in runs.items()}

    cluster = load_and_resolve(str(bp))[1]
    plan = build_plan(cluster)

    def expected(
        nvlink: bool = True, version: str | None = None, channels: int | None = None, ring: bool = False
    ) -> tuple:
        system = system_for(cluster, plan, nvlink=nvlink, nccl_version=version or "2.26.2")
        job = job_for(system, 2, ranks_per_node=8, channels=channels)
        est = estimate("all_reduce", GIB, job, algorithms=("ring",) if ring else None)
        return round(est.busbw_gbytes, 3), est.algorithm

    for name, options in {
        "default": {},
        "ring": {"ring": True},
        "channels": {"channels": 1, "ring": True},
        "p2p": {"nvlink": False},
        "old": {"version": "2.17.1"},
    }.items():
        got = at_gib[name]
        assert (got["predicted_busbw_gbytes"], got["algorithm"]) == expected(**options), name
    # each setting changes the prediction the way the run changed the machine
    assert at_gib["default"]["algorithm"] == "nvls_tree" and at_gib["old"]["algorithm"] != "nvls_tree"
    assert at_gib["p2p"]["predicted_busbw_gbytes"] < at_gib["default"]["predicted_busbw_gbytes"]
    assert at_gib["channels"]["predicted_busbw_gbytes"] < at_gib["ring"]["predicted_busbw_gbytes"] / 2
    assert runs["channels"]["nccl_max_nchannels"] == 1 and runs["p2p"]["nccl_p2p_disable"] == 1
    assert runs["old"]["nccl_version"] == "2.17.1" and runs["default"]["nccl_version"] == "2.26.2"


def test_the_text_report_names_the_settings_it_followed(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    results = tmp_path / "results"
    results.mkdir()
    text = _with_lines(nccl_text(HOSTS, 8, ROWS), "NCCL_MAX_NCHANNELS set by environment to 4.")
    (results / "run.txt").write_text(text)
    main(["acceptance-report", str(_blueprint(tmp_path)), "--results", str(results)])
    out = capsys.readouterr().out
    assert "NCCL_MAX_NCHANNELS=4 NCCL 2.26.2" in out


def test_channels_of_a_one_node_run_change_nothing(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Inside one NVLink domain the model counts no channels (`estimate --channels` refuses such a run): the
    run is predicted as NCCL would choose, not turned into an error."""
    results = tmp_path / "results"
    results.mkdir()
    base = nccl_text(HOSTS[:1], 8, ROWS)
    (results / "plain.txt").write_text(base)
    (results / "capped.txt").write_text(_with_lines(base, "NCCL_MAX_NCHANNELS set by environment to 2."))
    main(["acceptance-report", str(_blueprint(tmp_path)), "--results", str(results), "--format", "json"])
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert runs["capped"]["error"] is None
    assert runs["capped"]["sizes"] == runs["plain"]["sizes"]


def test_an_nccl_exclusion_list_is_followed(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """`NCCL_PROTO=^LL128` (the workaround NCCL 2.18.1's release notes give) and `NCCL_ALGO=^NVLS,NVLSTree` are
    predicted as every protocol / algorithm but those, not reported as errors."""
    results = tmp_path / "results"
    results.mkdir()
    text = _with_lines(
        nccl_text(HOSTS, 8, ROWS),
        "NCCL_PROTO set by environment to ^LL128",
        "NCCL_ALGO set by environment to ^NVLS,NVLSTree",
    )
    (results / "run.txt").write_text(text)
    bp = _blueprint(tmp_path)
    main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["error"] is None and (run["nccl_algo"], run["nccl_proto"]) == ("^NVLS,NVLSTree", "^LL128")
    got = next(s for s in run["sizes"] if s["size_bytes"] == GIB)
    cluster = load_and_resolve(str(bp))[1]
    system = system_for(cluster, build_plan(cluster), nccl_version="2.26.2")
    est = estimate(
        "all_reduce",
        GIB,
        job_for(system, 2, ranks_per_node=8),
        algorithms=("ring", "tree", "collnet", "p2p"),
        protocols=("ll", "simple"),
    )
    assert (got["predicted_busbw_gbytes"], got["algorithm"]) == (round(est.busbw_gbytes, 3), est.algorithm)
    assert est.algorithm not in ("nvls", "nvls_tree")


def test_a_per_collective_list_is_read_for_the_runs_collective(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """`NCCL_ALGO=allreduce:tree;broadcast:ring` (NCCL's per-collective syntax, 2.25 on) in the text output or
    the -J environment: the all_reduce run is predicted with the tree its list names for AllReduce, never
    with NCCL's own choices for a run that made others."""
    results = tmp_path / "results"
    results.mkdir()
    per_collective = "allreduce:tree;broadcast:ring"
    text = _with_lines(nccl_text(HOSTS, 8, ROWS), f"NCCL_ALGO set by environment to {per_collective}")
    (results / "text.txt").write_text(text)
    doc = {
        "version": 2,
        "args": ["all_reduce_perf"],
        "env": [f"NCCL_ALGO={per_collective}"],
        "config": {"devices": [{"rank": r, "hostname": HOSTS[r // 8]} for r in range(16)]},
        "results": [{"size": GIB, "out_of_place": {"time": 5000.0, "alg_bw": 200.0, "bus_bw": 400.0}}],
    }
    (results / "json.json").write_text(json.dumps(doc))
    main(["acceptance-report", str(_blueprint(tmp_path)), "--results", str(results), "--format", "json"])
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    for name in ("text", "json"):
        assert runs[name]["nccl_algo"] == per_collective, name
        assert runs[name]["error"] is None, name
        assert {row["algorithm"] for row in runs[name]["sizes"]} == {"tree"}, name


def test_a_per_collective_list_on_a_release_that_reads_none_is_an_error_row(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """NCCL 2.21's parseList matches whole names: `allreduce:tree` is no name it knows, so the run did not
    use the tree the list names. It was predicted against the tree (and its low/suspect verdict taken from
    it); it is an error row, as `estimate --algo allreduce:tree --nccl-version 2.21.5` is refused."""
    results = tmp_path / "results"
    results.mkdir()
    text = _with_lines(
        nccl_text(HOSTS, 8, ROWS), "NCCL_ALGO set by environment to allreduce:tree", library=22105
    )
    (results / "old.txt").write_text(text)
    main(["acceptance-report", str(_blueprint(tmp_path)), "--results", str(results), "--format", "json"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert run["sizes"] == [] and "name collectives, which NCCL reads from 2.25" in run["error"]
    assert "NCCL 2.21.5" in run["error"]


def test_a_run_with_nvls_off_is_predicted_without_nvls(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """NCCL_NVLS_ENABLE=0 (GKE's TCPXO profiles and many GB200 runs set it) turns NVLS and NVLS-tree off: the
    run is predicted as `estimate --algo ^NVLS,NVLSTree` predicts it, not against an NVLS-tree it never ran."""
    bp = _blueprint(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    base = nccl_text(HOSTS, 8, ROWS)
    (results / "default.txt").write_text(base)
    (results / "off.txt").write_text(_with_lines(base, "NCCL_NVLS_ENABLE set by environment to 0."))
    only = _with_lines(
        base, "NCCL_NVLS_ENABLE set by environment to 0.", "NCCL_ALGO set by environment to NVLSTree"
    )
    (results / "only.txt").write_text(only)
    (run,) = read_runs(results / "off.txt")
    assert run.settings.nvls_disabled and run.settings.text() == "NCCL_NVLS_ENABLE=0 NCCL 2.26.2"
    assert main(["acceptance-report", str(bp), "--results", str(results), "--format", "json"]) in (0, 1)
    runs = {Path(r["file"]).stem: r for r in json.loads(capsys.readouterr().out)["runs"]}
    at_gib = {k: next(s for s in r["sizes"] if s["size_bytes"] == GIB) for k, r in runs.items() if r["sizes"]}
    cluster = load_and_resolve(str(bp))[1]
    system = system_for(cluster, build_plan(cluster), nccl_version="2.26.2")
    est = estimate(
        "all_reduce", GIB, job_for(system, 2, ranks_per_node=8), algorithms=algorithm_list("^NVLS,NVLSTree")
    )
    assert (at_gib["off"]["predicted_busbw_gbytes"], at_gib["off"]["algorithm"]) == (
        round(est.busbw_gbytes, 3),
        est.algorithm,
    )
    assert at_gib["default"]["algorithm"] == "nvls_tree" and at_gib["off"]["algorithm"] != "nvls_tree"
    assert runs["off"]["nccl_nvls_enable"] == 0 and "nccl_nvls_enable" not in runs["default"]
    assert "NVLS" in runs["only"]["error"] and "NCCL_NVLS_ENABLE=0" in runs["only"]["error"]
    (tmp_path / "bad.txt").write_text(_with_lines(base, "NCCL_NVLS_ENABLE set by environment to 5."))
    with pytest.raises(ForeignInputError, match="NCCL_NVLS_ENABLE `5`: NCCL takes 0, 1 or 2"):
        read_runs(tmp_path / "bad.txt")
