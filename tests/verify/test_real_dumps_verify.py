"""`blueprint verify-cabling` of real ``ibnetdiscover`` dumps (tests/verify/fixtures/real/, origins in its
README) against the blueprint a site engineer writes for each fabric (``<dump>.yaml`` beside it, with the
site's node-name-map and accept file).

The oracle is each dump read by hand and written out here, not derived from the verifier: the cables it
shows and what in it is wrong. A link is taken as degraded when it runs slower than both of its ends run on
other links of the same dump; a cable between two ports of one switch is a loopback."""

from __future__ import annotations

import json

import pytest
from vfy_plans import FIXTURES, run_cli

REAL = FIXTURES / "real"

Finding = tuple[str, str, frozenset[tuple[str, str]], str | None]  # status, cable, the two ends, found rate


def _ends(*ends: tuple[str, str]) -> frozenset[tuple[str, str]]:
    return frozenset(ends)


# ibtopotool-2.topo: switch 0x000b8cffff0053ee (firmware-default description, named by the site record)
# port 1 - compute-00-01 HCA port 1, port 2 - compute-00-00 HCA port 2, both 4xSDR. compute-00-00 is cabled
# on port 2 of its dual-port adapter ("Ca 2"); the plan, one port per host, says port 1.
DUMP2: dict[str, Finding] = {
    "hca-port-2": (
        "miswired",
        "C-NL-000001",
        _ends(("compute-00-00", "mlx4_0/1"), ("sw-mt43132", "2")),
        None,
    ),
}
# ibtopotool-3.topo: SwitchIB 0xe41d2d030003e470 (firmware default) with loopback cables 1-2, 19-21, 29-30;
# r-ufm96 on SX6012 port 8 at 4xSDR while its adapter type (devid 0x1013) runs 4xEDR on r-ufm216 and the
# SX6012 runs 4xFDR elsewhere; and a port the discovery could not get past (stderr line 1: DR path
# 0,1,1,31 from r-ufm101 HCA-1 -> SX6012 port 1 -> SwitchIB port 31, timed out).
DUMP3: dict[str, Finding] = {
    "sdr": ("rate", "C-AS-000005", _ends(("switch-de779e", "8"), ("r-ufm96", "p1")), "4xSDR"),
    "loop-1-2": ("unexpected", "-", _ends(("sw-switchib", "1"), ("sw-switchib", "2")), "4xEDR"),
    "loop-19-21": ("unexpected", "-", _ends(("sw-switchib", "19"), ("sw-switchib", "21")), "4xEDR"),
    "loop-29-30": ("unexpected", "-", _ends(("sw-switchib", "29"), ("sw-switchib", "30")), "4xEDR"),
}
# Planned cables whose difference is the model's (one speed per fabric), acknowledged by the accept file.
DUMP3_MODEL_RATES = {"C-LS-000001": "4xFDR", "C-AS-000001": "4xFDR", "C-AS-000002": "4xQDR"}
DUMP3_MODEL_RATES |= {"C-AS-000003": "4xQDR", "C-AS-000004": "4xFDR"}

SITES = {
    # dump: (planned cables, ok, explained by the accept file, extra options)
    "ibtopotool-2": (2, 1, 1, ("--sim-speed", "SDR")),  # no infiniband-sdr in the model (see blueprint)
    "ibtopotool-3": (7, 1, 5, ()),
}


def _verify(site: str, *extra: str, accept: bool = False) -> tuple[int, dict]:
    args = ["verify-cabling", str(REAL / f"{site}.yaml"), "--discovered", str(REAL / f"{site}.topo")]
    args += ["--node-name-map", str(REAL / f"{site}.node-name-map"), *SITES[site][3]]
    args += ["--accept", str(REAL / f"{site}.accepted.yaml")] if accept else []
    code, out, err = run_cli(*args, *extra, "--format", "json", "-q")
    assert code in (0, 1), err
    return code, json.loads(out)


def _findings(report: dict) -> set[Finding]:
    out = set()
    for r in report["results"]:
        if r["status"] == "ok":
            continue
        ends = {(r["a"]["device"], r["a"]["port"]), (r["b"]["device"], r["b"]["port"])}
        out.add((r["status"], r["cable"] or "-", frozenset(ends), r["found_rate"]))
    return out


def test_dump2_every_anomaly_reported_and_nothing_else() -> None:
    code, report = _verify("ibtopotool-2", "--all")
    assert code == 1
    assert _findings(report) == set(DUMP2.values())
    (miswired,) = [r for r in report["results"] if r["status"] == "miswired"]
    assert miswired["b_connected_to"] == {
        **miswired["b_connected_to"],
        "device": "compute-00-00",
        "port": "mlx4_0/2",
    }
    ok = [
        (r["a"]["device"], r["b"]["port"], r["found_rate"]) for r in report["results"] if r["status"] == "ok"
    ]
    assert ok == [("compute-00-01", "1", "4xSDR")]
    assert report["unidentified"] == []


