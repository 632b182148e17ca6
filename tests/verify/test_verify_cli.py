"""`blueprint verify-cabling`: exit codes, text and JSON reports."""

from __future__ import annotations

import json

from vfy_plans import FIXTURES, HERE, TINY, plan_of, run_cli

SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"  # real ibnetdiscover output (ibsim, HDR)


def test_clean_simulated_dump_exits_0() -> None:
    code, out, err = run_cli("verify-cabling", str(TINY), "--discovered", str(SIM), "--sim-speed", "HDR")
    assert code == 0, err
    assert out.splitlines()[-1] == (
        "64 cables planned, 64 ok, 0 miswired, 0 missing, 0 wrong speed/width, "
        "0 unexpected — MATCHES THE PLAN"
    )
    code, out, _ = run_cli(
        "verify-cabling",
        str(TINY),
        "--discovered",
        str(FIXTURES / "tiny-ndr-compute-sim-hdr.ports"),
        "--sim-speed",
        "hdr",
        "--all",
    )
    assert code == 0 and out.count("\nok ") == 64
    storage = FIXTURES / "tiny-ndr-storage-sim-hdr.ibnetdiscover"
    code, out, _ = run_cli(
        "verify-cabling", str(TINY), "--discovered", str(storage), "--fabric", "storage", "--sim-speed", "HDR"
    )
    assert code == 0, out


