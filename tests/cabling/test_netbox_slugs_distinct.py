"""NetBox slugs of distinct names are distinct (review h154 f5): slugify() turned every non-ASCII name into
`x`, so the manufacturers `富士通` and `英伟达` became one (the second's device types filed under the first),
and two names that slug alike (`Acme Inc`, `Acme-Inc`) gave two manufacturers of one slug."""

from __future__ import annotations

import re
from pathlib import Path

import netbox_checks
import pytest

from generator.emit.cabling import render_format
from generator.emit.cabling.netbox import slugify
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan

SLUG = re.compile(r"[-a-zA-Z0-9_]+")  # Django's SlugField (validate_slug)

BLUEPRINT = """\
apiVersion: cluster-blueprint/v1
name: slugs
catalog: cat.yaml
site: {name: dc1, rows: 1, racks_per_row: 4, rack: {units: 42, power_kw: 60}}
pools:
  - {name: dgx, role: gpu, count: 4, server: box, placement: {nodes_per_rack: 4}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: fat-tree, tiers: 2, switch: sw, rail_optimized: true, scalable_unit: 4}
    subnet_manager: {kind: opensm, ha: true}
"""
CATALOG = """\
servers:
  box:
    name: Server H100
    manufacturer: {server_maker}
    gpu: h100-sxm
    gpus: 8
    gpu_interconnect: nvlink4
    nvswitches: 4
    nvlink_domain_gpus: 8
    pcie_gen: 5
    power_kw: 10.2
    rack_units: 8
    nics:
      - {{purpose: compute, model: cx7, count: 8, speed_gbps: 400, cage_ports: 2}}
switches:
  sw:
    name: Quantum-2 switch
    manufacturer: {switch_maker}
    technology: infiniband
    speed_gbps: 400
    ports: 64
    cages: 32
    ports_per_cage: 2
    form_factor: osfp-twin
    rack_units: 1
    power_w: 1720
    latency_ns: 130
    managed: true
"""


def _netbox(tmp_path: Path, server_maker: str, switch_maker: str) -> dict[str, list[dict[str, str]]]:
    (tmp_path / "cat.yaml").write_text(
        CATALOG.format(server_maker=server_maker, switch_maker=switch_maker), encoding="utf-8"
    )
    (tmp_path / "bp.yaml").write_text(BLUEPRINT, encoding="utf-8")
    plan = build_plan(load_and_resolve(str(tmp_path / "bp.yaml"))[1])
    files = render_format(plan.cluster, plan, "netbox")
    assert netbox_checks.problems(files) == []
    return netbox_checks.read(files)


@pytest.mark.parametrize(
    ("server_maker", "switch_maker"),
    [("富士通", "英伟达"), ("Acme Inc", "Acme-Inc"), ("Ünited", "Ønited"), ("'!!!'", "'???'")],
)
def test_two_manufacturers_stay_two(tmp_path: Path, server_maker: str, switch_maker: str) -> None:
    t = _netbox(tmp_path, server_maker, switch_maker)
    makers = {r["name"]: r["slug"] for r in t["manufacturers.csv"]}
    wanted = {server_maker.strip("'"), switch_maker.strip("'")}
    assert set(makers) == wanted and len(set(makers.values())) == 2, makers
    assert all(SLUG.fullmatch(s) for s in makers.values()), makers
    types = {r["slug"]: r["manufacturer"] for r in t["device-types.csv"]}
    assert types == {"box": server_maker.strip("'"), "sw": switch_maker.strip("'")}


def test_one_maker_spelt_in_two_cases_is_one_manufacturer(tmp_path: Path) -> None:
    t = _netbox(tmp_path, "NVIDIA", "Nvidia")
    assert t["manufacturers.csv"] == [{"name": "NVIDIA", "slug": "nvidia"}]


@pytest.mark.parametrize("name", ["富士通", "日立", "Ünited", "Ønited", "!!!", "???", "a/b", "a b"])
def test_slugs_are_netbox_slugs_and_names_keep_theirs(name: str) -> None:
    assert SLUG.fullmatch(slugify(name))
    others = {"富士通", "日立", "Ünited", "Ønited", "!!!", "???"} - {name}
    assert slugify(name) not in {slugify(o) for o in others}
    assert slugify("NVIDIA QM9700") == "nvidia-qm9700"  # ASCII names keep the slugs they had
