"""A calibration records the system it was measured on (system_sha256): what of the fabric changes the predicted
algorithm or bandwidth is part of it, so factors measured with IB SHARP are not applied after `sharp: false`
(nor across a changed oversubscription or rail optimisation), and a file an earlier release fingerprinted with
fewer parts gets the same clear refusal, never a crash or a silent factor."""

from __future__ import annotations

import hashlib
from pathlib import Path

from nccl_text import nccl_text
from perf_blueprints import build, server_nodes
from ruamel.yaml import YAML

from generator.cli import main
from generator.perf.calibration import system_fingerprint
from generator.perf.system import system_for

SIZES = [1 << 28, 1 << 30, 2 << 30]
HOSTS = [f"gpu{i:03d}" for i in range(1, 5)]


def _fabric(sharp: bool = True, oversubscription: str = "1:1", rail_optimized: bool = True) -> dict:
    return {
        "technology": "infiniband-ndr",
        "topology": {
            "kind": "fat-tree",
            "switch": "qm9700",
            "rail_optimized": rail_optimized,
            "oversubscription": oversubscription,
        },
        "subnet_manager": {"kind": "ufm", "sharp": sharp},
    }


def _fingerprint(tmp_path: Path, name: str, **fabric: object) -> str:
    cluster, plan, _ = build(server_nodes("dgx-h100", 4, _fabric(**fabric)), tmp_path, name)  # type: ignore[arg-type]
    return system_fingerprint(system_for(cluster, plan))


def test_sharp_oversubscription_and_rails_are_part_of_the_fingerprint(tmp_path: Path) -> None:
    base = _fingerprint(tmp_path, "a.yaml")
    assert _fingerprint(tmp_path, "b.yaml") == base  # the same system, the same fingerprint
    for i, change in enumerate(({"sharp": False}, {"oversubscription": "2:1"}, {"rail_optimized": False})):
        assert _fingerprint(tmp_path, f"c{i}.yaml", **change) != base, change


def _calibrated(tmp_path: Path) -> tuple[Path, Path]:
    _, _, bp = build(server_nodes("dgx-h100", 4, _fabric()), tmp_path, "site.yaml")
    results = tmp_path / "results"
    results.mkdir()
    (results / "all_reduce_perf.txt").write_text(nccl_text(HOSTS, 8, [(s, 150.0) for s in SIZES]))
    cal = tmp_path / "cal.yaml"
    assert main(["acceptance-report", str(bp), "--results", str(results), "--calibrate", str(cal)]) in (0, 1)
    return bp, cal


def test_a_sharp_calibration_is_refused_after_sharp_false(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bp, cal = _calibrated(tmp_path)
    capsys.readouterr()
    off = tmp_path / "site-nosharp.yaml"
    off.write_text(bp.read_text().replace("sharp: true", "sharp: false"))
    assert main(["estimate", str(off), "--sizes", "1G", "--calibration", str(cal)]) == 2
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(cal.read_text().splitlines(), 1) if t.startswith("system_sha256"))
    assert f"{cal}:{line}" in err and "IB SHARP" in err and "calibrate again" in err
    assert main(["estimate", str(bp), "--sizes", "1G", "--calibration", str(cal)]) == 0


def test_a_file_fingerprinted_by_an_earlier_release_gets_the_clear_refusal(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bp, cal = _calibrated(tmp_path)
    capsys.readouterr()
    cluster, plan = build(server_nodes("dgx-h100", 4, _fabric()), tmp_path, "again.yaml")[:2]
    s = system_for(cluster, plan)
    # the parts an earlier release fingerprinted (GPU, ports, line rate, technology, topology)
    old = (s.gpu_id, s.gpus_per_node, s.net_line_gbps, s.net_ports, s.technology, s.topology)
    yaml = YAML()
    doc = yaml.load(cal.read_text())
    doc["system_sha256"] = hashlib.sha256(repr(old).encode("utf-8")).hexdigest()
    with cal.open("w") as fh:
        yaml.dump(doc, fh)
    assert main(["estimate", str(bp), "--sizes", "1G", "--calibration", str(cal)]) == 2
    err = capsys.readouterr().err
    assert "an earlier release wrote the file" in err and "Traceback" not in err
