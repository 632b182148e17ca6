"""A site-named fabric simulated by ibsim with the node descriptions real fabrics print — managed switches
as ``MF0;<NAME>:MQM9701/U1`` (some upper case), a spine with the firmware default, one host whose HCAs
kept the firmware default, one whose rdma-ndd ran as ``localhost``, the rest ``<host> HCA-N`` — with a leaf
never installed and two rails crossed on one host. ``verify-cabling`` reports only those two faults (the
leaf as one finding), ``--accept`` acknowledges them, and ``sm-guids`` output makes OpenSM rank the
planned spines as roots."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import ib_faults
import pytest
from ib_fixtures import plan_of, run_cli, simulators
from ibsim_harness import REQUIRES_TOOLS, Simulator, _tool, first_ca

from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Plan

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]

SITE = str(Path(__file__).resolve().parent / "fixtures" / "site-named-hdr.yaml")
ABSENT_LEAF = "a05-ibleaf-su2-r8"
FIRMWARE_HOST, LOCALHOST_HOST, CROSSED_HOST = "a05-r01-dgx-01", "a05-r01-dgx-02", "a05-r02-dgx-02"


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    yield from simulators(tmp_path)


def _real_descriptions(net: str) -> str:
    """The net file's plan-name descriptions rewritten to the forms real fabrics print."""

    def header(m: re.Match[str]) -> str:
        desc = m.group(2)
        if desc == "a06-ibspine-02":
            new = "Quantum Mellanox Technologies"  # firmware default of a Quantum switch
        elif " " not in desc:
            name = desc.upper() if desc.endswith(("r1", "r2", "01")) else desc
            new = f"MF0;{name}:MQM9701/U1"
        else:
            host, rdma = desc.split()
            n = int(rdma.split("_")[1])
            new = {
                FIRMWARE_HOST: "MT4123 ConnectX6   Mellanox Technologies",
                LOCALHOST_HOST: f"localhost HCA-{n + 1}",
            }.get(host, f"{host} HCA-{n + 1}")
        return f'{m.group(1)}# "{new}"'

    # only the record headers: ibsim takes a node's description from its own header line
    return re.sub(r'^((?:Switch|Ca)\s+\d+\s+"[^"]+"\s+)# "([^"]*)"', header, net, flags=re.M)


def _built(plan: Plan, crossed: bool) -> tuple[Plan, list[str]]:
    """The site as built: the absent leaf's cables gone, and (optionally) rails 1 and 2 of one host crossed."""
    gone = [ln.id for ln in plan.links_of("compute") if ABSENT_LEAF in (ln.a.device, ln.b.device)]
    built = ib_faults.drop(plan, *gone)
    if not crossed:
        return built, []
    mine = sorted(
        (ln for ln in plan.links_of("compute") if ln.layer == "node_leaf" and ln.a.device == CROSSED_HOST),
        key=lambda ln: ln.b.device,
    )
    r1, r2 = mine[0], mine[1]
    return ib_faults.swap_switch_ends(built, r1.id, r2.id), [r1.id, r2.id]


def _discover(
    sim_start: Callable[..., Simulator], plan: Plan, tmp_path: Path, name: str
) -> tuple[Simulator, Path]:
    net = _real_descriptions(render_netfile(plan, "compute"))
    assert "MF0;A05-IBLEAF-SU1-R1:MQM9701/U1" in net and "localhost HCA-1" in net
    sim = sim_start(net, name)
    host = first_ca(net)
    assert "SUBNET UP" in sim.opensm(host, "minhop").log
    out = tmp_path / f"{name}.ibnetdiscover"
    out.write_text(sim.ibnetdiscover(host))
    return sim, out


