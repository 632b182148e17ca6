"""Declared site labels (``pools[].ports[].label``) wherever a host end is printed: verify-cabling's text and
JSON, its position-only warnings, and the NetBox interface label (read back the way ``blueprint sot`` reads
it). The oracle is the fixture's own YAML, read here with PyYAML, not the tool's label tables."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml
from test_site_port_labels import BLUEPRINT, _site_dump
from vfy_plans import run_cli

from generator.sot.build import read_build


def _declared() -> dict[str, str]:
    """RDMA device → site label, as the fixture blueprint writes them."""
    pool = yaml.safe_load(BLUEPRINT.read_text())["pools"][0]
    return {p["rdma"]: p["label"] for p in pool["ports"]}


def _text(blueprint: Path, dump: Path) -> str:
    code, out, err = run_cli("verify-cabling", str(blueprint), "--discovered", str(dump))
    assert code in (0, 1), err
    return out


def test_text_report_names_host_ends_by_site_label_and_rdma_port(tmp_path: Path) -> None:
    labels = _declared()
    out = _text(BLUEPRINT, _site_dump(tmp_path, {"gpu003"}))
    miswired = [line for line in out.splitlines() if line.startswith("MISWIRED")]
    assert len(miswired) == 2, out
    for dev in ("mlx5_4", "mlx5_5"):
        assert any(f"gpu003 {labels[dev]} ({dev}/1) goes to " in line for line in miswired), out
    # the planned peer of each crossed cable is a leaf port; no host end is printed by its RDMA name alone
    assert not re.search(r"gpu\d{3} mlx5_\d+/\d", out), out


def test_json_report_carries_the_site_label(tmp_path: Path) -> None:
    labels = _declared()
    code, out, _ = run_cli(
        "verify-cabling",
        str(BLUEPRINT),
        "--discovered",
        str(_site_dump(tmp_path, {"gpu003"})),
        "--format",
        "json",
    )
    assert code == 1
    report = json.loads(out)
    hosts = [r["a"] for r in report["results"]] + [
        c for r in report["results"] for c in (r["b_connected_to"],) if c
    ]
    host_ends = [e for e in hosts if e["device"].startswith("gpu")]
    assert host_ends and all(e["site_label"] == labels[e["port"].split("/")[0]] for e in host_ends), host_ends


def test_without_declared_labels_host_ends_keep_the_rdma_name(tmp_path: Path) -> None:
    undeclared = tmp_path / "undeclared.yaml"
    undeclared.write_text(re.sub(r", label: HCA-\d", "", BLUEPRINT.read_text()))
    out = _text(undeclared, _site_dump(tmp_path, {"gpu003"}))
    assert "HCA-5 (" not in out and "HCA-6 (" not in out, out


def test_position_only_warning_names_the_site_label(tmp_path: Path) -> None:
    """An HCA whose description is the firmware default is placed by position; its warning shows the port as
    the site labels it."""
    labels = _declared()
    dump = _site_dump(tmp_path, set())
    text = dump.read_text()
    text, n = re.subn(r'"gpu002 HCA-2"', '"MT4129 ConnectX7   Mellanox Technologies"', text)
    assert n >= 1
    dump.write_text(text)
    out = _text(BLUEPRINT, dump)
    warnings = [line for line in out.splitlines() if "identified by position only" in line]
    assert len(warnings) == 1, out
    assert warnings[0].startswith(f"warning: gpu002 ({labels['mlx5_1']} = mlx5_1/1): HCA "), warnings


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for name, text in (
        ("declared", BLUEPRINT.read_text()),
        ("undeclared", re.sub(r", label: HCA-\d", "", BLUEPRINT.read_text())),
    ):
        root = tmp_path_factory.mktemp(name)
        (root / "bp.yaml").write_text(text)
        code, _, err = run_cli(
            "generate", str(root / "bp.yaml"), "-o", str(root / "out"), "--only", "cabling"
        )
        assert code == 0, err
        out[name] = root / "out"
    return out


def _host_interfaces(build: Path) -> list[dict[str, str]]:
    with (build / "cabling" / "netbox" / "interfaces.csv").open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["device"].startswith("gpu") and r["label"]]


def test_netbox_interface_label_is_the_site_label_when_declared(built: dict[str, Path]) -> None:
    labels = _declared()
    rows = _host_interfaces(built["declared"])
    assert len(rows) == 16, rows  # 4 hosts x 4 compute ports
    for r in rows:
        rdma = r["description"].split(";", 1)[0]
        assert r["label"] == labels[rdma.split("/")[0]], r
    # blueprint sot pushes what the CSVs say
    pushed = {rec.key: rec.fields.get("label") for rec in read_build(built["declared"]).records["interface"]}
    assert all(pushed[(r["device"], r["name"])] == r["label"] for r in rows)


def test_netbox_interface_label_is_the_rdma_port_otherwise(built: dict[str, Path]) -> None:
    rows = _host_interfaces(built["undeclared"])
    assert len(rows) == 16
    assert all(re.fullmatch(r"mlx5_[0145]/1", r["label"]) for r in rows), rows
