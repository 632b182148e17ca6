"""A catalogue switch's `port_layout` is checked at load as the blueprint's own is (parse, down/up overlap, ports
the switch has): one located CAT002 in the catalogue file, exit 2, for every command (it used to pass
`validate` and end `generate` in exit 3, or `plan`/`estimate` in exit 3 with a ValueError)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cli

BLUEPRINT = """\
catalog: cat.yaml
apiVersion: cluster-blueprint/v1
name: site-a
site: {name: dc1, rows: 1, racks_per_row: 8, rack: {units: 48, power_kw: 44}}
pools:
  - name: gpu
    role: gpu
    count: 4
    server: hgx-h200
    placement: {nodes_per_rack: 4}
    ports:
      - {role: compute, rdma: mlx5_0, netdev: eth0}
      - {role: compute, rdma: mlx5_1, netdev: eth1}
      - {role: compute, rdma: mlx5_2, netdev: eth2}
      - {role: compute, rdma: mlx5_3, netdev: eth3}
      - {role: compute, rdma: mlx5_4, netdev: eth4}
      - {role: compute, rdma: mlx5_5, netdev: eth5}
      - {role: compute, rdma: mlx5_6, netdev: eth6}
      - {role: compute, rdma: mlx5_7, netdev: eth7}
  - {name: head, role: management, count: 1, server: cpu-1u}
fabrics:
  compute:
    technology: roce-v2-400
    topology: {kind: fat-tree, tiers: 2, switch: site-sn5600, rail_optimized: true, scalable_unit: 2}
    lossless: {pfc: true, pfc_priority: 3, ecn: true, dscp: 26, trust: dscp}
    mtu: 4200
software: {os: ubuntu-24.04, driver_branch: "570", cuda: "12.8", nccl: "2.25.1", ofed: {kind: doca, version: "2.9.1"}}
"""

CATALOG = """\
switches:
  site-sn5600:
    name: Site SN5600 (own layout)
    manufacturer: NVIDIA
    technology: ethernet
    speed_gbps: 800
    ports: 64
    cages: 64
    ports_per_cage: 1
    splits: {{200: 256, 400: 128}}
    form_factor: osfp
    rack_units: 2
    power_w: 2100
    latency_ns: 600
    managed: true
    port_layout:
      down: {down}
      up: {up}
"""
LAYOUT_LINE = 16  # `port_layout:` in CATALOG; `down:` is the next line, `up:` the one after


def _site(tmp_path: Path, down: str, up: str) -> Path:
    (tmp_path / "cat.yaml").write_text(CATALOG.format(down=down, up=up), encoding="utf-8")
    bp = tmp_path / "bp.yaml"
    bp.write_text(BLUEPRINT, encoding="utf-8")
    return bp


def _commands(bp: Path) -> list[list[str]]:
    return [
        ["validate", str(bp)],
        ["plan", str(bp)],
        ["estimate", str(bp)],
        ["generate", str(bp), "-o", str(bp.parent / "out")],
    ]


@pytest.mark.parametrize(
    ("down", "up", "line", "says"),
    [
        ("11-12", "12-15", LAYOUT_LINE, "ports [12] are listed both down and up"),  # generate exited 3
        ("abc", "31-34", LAYOUT_LINE + 1, "`abc` is not a port or a range"),  # plan/estimate exited 3
        (
            "11-12",
            "300-303",
            LAYOUT_LINE,
            "port 300 is beyond the leaf's 256 ports",
        ),  # at the blueprint's line
    ],
    ids=["overlap", "not-a-range", "beyond-the-ports"],
)
def test_bad_catalogue_layout_is_one_error_at_its_line(
    tmp_path: Path, down: str, up: str, line: int, says: str
) -> None:
    bp = _site(tmp_path, down, up)
    for argv in _commands(bp):
        code, out, err = run_cli(*argv)
        text = out + err
        assert "internal error" not in text and "is a bug" not in text, text
        assert code == 2, (argv[0], text)
        errors = re.findall(r"^\S+: error .*$", text, re.M)
        assert len(errors) == 1, (argv[0], text)
        assert re.match(rf"\S*cat\.yaml:{line}:\d+: error CAT002 .*{re.escape(says)}", errors[0]), errors[0]
    assert not (tmp_path / "out").exists()


def test_layout_that_fits_a_split_is_kept(tmp_path: Path) -> None:
    """Port 100 is beyond the 64 native ports but within the 128 at 400G, the fabric's speed: no error."""
    bp = _site(tmp_path, "1-2", "100-103")
    code, out, err = run_cli("validate", str(bp))
    assert code == 0, out + err


def test_layout_the_fabric_cannot_use_names_the_catalogue(tmp_path: Path) -> None:
    """A layout that fits the switch but not this fabric (too few node ports for a leaf) is the plan's error,
    at the blueprint's `switch` (line 24, column 42) and saying the layout is the catalogue's (no `port_layout` in the blueprint)."""
    bp = _site(tmp_path, '"11"', "31-34")
    code, out, err = run_cli("plan", str(bp))
    assert code == 2, out + err
    assert re.search(
        r"bp\.yaml:24:42: error PLN001 .*layout lists 1 \(the port_layout of switch `site-sn5600` in the catalogue\)",
        out + err,
    ), out + err
