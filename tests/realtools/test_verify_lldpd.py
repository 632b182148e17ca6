"""verify-cabling reads what real lldpd discovers (Debian's lldpd 1.0.16, one netns per device).

The generated cabling plan (``cabling/cables.csv``) is wired as veth pairs carrying the plan's interface
names; every switch and host runs lldpd with its plan name as system name. What ``lldpcli show neighbors
-f json`` prints on every device is saved as ``<device>.json``, as docs/cabling.md tells a site to, and
``blueprint verify-cabling`` judges that directory. Switches run lldpd's own port id (the MAC, with the
interface name as port description); hosts either run the settings the generated Ansible's lldp_agent role
writes (its template: the plan name, the interface name as port id) or lldpd's default. The oracle is the
wiring itself: as planned → every cable ok; two host cables swapped on a leaf and one uplink left out →
exactly those cables reported, miswired with both ends named and missing.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from lldpd_harness import LldpFabric, Wire, missing_tools, plan_wires
from real_tools import needs

from generator.cli import main

pytestmark = [pytest.mark.realtools]

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "roce-ft2-rail.yaml"
# the fixture's hosts declare no netdev: these stand in for the names a site's hosts would report
HOST_NETDEVS = ("ens1np0", "ens2np0")


@pytest.fixture(scope="module")
def lldpd_tools() -> None:
    needs(missing_tools(), "apt-get install lldpd; run as root")


def _blueprint(tmp: Path, declared: bool) -> Path:
    """The fixture, with the hosts' compute netdevs declared (``pools[].ports``) or not."""
    doc = yaml.safe_load(FIXTURE.read_text())
    if declared:
        doc["pools"][0]["ports"] = [
            {"role": "compute", "rdma": f"mlx5_{i}", "netdev": name} for i, name in enumerate(HOST_NETDEVS)
        ]
    path = tmp / f"roce-ft2-rail-{'declared' if declared else 'undeclared'}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _generate(blueprint: Path, out: Path) -> Path:
    assert main(["generate", str(blueprint), "-o", str(out)]) == 0
    return out / "cabling" / "cables.csv"


def _host_names(cables: Path) -> dict[tuple[str, str], str]:
    """Host ports the plan names by RDMA device only (``mlx5_0/1``) → a stand-in netdev per rail."""
    names = {}
    with cables.open(newline="") as f:
        for row in csv.DictReader(f):
            if row["a_netdev"] == "":
                names[(row["a_device"], row["a_port"])] = HOST_NETDEVS[int(row["rail"])]
    return names


def _discover(wires: list[Wire], hosts_ifname: bool, out: Path) -> Path:
    """Wire, run lldpd everywhere, save each device's ``lldpcli -f json show neighbors`` as <device>.json."""
    ends = Counter([w.a for w in wires] + [w.b for w in wires])
    hosts = {w.a for w in wires if not w.a_if.startswith("swp")}
    with LldpFabric() as fab:
        fab.wire(wires)
        fab.start({h: _role_settings(h) for h in hosts} if hosts_ifname else {})
        seen = fab.wait_for(dict(ends))
        assert seen == dict(ends), f"lldpd neighbours per device {seen}, cabled {dict(ends)}"
        out.mkdir()
        for device in ends:
            (out / f"{device}.json").write_text(fab.neighbours(device))
    return out


def _role_settings(host: str) -> list[str]:
    """The lines the generated Ansible's lldp_agent role writes to a host's /etc/lldpd.d (its template)."""
    import jinja2

    template = REPO / "playbooks" / "roles" / "lldp_agent" / "templates" / "cluster-blueprint.conf.j2"
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    text = env.from_string(template.read_text()).render(lldp_agent_system_name=host)
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _verify(
    blueprint: Path, discovered: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["verify-cabling", str(blueprint), "--discovered", str(discovered), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("declared", "hosts_ifname"), [(True, True), (True, False), (False, True)])
def test_cabled_as_planned_matches(
    lldpd_tools: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], declared: bool, hosts_ifname: bool
) -> None:
    blueprint = _blueprint(tmp_path, declared)
    cables = _generate(blueprint, tmp_path / "build")
    wires = plan_wires(cables, "compute", _host_names(cables))
    assert len(wires) == 32  # 8 hosts x 2 rails + 4 leaves x 4 spines
    discovered = _discover(wires, hosts_ifname, tmp_path / "lldp")

    code, report = _verify(blueprint, discovered, capsys)

    assert code == 0, report
    assert report["summary"]["ok"] == report["summary"]["planned"] == 32
    assert (
        report["summary"]["unexpected"] == report["summary"]["miswired"] == report["summary"]["missing"] == 0
    )
    # what real lldpd printed is the shape the parser was written for: one neighbour a cabled interface
    doc = json.loads((discovered / "c-leaf-su1-r0.json").read_text())
    assert {next(iter(i)) for i in doc["lldp"]["interface"]} == {"swp1", "swp2", "swp3", "swp4", *(
        f"swp{p}" for p in _uplink_ports(cables, "c-leaf-su1-r0"))}  # fmt: skip


def _uplink_ports(cables: Path, leaf: str) -> list[str]:
    with cables.open(newline="") as f:
        return [r["a_port"] for r in csv.DictReader(f) if r["a_device"] == leaf]


def test_swapped_and_missing_cables_are_named(
    lldpd_tools: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blueprint = _blueprint(tmp_path, declared=True)
    cables = _generate(blueprint, tmp_path / "build")
    planned = plan_wires(cables, "compute")
    # gpu001 and gpu002 rail 0 land on each other's leaf port; the first leaf-spine cable is not pulled
    first = next(i for i, w in enumerate(planned) if w.a == "gpu001" and w.a_if == HOST_NETDEVS[0])
    second = next(i for i, w in enumerate(planned) if w.a == "gpu002" and w.a_if == HOST_NETDEVS[0])
    uplink = next(w for w in planned if w.a.startswith("c-leaf") and w.b.startswith("c-spine"))
    wires = list(planned)
    wires[first] = Wire("gpu001", HOST_NETDEVS[0], planned[second].b, planned[second].b_if)
    wires[second] = Wire("gpu002", HOST_NETDEVS[0], planned[first].b, planned[first].b_if)
    wires.remove(uplink)
    discovered = _discover(wires, True, tmp_path / "lldp")

    code, report = _verify(blueprint, discovered, capsys)

    assert code == 1
    summary = report["summary"]
    assert (summary["ok"], summary["miswired"], summary["missing"]) == (29, 2, 1), summary
    text = json.dumps(report["results"])
    for host in ("gpu001", "gpu002"):
        assert host in text
    assert uplink.a in text and uplink.b in text