def test_only_the_real_faults_are_reported_in_site_names(
    simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    plan = plan_of(SITE)
    built, crossed = _built(plan, crossed=True)
    _, dump = _discover(simulator, built, tmp_path, "forms")

    code, out, _ = run_cli("verify-cabling", SITE, "--discovered", str(dump), "--format", "json")
    report = json.loads(out)
    assert code == 1
    got = {(r["status"], r["cable"]) for r in report["results"]}
    assert got == {("miswired", crossed[0]), ("miswired", crossed[1]), ("absent", None)}
    (absent,) = [r for r in report["results"] if r["status"] == "absent"]
    assert absent["a"]["device"] == ABSENT_LEAF and len(absent["cables"]) == 8  # 4 hosts + 4 uplinks
    planned = len(plan.links_of("compute"))
    assert report["summary"]["ok"] == planned - 8 - 2
    assert report["unidentified"] == []
    # identified by position only: 8 + 8 HCAs and the spine, each said once
    notes = [w for w in report["warnings"] if "identified by position only" in w]
    assert len(notes) == 17 and any(w.startswith("a06-ibspine-02: switch ") for w in notes)
    assert sum(w.startswith(f"{FIRMWARE_HOST} (") for w in notes) == 8
    assert any("HCA-1=mlx5_0" in w for w in report["warnings"])  # the site's HCA names, learned once

    accept = tmp_path / "accept.yaml"
    accept.write_text(
        f"absent:\n  - {{device: {ABSENT_LEAF}, reason: never installed}}\n"
        f"cables:\n  - {{cable: {crossed[0]}, reason: ticket 1}}\n  - {{cable: {crossed[1]}, reason: ticket 1}}\n"
    )
    code, text, _ = run_cli("verify-cabling", SITE, "--discovered", str(dump), "--accept", str(accept))
    assert code == 0, text
    assert text.splitlines()[-1].endswith(
        f"MATCHES THE PLAN (but for the differences acknowledged in {accept})"
    )
    assert "… and" not in text  # 17 warnings: all shown

    accept.write_text("absent:\n  - {device: a05-ibleaf-su9-r1}\n")
    code, _, err = run_cli("verify-cabling", SITE, "--discovered", str(dump), "--accept", str(accept))
    assert code == 2 and f"{accept}:2:" in err and "not a device of the compute fabric" in err


def test_sm_guids_files_make_opensm_root_the_planned_spines(
    simulator: Callable[..., Simulator], tmp_path: Path
) -> None:
    plan = plan_of(SITE)
    built, _ = _built(plan, crossed=False)
    sim, dump = _discover(simulator, built, tmp_path, "smg")
    out = tmp_path / "etc"
    code, _, err = run_cli("sm-guids", SITE, "--discovered", str(dump), "-o", str(out))
    assert code == 0, err
    roots = (out / "root_guids.conf").read_text().split()
    cns = (out / "cn_guids.conf").read_text().split()
    assert len(roots) == 2  # both spines, one of them by position (firmware-default description)
    assert len(cns) == 64 - 4  # every HCA whatever its description, but the 4 on the leaf not installed
    host = first_ca(render_netfile(built, "compute"))
    log = tmp_path / "osm.log"
    argv = [_tool("opensm"), "-o", "-R", "ftree", "-a", str(out / "root_guids.conf")]
    proc = sim._run(host, [*argv, "-u", str(out / "cn_guids.conf"), "-f", str(log)], 300)
    text = log.read_text(errors="replace")
    assert proc.returncode == 0 and "ftree tables configured on all switches" in text, text[-2000:]
    assert "FatTree rank (roots to leaf switches): 2" in text
    assert "ERR AB27" not in text  # the CN file matched

    # the same fabric with a spine down at discovery: refused, located, unless accepted
    records = dump.read_text().split("\n\n")  # ibnetdiscover separates node records by a blank line
    cut = "\n\n".join(r for r in records if not re.search(r'^Switch.*# "MF0;A06-IBSPINE-01:', r, re.M))
    assert len(cut) < len(dump.read_text())
    half = tmp_path / "half.ibnetdiscover"
    half.write_text(cut)
    code, _, err = run_cli("sm-guids", SITE, "--discovered", str(half), "-o", str(tmp_path / "o2"))
    assert code == 1 and "top-tier switches of the plan are not in the dump" in err, err