def test_dump3_every_anomaly_reported_and_nothing_else() -> None:
    code, report = _verify("ibtopotool-3")
    assert code == 1
    model = {("rate", c) for c in DUMP3_MODEL_RATES}
    found = _findings(report)
    assert {f for f in found if (f[0], f[1]) not in model} == set(DUMP3.values())
    assert {f[1]: f[3] for f in found if (f[0], f[1]) in model} == DUMP3_MODEL_RATES
    assert report["summary"]["miswired"] == 0 and report["unidentified"] == []
    unreached = [w for w in report["warnings"] if "no answer" in w]
    assert len(unreached) == 1 and "port 31 of 0xe41d2d030003e470" in unreached[0]
    assert "DR path 0,1,1,31" in unreached[0] and "timed out" in unreached[0]


@pytest.mark.parametrize("site", sorted(SITES))
def test_with_the_sites_accept_file_only_real_anomalies_are_left(site: str) -> None:
    planned, ok, explained, _ = SITES[site]
    code, report = _verify(site, accept=True)
    s = report["summary"]
    assert (s["planned"], s["ok"]) == (planned, ok)
    assert s["miswired"] == 0 and s["unexpected"] == 0 and s["missing"] == 0  # no false alarm left
    acknowledged = {r["cable"] for r in report["results"] if r.get("accepted") and r["cable"]}
    assert len(acknowledged) == explained
    left = _findings({"results": [r for r in report["results"] if not r.get("accepted")]})
    real = set((DUMP2 if site == "ibtopotool-2" else DUMP3).values())
    assert left <= real  # what is left is a real anomaly the site has not acknowledged
    assert (
        ok + explained + len(left)
    ) / planned >= 0.95  # every planned cable ok, explained or a real finding
    assert code == (1 if left else 0)


def test_dump2_rate_is_read_from_the_dump() -> None:
    """Without --sim-speed the blueprint's EDR rate differs from every SDR link of the dump."""
    args = [
        "verify-cabling",
        str(REAL / "ibtopotool-2.yaml"),
        "--discovered",
        str(REAL / "ibtopotool-2.topo"),
    ]
    code, out, _ = run_cli(
        *args, "--node-name-map", str(REAL / "ibtopotool-2.node-name-map"), "--format", "json"
    )
    assert code == 1
    assert {r["found_rate"] for r in json.loads(out)["results"] if r["status"] == "rate"} == {"4xSDR"}


def test_without_the_site_record_a_switch_is_placed_by_the_hosts_named_around_it() -> None:
    """ibtopotool-2's switch has a firmware-default description and only hosts around it. The host named
    `compute-00-01 HCA-1` on its port 1 is where the plan cables sw-mt43132 port 1 (compute-00-00 sits on
    port 2 of its adapter, which the plan does not have): the switch is placed by position, with a warning,
    and the findings are the dump's, as with the site record (it used to be reported not discovered, its
    hosts' cables going to an unidentified switch)."""
    args = [
        "verify-cabling",
        str(REAL / "ibtopotool-2.yaml"),
        "--discovered",
        str(REAL / "ibtopotool-2.topo"),
    ]
    code, out, _ = run_cli(*args, "--sim-speed", "SDR", "--format", "json", "-q")
    report = json.loads(out)
    assert code == 1
    assert report["absent_switches"] == 0 and not report["unidentified"]
    assert _findings(report) == set(DUMP2.values())
    assert [w for w in report["warnings"] if "sw-mt43132" in w and "position only" in w]


def test_without_the_site_record_the_switchib_is_found_by_position() -> None:
    """ibtopotool-3's SwitchIB hangs on a named switch port (SX6012 port 1, the plan's spine-leaf cable): it
    is identified by position, with a warning, and the findings are those of the dump."""
    args = [
        "verify-cabling",
        str(REAL / "ibtopotool-3.yaml"),
        "--discovered",
        str(REAL / "ibtopotool-3.topo"),
    ]
    code, out, _ = run_cli(*args, "--format", "json", "-q")
    report = json.loads(out)
    assert code == 1
    assert [w for w in report["warnings"] if "sw-switchib" in w and "position only" in w]
    found = {f for f in _findings(report) if (f[0], f[1]) not in {("rate", c) for c in DUMP3_MODEL_RATES}}
    assert found == set(DUMP3.values())


def test_a_failed_directed_route_without_a_known_start_is_still_reported() -> None:
    from generator.verify.ibnetdiscover import parse_ibnetdiscover

    text = (REAL / "ibtopotool-3.topo").read_text().replace("# Initiated from node", "# from node")
    (warning,) = [w for w in parse_ibnetdiscover(text, "x.topo").warnings if "no answer" in w]
    assert warning.startswith(
        "x.topo:1: ibnetdiscover got no answer through DR path 0,1,1,31: bad status 110"
    )
