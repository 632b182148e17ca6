"""What verify-cabling leaves out and how it says so: a switch that was not discovered is one finding with
its cable count (InfiniBand and LLDP alike), and text output says how many lines of a list it cut
(``… and N more``) while ``--format json`` keeps them all."""

from __future__ import annotations

import json
import re
from pathlib import Path

from vfy_plans import HERE, SUPERPOD, TINY, plan_of, run_cli

from generator.emit import lldp as lldp_emitter
from generator.emit.ibnetdiscover import render_netfile
from generator.verify.diff import Verification
from generator.verify.render import MAX_LISTED, MAX_WARNINGS, to_json, to_text

GONE = "c-leaf-su1-r1"


def _without_switch(text: str, node_id: str) -> tuple[str, int]:
    """The net file with one switch's block and every line naming it removed (hosts left without a link
    dropped too: ibnetdiscover cannot reach them), and the number of port lines the switch had."""
    blocks = text.split("\n\n")
    mine = next(b for b in blocks if b.startswith("Switch") and f'"{node_id}"' in b.splitlines()[0])
    cables = sum(1 for line in mine.splitlines() if line.startswith("["))
    kept = []
    for block in blocks:
        if block is mine:
            continue
        lines = [line for line in block.splitlines() if f'"{node_id}"' not in line]
        if lines and lines[0].startswith("Ca") and not any(line.startswith("[") for line in lines):
            continue
        kept.append("\n".join(lines))
    return "\n\n".join(kept), cables


def test_an_undiscovered_ib_switch_is_one_finding_with_its_cable_count(tmp_path: Path) -> None:
    text, cables = _without_switch(render_netfile(plan_of(TINY), "compute"), f"S-{GONE}")
    assert cables == 8  # 4 hosts and 4 uplinks, counted in the net file
    dump = tmp_path / "fabric.topo"
    dump.write_text(text)
    code, out, _ = run_cli("verify-cabling", str(TINY), "--discovered", str(dump))
    assert code == 1
    findings = [line for line in out.splitlines() if re.match(r"^[A-Z]", line) and "  " in line]
    assert len(findings) == 1, out
    assert (
        findings[0].startswith("ABSENT") and f"{GONE} was not discovered: its {cables} planned cable" in out
    )
    assert "MISSING" not in out
    code, js, _ = run_cli("verify-cabling", str(TINY), "--discovered", str(dump), "--format", "json")
    report = json.loads(js)
    (absent,) = report["results"]
    assert absent["status"] == "absent" and absent["a"]["device"] == GONE and len(absent["cables"]) == cables
    assert report["absent_switches"] == 1 and report["summary"]["missing"] == 0


def test_an_undiscovered_ethernet_switch_is_one_finding_too(tmp_path: Path) -> None:
    plan = plan_of(SUPERPOD)
    files = lldp_emitter.render_lldp(plan, "management")
    gone = "m-leaf-su1-01"
    # its own file is not there, and no neighbour's file names it
    cables = sum(1 for text in files.values() if f'"{gone}"' in text)
    for name, text in files.items():
        if name == f"{gone}.json":
            continue
        doc = json.loads(text)
        items = doc["lldp"]["interface"]
        items = items if isinstance(items, list) else [items]
        doc["lldp"]["interface"] = [i for i in items if gone not in json.dumps(i)]
        (tmp_path / name).write_text(json.dumps(doc))
    own = json.loads(files[f"{gone}.json"])["lldp"]["interface"]
    own_cables = len(own) if isinstance(own, list) else 1
    code, js, _ = run_cli(
        "verify-cabling",
        str(SUPERPOD),
        "--fabric",
        "management",
        "--discovered",
        str(tmp_path),
        "--format",
        "json",
    )
    report = json.loads(js)
    assert code == 1
    statuses = [r["status"] for r in report["results"]]
    assert statuses == ["absent"], statuses
    assert len(report["results"][0]["cables"]) == own_cables >= cables


def test_text_says_how_many_lines_it_left_out_and_json_keeps_all() -> None:
    v = Verification("compute", "x.topo", [], planned=0, discovered=0)
    v.unidentified = [f"unidentified CA 0x{i:016x}" for i in range(MAX_LISTED + 7)]
    v.warnings = [f"warning number {i}" for i in range(MAX_WARNINGS + 3)]
    text = to_text(v)
    assert sum(1 for line in text.splitlines() if line.startswith("  unidentified CA")) == MAX_LISTED
    assert "  … and 7 more (all of them with --format json)" in text
    assert sum(1 for line in text.splitlines() if line.startswith("warning: warning number")) == MAX_WARNINGS
    assert "warning: … and 3 more (all of them with --format json)" in text
    payload = json.loads(to_json(v))
    assert len(payload["unidentified"]) == MAX_LISTED + 7 and len(payload["warnings"]) == MAX_WARNINGS + 3


def test_text_cuts_nothing_at_the_limit() -> None:
    v = Verification("compute", "x.topo", [], planned=0, discovered=0)
    v.unidentified = [f"u{i}" for i in range(MAX_LISTED)]
    v.warnings = [f"w{i}" for i in range(MAX_WARNINGS)]
    assert "more (all of them" not in to_text(v)


def test_switches_not_discovered_are_counted_at_both_ends_of_their_cables(tmp_path: Path) -> None:
    """One leaf's file with no neighbours: all 20 switches are undiscovered, the spines too, though every
    spine cable also ends at an undiscovered leaf."""
    roce = HERE.parents[1] / "examples" / "roce-rail-2tier.yaml"
    (tmp_path / "c-leaf-su1-r0.json").write_text('{"lldp": {}}')
    code, js, _ = run_cli("verify-cabling", str(roce), "--discovered", str(tmp_path), "--format", "json")
    report = json.loads(js)
    assert code == 1 and report["absent_switches"] == 20
    spine = next(r for r in report["results"] if r["a"]["device"] == "c-spine-001")
    assert len(spine["cables"]) == 128 and "its 128 planned cable(s) are missing" in spine["message"]
    _, out, _ = run_cli("verify-cabling", str(roce), "--discovered", str(tmp_path))
    assert out.rstrip().endswith("20 switch(es) not discovered — DOES NOT MATCH THE PLAN")


def test_a_dump_of_stray_lines_keeps_a_bounded_number_of_warnings() -> None:
    """Every port line outside a node record was one kept warning: 16 MB of them made 4 million (1.3 GB,
    a 275 MB report). The first thousand are kept and the rest counted in one line."""
    from generator.verify import ibnetdiscover

    record = (
        'vendid=0x2c9\ndevid=0xd2f0\nsysimgguid=0x1\nswitchguid=0x1(1)\nSwitch\t2 "S-0000000000000001"\t\t# "leaf1" '
        'base port 0 lid 1 lmc 0\n[1]\t"S-0000000000000002"[1]\t\t# "leaf2" lid 2 4xHDR\n\n'
    )
    found = ibnetdiscover.parse_ibnetdiscover(record + "vendid=0x0\n" + "[1]\n" * 200_000, "dump")
    assert len(found.warnings) == ibnetdiscover.MAX_KEPT_WARNINGS + 1
    assert found.warnings[0] == "dump:9: port line outside a node record ignored"
    assert (
        found.warnings[-1]
        == f"dump: {200_000 - ibnetdiscover.MAX_KEPT_WARNINGS:,} more warnings like these left out"
    )
    assert len(found.links) == 1
