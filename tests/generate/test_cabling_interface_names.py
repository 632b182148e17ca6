"""The switch interface name (``swp17``, ``swp17s0``) in every cabling output: cables.csv (``a_netdev`` /
``b_netdev``), labels.csv (``interface``), the workbook's pull sheets (From / To interface) — the same name
the expected-LLDP file (what ``lldpcli -f json`` on that switch must show) and the NetBox import give that
port, and the switch's startup.yaml configures."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import openpyxl
import yaml
from conftest import EXAMPLES, run_cli

SWP = re.compile(r"^swp[0-9]+(s[0-9]+)?$")


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _generate(tmp_path: Path) -> Path:
    bp = EXAMPLES / "roce-rail-2tier.yaml"  # 800G cages split in two: swp<cage>s<n>
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path), "--quiet", "--only", "cabling,switches")
    assert code == 0, err
    return tmp_path


def _switch_ends(cables: list[dict[str, str]]) -> list[tuple[dict[str, str], str, str]]:
    """(row, end a|b, other end) of every end on a switch of an Ethernet/RoCE fabric."""
    out = []
    for r in cables:
        for end, other in (("a", "b"), ("b", "a")):
            if r[f"{end}_device"].startswith(("c-", "m-", "s-")) and r["fabric"] in ("compute", "management"):
                out.append((r, end, other))
    return out


def test_every_switch_end_carries_its_os_interface_name(tmp_path: Path) -> None:
    out = _generate(tmp_path)
    cabling = out / "cabling"
    cables = _csv(cabling / "cables.csv")
    ends = _switch_ends(cables)
    names = [r[f"{end}_netdev"] for r, end, _ in ends]
    assert len(ends) > 1000 and all(SWP.match(n) for n in names), [n for n in names if not SWP.match(n)][:5]
    assert sum(1 for n in names if "s" in n[3:]) >= 1024  # the split 400G halves: swp<cage>s0 / s1
    # the expected-LLDP file of that switch has that interface, facing the cable's other device
    lldp = json.loads((cabling / "lldp" / "compute.json").read_text())
    seen = {
        (switch, ifname): next(iter(entry["chassis"]))
        for switch, doc in lldp.items()
        for item in doc["lldp"]["interface"]
        for ifname, entry in item.items()
    }
    for r, end, other in ends:
        if r["fabric"] == "compute":
            assert seen[(r[f"{end}_device"], r[f"{end}_netdev"])] == r[f"{other}_device"]
    # NetBox gives the cable's switch side the same name
    netbox = {c["label"]: c for c in _csv(cabling / "netbox" / "cables.csv")}
    for r, end, _ in ends:
        nb = netbox[r["cable_id"]]
        side = "a" if nb["side_a_device"] == r[f"{end}_device"] else "b"
        assert nb[f"side_{side}_name"] == r[f"{end}_netdev"]


def test_labels_and_workbook_carry_the_same_names(tmp_path: Path) -> None:
    cabling = _generate(tmp_path) / "cabling"
    cables = _csv(cabling / "cables.csv")
    by_id = {r["cable_id"]: r for r in cables}
    for label in _csv(cabling / "labels.csv"):
        row = by_id[label["cable_id"]]
        assert label["interface"] == row[f"{label['end'].lower()}_netdev"]
    wb = openpyxl.load_workbook(cabling / "cabling.xlsx", read_only=True)
    checked = 0
    for ws in wb.worksheets[2:]:  # the rack pull sheets (after Summary and BOM)
        rows = ws.iter_rows(min_row=2, values_only=True)
        header = next(rows)
        col = {h: i for i, h in enumerate(header)}
        for cells in rows:
            if cells[col["Cable"]] is None:
                continue
            row = by_id[cells[col["Cable"]]]
            assert (cells[col["From interface"]] or "") == row["a_netdev"]
            assert (cells[col["To interface"]] or "") == row["b_netdev"]
            checked += 1
    assert checked == len(cables)


def test_the_switch_configuration_names_the_same_ports(tmp_path: Path) -> None:
    out = _generate(tmp_path)
    cables = _csv(out / "cabling" / "cables.csv")
    configured: dict[str, set[str]] = {}
    for f in (out / "switches" / "compute").glob("*/startup.yaml"):
        doc = yaml.safe_load(f.read_text())[0]["set"]
        configured[f.parent.name] = {k for k, v in doc["interface"].items() if v.get("type") == "swp"}
    for r, end, _ in _switch_ends(cables):
        if r["fabric"] == "compute":
            assert r[f"{end}_netdev"] in configured[r[f"{end}_device"]]
