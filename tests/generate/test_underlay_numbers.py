"""One loopback and ASN plan for every routed fabric of a site: unique across fabrics, and a pool too small is
refused by ``validate`` (rule NET017) at the line of the setting, exactly as ``generate`` would refuse it."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml
from conftest import EXAMPLES, run_cli

REPO = Path(__file__).resolve().parents[2]
ROCE_FT = REPO / "tests" / "realtools" / "fixtures" / "roce-ft2-rail.yaml"


def _two_fabrics(tmp_path: Path, storage_underlay: dict[str, object] | None = None) -> Path:
    """The rail fat-tree plus an Ethernet leaf-spine storage fabric, both routed, both on the default pools."""
    doc = yaml.safe_load(ROCE_FT.read_text())
    doc["pools"][0]["spec"]["nics"].insert(
        1, {"purpose": "storage", "model": "cx6-dx", "count": 1, "speed_gbps": 100}
    )
    doc["fabrics"]["storage"] = {
        "technology": "ethernet-100",
        "topology": {"kind": "leaf-spine", "switch": "sn4600c"},
    }
    if storage_underlay is not None:
        doc["fabrics"]["storage"]["underlay"] = storage_underlay
    bp = tmp_path / "two-fabrics.yaml"
    bp.write_text(yaml.safe_dump(doc, sort_keys=False))
    return bp


def _asn_plan(bp: Path, out: Path) -> list[dict[str, str]]:
    code, _, err = run_cli("generate", str(bp), "-o", str(out), "--quiet", "--only", "switches")
    assert code == 0, err
    with (out / "switches" / "asn-plan.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_loopbacks_and_asns_are_unique_across_fabrics(tmp_path: Path) -> None:
    rows = _asn_plan(_two_fabrics(tmp_path), tmp_path / "out")
    fabrics = {r["fabric"] for r in rows}
    assert fabrics == {"compute", "storage"}
    assert len({r["loopback"] for r in rows}) == len(rows)  # one router id per switch of the site
    asn_owner: dict[str, set[str]] = {}
    for r in rows:
        asn_owner.setdefault(r["asn"], set()).add(r["fabric"])
    assert all(len(owners) == 1 for owners in asn_owner.values())  # no ASN in two fabrics
    # what the files say is what the plan says
    for r in rows:
        doc = yaml.safe_load(
            (tmp_path / "out" / "switches" / r["fabric"] / r["switch"] / "startup.yaml").read_text()
        )
        bgp = doc[0]["set"]["router"]["bgp"]
        assert (str(bgp["autonomous-system"]), bgp["router-id"]) == (r["asn"], r["loopback"])


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_too_small_loopback_block_is_refused_by_validate_at_its_line(tmp_path: Path) -> None:
    """examples/roce-rail-2tier.yaml (20 switches) on a /30 (2 loopbacks): validate used to pass it."""
    text = (EXAMPLES / "roce-rail-2tier.yaml").read_text()
    marker = "    technology: roce-v2-400\n"
    assert text.count(marker) == 1
    bp = tmp_path / "rail-30.yaml"
    bp.write_text(text.replace(marker, marker + "    underlay: {loopback_cidr: 10.255.255.0/30}\n"))
    line = _line_of(bp.read_text(), "loopback_cidr")
    code, out, err = run_cli("validate", str(bp))
    assert code == 1, out + err
    assert f"{bp}:{line}:" in out and "error NET017 10.255.255.0/30 holds 2 loopbacks" in out
    assert "this fabric needs 20 (one per switch)" in out and "Traceback" not in out + err
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "--quiet", "--only", "switches")
    assert code == 1 and "NET017" in err and not (tmp_path / "out").exists()


def test_a_block_the_other_fabric_already_filled_is_refused_at_its_line(tmp_path: Path) -> None:
    """compute (8 switches) numbers 10.254.0.1-8 from the default /16; storage (4 switches) declares
    10.254.0.0/29, whose 6 addresses compute already holds: refused at storage's line, never repeated."""
    bp = _two_fabrics(tmp_path, {"loopback_cidr": "10.254.0.0/29"})
    line = _line_of(bp.read_text(), "10.254.0.0/29")
    code, out, _ = run_cli("validate", str(bp))
    assert code == 1, out
    assert (
        f"{bp}:{line}:" in out
        and "error NET017 10.254.0.0/29 holds 6 loopbacks, 6 of them taken by other routed fabrics; "
        "this fabric needs 4 (one per switch)"
        in out
    )


def test_asn_pool_past_the_private_range_is_refused_at_asn_base(tmp_path: Path) -> None:
    bp = _two_fabrics(tmp_path, {"asn_base": 4_294_967_294})
    line = _line_of(bp.read_text(), "asn_base")
    code, out, _ = run_cli("validate", str(bp))
    assert code == 1
    assert f"{bp}:{line}:" in out and "error NET017 asn_base 4294967294" in out