def test_speed_check_is_exact_without_sim_speed() -> None:
    code, out, _ = run_cli("verify-cabling", str(TINY), "--discovered", str(SIM), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert report["matches"] is False and report["summary"]["rate"] == 64
    assert {(r["expected_rate"], r["found_rate"]) for r in report["results"]} == {("4xNDR", "4xHDR")}


def test_quirky_real_dump_reports_each_cable(tmp_path) -> None:
    code, out, err = run_cli("verify-cabling", str(TINY), "--discovered", str(FIXTURES / "quirks.topo"))
    assert code == 1, err
    lines = out.splitlines()
    # the HCA with ConnectX-7's firmware-default description sits on dgx002's planned port: identified by
    # position, its cable is ok, and a warning says its description is not set (never MISWIRED)
    assert not any("C-NL-000009" in ln for ln in lines)
    assert (
        "warning: dgx002 (mlx5_0/1): HCA 0x0946dae0300b1c3e identified by position only: its node description "
        "is not set (it reads 'MT4129 ConnectX7   Mellanox Technologies'); set it (rdma-ndd on hosts, hostname "
        "on managed switches)"
    ) in lines
    # a foreign switch on a planned spine port is a miswiring of that cable, not an extra link
    assert (
        "MISWIRED    C-LS-000009  c-leaf-su1-r2 port 5 [P03/1] is not connected, plan says c-spine-001 port 9 "
        '[P05/1]; c-spine-001 port 9 [P05/1] goes to unidentified switch 0xfc6a1c0300e7c3d0 "Quantum Mellanox '
        'Technologies" port 1, plan says c-leaf-su1-r2 port 5 [P03/1]'
    ) in lines
    assert (
        "WRONG RATE  C-NL-000017  dgx003 mlx5_0/1 — c-leaf-su1-r0 port 3 [P02/1] came up 4xHDR, plan says 4xNDR"
    ) in lines
    assert (
        "WRONG RATE  C-NL-000025  dgx004 mlx5_0/1 — c-leaf-su1-r0 port 4 [P02/2] came up 2xNDR, plan says 4xNDR"
    ) in lines
    assert (
        "MISWIRED    C-LS-000003  c-leaf-su1-r0 port 7 [P04/1] goes to c-spine-001 port 4 [P02/2], plan says "
        "c-spine-001 port 3 [P02/1]; c-spine-001 port 3 [P02/1] goes to c-leaf-su1-r0 port 8 [P04/2], plan says "
        "c-leaf-su1-r0 port 7 [P04/1]"
    ) in lines
    assert "left out: 1 SHARP aggregation node(s) (not cables)" in lines
    assert any(ln.startswith("UNEXPECTED  -            unidentified CA 0x946dae0300b1c511") for ln in lines)
    # the dump covers one leaf and one spine: each leaf not discovered is one finding with its cable count
    assert (
        "ABSENT      -            c-leaf-su1-r1 was not discovered: its 8 planned cable(s) are missing"
        in lines
    )
    assert lines[-1] == (
        "64 cables planned, 4 ok, 3 miswired, 0 missing, 2 wrong speed/width, 1 unexpected, "
        "7 switch(es) not discovered — DOES NOT MATCH THE PLAN"
    )
    assert not any("C-NL-000001 " in ln for ln in lines)  # ok cables are not listed by default

    out_file = tmp_path / "report.json"
    code, _, err = run_cli(
        "verify-cabling",
        str(TINY),
        "--discovered",
        str(FIXTURES / "quirks.topo"),
        "--format",
        "json",
        "-o",
        str(out_file),
    )
    assert code == 1 and "report written" in err
    report = json.loads(out_file.read_text())
    assert report["summary"] == {
        "planned": 64,
        "discovered_links": 10,
        "miswired": 3,
        "missing": 0,
        "rate": 2,
        "unexpected": 1,
        "ok": 4,
        "rate_unchecked": 0,
    }
    assert (report["absent_switches"], report["acknowledged"]) == (7, 0)
    absent = [r for r in report["results"] if r["status"] == "absent"]
    assert sum(len(r["cables"]) for r in absent) == 55  # the missing cables, grouped by the leaf not found
    assert len(report["unidentified"]) == 3
    first = report["results"][0]
    assert set(first) == {
        "status",
        "cable",
        "a",
        "b",
        "a_connected_to",
        "b_connected_to",
        "expected_rate",
        "found_rate",
        "message",
        "source",
        "accepted",
    }


def test_node_name_map_names_unset_descriptions(tmp_path) -> None:
    names = tmp_path / "names"
    names.write_text('# guid "name"\n0x0946dae0300b1c3e "dgx002 mlx5_0"\n')
    code, out, _ = run_cli(
        "verify-cabling",
        str(TINY),
        "--discovered",
        str(FIXTURES / "quirks.topo"),
        "--node-name-map",
        str(names),
        "--format",
        "json",
    )
    report = json.loads(out)
    assert code == 1 and report["summary"]["miswired"] == 3 and report["summary"]["ok"] == 4


def test_unusable_input_exits_2(tmp_path) -> None:
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("this is not a fabric\n")
    cases = [
        ([str(TINY), "--discovered", str(tmp_path / "absent")], "no such file"),
        ([str(TINY), "--discovered", str(garbage)], "no ibnetdiscover records"),
        ([str(TINY), "--discovered", str(tmp_path)], "is a directory"),
        ([str(TINY), "--discovered", str(garbage), "--fabric", "management"], "not JSON"),
        (
            [str(TINY), "--discovered", str(SIM), "--fabric", "management", "--sim-speed", "HDR"],
            "--sim-speed applies",
        ),
        (
            [
                str(HERE.parent / "realtools" / "fixtures" / "ft2-hdr-rail.yaml"),
                "--discovered",
                str(SIM),
                "--fabric",
                "storage",
            ],
            "has no storage fabric",
        ),
        ([str(tmp_path / "nope.yaml"), "--discovered", str(SIM)], "no such file"),
        ([str(TINY), "--discovered", str(SIM), "--sim-speed", "fast"], "not an InfiniBand speed"),
    ]
    for args, message in cases:
        code, out, err = run_cli("verify-cabling", *args)
        assert code == 2, (args, out, err)
        assert message in err, (args, err)
        assert "Traceback" not in err


def test_plan_used_is_the_blueprints() -> None:
    assert len(plan_of(TINY).links_of("compute")) == 64


def test_a_dump_that_contradicts_itself_does_not_match_the_plan(tmp_path) -> None:
    """The simulated fabric's dump with a record joined from another sweep: an HCA that reports leaf r7 port 4
    as its peer, where dgx004's planned cable is. The cable counted as ok (and the extra link as unexpected):
    an InfiniBand port has one peer, so the cable is not verified."""
    ghost = (
        '\nCa\t1 "H-00000000001fff00"\t\t# "dgx099 mlx5_0"\n'
        '[1](1fff01) \t"S-0000000000200007"[4]\t\t# lid 90 lmc 0 "c-leaf-su1-r7" lid 12 4xHDR\n'
    )
    dump = tmp_path / "joined.ibnetdiscover"
    dump.write_text(SIM.read_text() + ghost)
    code, out, err = run_cli(
        "verify-cabling", str(TINY), "--discovered", str(dump), "--sim-speed", "HDR", "--format", "json"
    )
    assert code == 1, err
    report = json.loads(out)
    assert report["matches"] is False
    assert report["summary"]["ok"] == 63 and report["summary"]["miswired"] == 1
    assert report["summary"]["unexpected"] == 0
    bad = next(r for r in report["results"] if r["status"] == "miswired")
    assert "contradicts itself" in bad["message"] and "dgx004" in bad["message"], bad
    assert any("port 4 of" in w and "elsewhere" in w for w in report["warnings"]), report["warnings"]
