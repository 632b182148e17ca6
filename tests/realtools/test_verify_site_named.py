"""A fabric named by the site (host, leaf and spine names from templates and lists) with a non-default
leaf port layout (hosts on 11-14, uplinks on 31-34), simulated by ibsim and discovered by the real
``ibnetdiscover`` (default and ``-p``): it verifies clean with no node-name map, and swapped or crossed
cables are reported with the site's names and the cabling sheet's port labels."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import ib_faults
import pytest
from ib_fixtures import plan_of, run_cli, simulators
from ibsim_harness import REQUIRES_TOOLS, Simulator, first_ca

from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Link, Plan

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]

SITE = str(Path(__file__).resolve().parent / "fixtures" / "site-named-hdr.yaml")


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    yield from simulators(tmp_path)


def discover(simulator: Callable[..., Simulator], net: str, tmp_path: Path, name: str, *args: str) -> Path:
    sim = simulator(net, name)
    host = first_ca(net)
    assert "SUBNET UP" in sim.opensm(host, "ftree,minhop").log
    out = tmp_path / f"{name}.ibnetdiscover"
    out.write_text(sim.ibnetdiscover(host, *args))
    return out


def test_the_plan_carries_the_site_names_and_ports() -> None:
    plan = plan_of(SITE)
    names = {d.name for d in plan.devices}
    # independent expectations: 8 hosts, 2 per rack; 2 SU x 8 rails of leaves; the listed spines
    assert {f"a05-r{(i - 1) // 2 + 1:02d}-dgx-{(i - 1) % 2 + 1:02d}" for i in range(1, 9)} <= names
    assert {f"a05-ibleaf-su{s}-r{r}" for s in (1, 2) for r in range(1, 9)} <= names
    assert {"a06-ibspine-01", "a06-ibspine-02"} <= names
    leaf_ports = {
        (ln.layer, ep.port_number)
        for ln in plan.links_of("compute")
        for ep in (ln.a, ln.b)
        if ep.device.startswith("a05-ibleaf")
    }
    assert {p for layer, p in leaf_ports if layer == "node_leaf"} == {11, 12, 13, 14}
    assert {p for layer, p in leaf_ports if layer == "leaf_spine"} == {31, 32, 33, 34}


@pytest.mark.parametrize("fmt", ["default", "ports"])
def test_site_named_fabric_verifies_clean_without_a_name_map(
    fmt: str, simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    plan = plan_of(SITE)
    net = render_netfile(plan, "compute")
    dump = discover(simulator, net, tmp_path, "site", *(["-p"] if fmt == "ports" else []))
    code, out, err = run_cli("verify-cabling", SITE, "--discovered", str(dump))
    planned = len(plan.links_of("compute"))
    assert code == 0, out + err
    assert f"{planned} cables planned, {planned} ok, 0 miswired, 0 missing" in out
    assert "match no plan device" not in out


def _host_cables_of(plan: Plan, leaf: str) -> list[Link]:
    return [ln for ln in plan.links_of("compute") if ln.layer == "node_leaf" and ln.b.device == leaf]


def _uplinks(plan: Plan, leaf: str, spine: str) -> list[Link]:
    return [
        ln
        for ln in plan.links_of("compute")
        if ln.layer == "leaf_spine" and (ln.a.device, ln.b.device) == (leaf, spine)
    ]


def test_swapped_and_crossed_cables_named_as_the_site_and_sheet_name_them(
    simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    plan = plan_of(SITE)
    h1, h2 = _host_cables_of(plan, "a05-ibleaf-su2-r3")[:2]  # two host cables swapped on a leaf
    u1, u2 = _uplinks(plan, "a05-ibleaf-su1-r5", "a06-ibspine-02")  # parallel uplinks crossed
    built = ib_faults.swap_switch_ends(plan, h1.id, h2.id)
    built = ib_faults.swap_switch_ends(built, u1.id, u2.id)
    dump = discover(simulator, render_netfile(built, "compute"), tmp_path, "faulty")

    code, out, _ = run_cli("verify-cabling", SITE, "--discovered", str(dump), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert {(r["status"], r["cable"]) for r in report["results"]} == {
        ("miswired", c.id) for c in (h1, h2, u1, u2)
    }
    by_cable = {r["cable"]: r for r in report["results"]}
    # the host cable of a05-r03-dgx-01 (SU 2, first node) was found on the port planned for the second node
    r1 = by_cable[h1.id]
    assert (h1.a.device, h2.a.device) == ("a05-r03-dgx-01", "a05-r03-dgx-02")
    assert (h1.b.port, h2.b.port) == ("11", "12")  # the layout's first node ports
    hca = h1.a.port
    assert (
        f"a05-ibleaf-su2-r3 port 11 goes to a05-r03-dgx-02 {hca}, plan says a05-r03-dgx-01 {hca}"
        in r1["message"]
    )
    ends = {r1["a"]["device"]: r1["a_connected_to"], r1["b"]["device"]: r1["b_connected_to"]}
    assert ends["a05-r03-dgx-01"] == {
        "device": "a05-ibleaf-su2-r3",
        "port": "12",
        "identified": True,
        "sheet_port": "P12",
    }
    # crossed uplinks between the same leaf and spine: the leaf ports are 31-34, as the sheet says
    r2 = by_cable[u1.id]
    assert {r2["a"]["device"], r2["b"]["device"]} == {"a05-ibleaf-su1-r5", "a06-ibspine-02"}
    leaf_end = r2["a"] if r2["a"]["device"] == "a05-ibleaf-su1-r5" else r2["b"]
    assert leaf_end["sheet_port"] in ("P31", "P32", "P33", "P34")

    code, text, _ = run_cli("verify-cabling", SITE, "--discovered", str(dump))
    assert code == 1 and f"MISWIRED    {h1.id}  " in text and "a05-ibleaf-su2-r3 port 11 goes to" in text
