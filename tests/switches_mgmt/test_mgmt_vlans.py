"""The management fabric's switch configuration (build/switches/management/) against the plan's cables.

Oracles are computed here from the plan's links and the blueprint, not from generator.deploy.mgmt_vlans: the
access ports of each leaf are the switch ends of its cables to nodes (every host port these blueprints cable
to the management fabric is a BMC port: the DGX's `BMC` faceplate, the CPU servers' management NIC), the
uplinks the ends of its switch-to-switch cables; subnets are checked with ipaddress; the NVUE keys against
NVIDIA's published command syntax (tests/switches_mgmt/data/nvue-management.txt and tests/data/nvue/).
"""

from __future__ import annotations

import csv
import ipaddress
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import run_cli
from switch_os import with_switch_os

from generator.deploy.addresses import onprem_plan
from generator.pipeline import check
from generator.plan.build import build_plan
from generator.plan.model import Plan

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LAB = HERE / "mgmt-lab.yaml"
SUPERPOD = REPO / "examples" / "superpod-h100-4su.yaml"
NVUE = REPO / "tests" / "data" / "nvue"


def _plan(path: Path) -> Plan:
    return build_plan(check(path).cluster)


def _generate(blueprint: Path, out: Path) -> Path:
    code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "--quiet", "--only", "switches")
    assert code == 0, err
    return out / "switches" / "management"


def _startup(folder: Path, switch: str) -> dict[str, Any]:
    doc = yaml.safe_load((folder / switch / "startup.yaml").read_text())
    assert isinstance(doc, list) and len(doc) == 1
    return doc[0]["set"]


def _oracle(plan: Plan) -> tuple[Counter[str], dict[str, set[str]], dict[str, set[str]]]:
    """Per switch: host cables, the interfaces of its host ports and of its switch-to-switch ports."""
    kind = {d.name: d.kind for d in plan.devices}
    hosts: Counter[str] = Counter()
    access: dict[str, set[str]] = {}
    uplinks: dict[str, set[str]] = {}
    for link in plan.links:
        if link.fabric != "management":
            continue
        ends = [(link.a, kind[link.a.device]), (link.b, kind[link.b.device])]
        if all(k == "switch" for _, k in ends):
            for ep, _ in ends:
                uplinks.setdefault(ep.device, set()).add(f"swp{ep.port_number}")
            continue
        (sw, _), (host, _) = sorted(ends, key=lambda e: e[1] != "switch")
        assert host.port in ("BMC", "mgmt0"), host  # the BMC faceplate / the management NIC
        hosts[sw.device] += 1
        access.setdefault(sw.device, set()).add(f"swp{sw.port_number}")
    return hosts, access, uplinks


@pytest.mark.parametrize("blueprint", [LAB, SUPERPOD], ids=["lab", "superpod-4su"])
def test_access_ports_and_uplinks_are_the_plans_cables(blueprint: Path, tmp_path: Path) -> None:
    plan = _plan(blueprint)
    hosts, access, uplinks = _oracle(plan)
    folder = _generate(blueprint, tmp_path / "out")
    switches = sorted(d.name for d in plan.devices if d.kind == "switch" and d.fabric == "management")
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == switches
    for name in switches:
        doc = _startup(folder, name)
        ports = {
            ifname: cfg["bridge"]["domain"]["br_default"]["access"]
            for ifname, cfg in doc["interface"].items()
            if "bridge" in cfg
        }
        assert set(ports) == access.get(name, set()), name
        assert set(ports.values()) <= {20} and len(ports) == hosts[name]  # BMC VLAN, the default id
        neighbours = set(doc["vrf"]["default"]["router"]["bgp"].get("neighbor", {}))
        assert neighbours == uplinks.get(name, set()), name
        assert not neighbours & set(ports)
        if hosts[name]:
            assert doc["bridge"]["domain"]["br_default"]["vlan"] == {20: {}}
            assert doc["interface"]["vlan20"]["type"] == "svi"
        else:  # spines: routing only
            assert "bridge" not in doc and "service" not in doc


def test_leaf_subnets_hold_their_hosts_and_relay_to_the_maas_head_node(tmp_path: Path) -> None:
    plan = _plan(LAB)
    hosts, _, uplinks = _oracle(plan)
    folder = _generate(LAB, tmp_path / "out")
    rows = list(csv.DictReader((folder / "vlans.csv").open()))
    assert {r["switch"] for r in rows} == set(hosts)
    server = onprem_plan(plan.cluster).management["head001"]  # the MAAS rack controller's planned address
    block = ipaddress.IPv4Network("10.253.0.0/16")  # the documented default bmc_cidr
    nets = []
    for row in rows:
        net = ipaddress.IPv4Network(row["subnet"])
        nets.append(net)
        assert net.subnet_of(block) and row["vlan"] == "20" and row["role"] == "bmc"
        assert net.num_addresses - 3 >= hosts[row["switch"]]  # network, gateway, broadcast
        assert row["gateway"] == str(net.network_address + 1)
        assert row["dhcp_server"] == server
        doc = _startup(folder, row["switch"])
        assert doc["interface"]["vlan20"]["ipv4"]["address"] == {f"{row['gateway']}/{net.prefixlen}": {}}
        family = doc["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        assert str(net) in family["network"]  # the leaf announces its subnet
        relay = doc["service"]["dhcp-relay"]["default"]
        (group,) = relay["server-group"].values()
        assert set(group["server"]) == {server}
        assert set(group["upstream-interface"]) == uplinks[row["switch"]]
        assert {k: v["server-group-name"] for k, v in relay["downstream-interface"].items()} == {
            "vlan20": next(iter(relay["server-group"]))
        }
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])


def _variant(tmp_path: Path, vlans: dict[str, Any], target: str | None = None) -> Path:
    doc = yaml.safe_load(LAB.read_text())
    doc["fabrics"]["management"]["vlans"] = vlans
    if target is not None:
        doc["deployment"] = {"target": target}
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_declared_vlan_ids_blocks_and_server_are_written(tmp_path: Path) -> None:
    bp = _variant(
        tmp_path, {"bmc": 300, "inband": 301, "bmc_cidr": "10.77.0.0/16", "dhcp_server": "10.10.0.5"}
    )
    folder = _generate(bp, tmp_path / "out")
    rows = list(csv.DictReader((folder / "vlans.csv").open()))
    assert rows and all(r["vlan"] == "300" and r["dhcp_server"] == "10.10.0.5" for r in rows)
    for row in rows:
        assert ipaddress.IPv4Network(row["subnet"]).subnet_of(ipaddress.IPv4Network("10.77.0.0/16"))
        doc = _startup(folder, row["switch"])
        assert {
            c["bridge"]["domain"]["br_default"]["access"] for c in doc["interface"].values() if "bridge" in c
        } == {300}
        assert "vlan300" in doc["service"]["dhcp-relay"]["default"]["downstream-interface"]


def test_no_relay_without_a_provisioning_server(tmp_path: Path) -> None:
    folder = _generate(_variant(tmp_path, {}, target="none"), tmp_path / "out")
    rows = list(csv.DictReader((folder / "vlans.csv").open()))
    assert rows and all(r["dhcp_server"] == "" for r in rows)
    for row in rows:
        doc = _startup(folder, row["switch"])
        assert "service" not in doc and doc["interface"]["vlan20"]["type"] == "svi"


@pytest.mark.parametrize(
    ("vlans", "key", "words"),
    [
        ({"bmc": 0}, "bmc", "VLAN id 0"),
        ({"bmc": 4095}, "bmc", "VLAN id 4095"),
        ({"inband": 20}, "inband", "share VLAN 20"),
        ({"bmc_cidr": "10.253.0.0/28"}, "bmc_cidr", "holds 0 /27 leaf subnets"),
        ({"bmc_cidr": "10.253.0.0/27"}, "bmc_cidr", "holds 1 /27 leaf subnets; the bmc VLAN needs 2"),
        ({"bmc_cidr": "10.254.0.0/24"}, "bmc_cidr", "overlaps fabrics.management.underlay.loopback_cidr"),
        ({"inband_cidr": "10.253.0.0/24"}, "inband_cidr", "overlaps fabrics.management.vlans.bmc_cidr"),
    ],
)
def test_unusable_settings_are_refused_at_their_line(
    vlans: dict[str, Any], key: str, words: str, tmp_path: Path
) -> None:
    bp = _variant(tmp_path, vlans)
    code, out, err = run_cli("validate", str(bp))
    assert code == 1, out + err
    text = out + err
    found = [ln for ln in text.splitlines() if "NET019" in ln]
    assert any(words in ln for ln in found), found
    lines = bp.read_text().splitlines()
    line = next(i for i, ln in enumerate(lines, start=1) if ln.strip().startswith(f"{key}:"))
    assert any(f"{bp}:{line}:" in ln for ln in found), (line, found)
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "--quiet", "--only", "switches")
    assert code == 1 and "NET019" in err


def _commands(path: Path) -> list[list[str]]:
    lines = path.read_text().splitlines()
    return [ln.split("#")[0].split() for ln in lines if ln.strip() and not ln.startswith("#")]


def _token_ok(pattern: str, token: str) -> bool:
    if pattern.startswith("(") and pattern.endswith(")"):
        return token in pattern[1:-1].split("|")
    rng = re.fullmatch(r"<([0-9]+)-([0-9]+)>", pattern)
    if rng:
        return token.isdigit() and int(rng.group(1)) <= int(token) <= int(rng.group(2))
    if pattern == "<bytes>":
        return token.isdigit()
    if pattern.startswith("<") and pattern.endswith(">"):
        return bool(token)
    return pattern == token


def _flatten(node: Any, prefix: list[str]) -> list[list[str]]:
    if isinstance(node, dict):
        if not node:
            return [prefix]
        return [cmd for k, v in node.items() for cmd in _flatten(v, [*prefix, str(k)])]
    return [[*prefix, str(node)]]


@pytest.mark.parametrize("release", ["5.14", "5.15"])
def test_every_key_is_a_command_of_the_release(release: str, tmp_path: Path) -> None:
    bp = with_switch_os(LAB, tmp_path, management=f"cumulus-linux@{release}")
    known = _commands(NVUE / f"cumulus-linux-{release}.txt") + _commands(
        HERE / "data" / "nvue-management.txt"
    )
    folder = _generate(bp, tmp_path / "out")
    checked = 0
    for startup in sorted(folder.rglob("startup.yaml")):
        doc = yaml.safe_load(startup.read_text())[0]["set"]
        for cmd in _flatten(doc, ["nv", "set"]):
            ok = any(len(p) == len(cmd) and all(map(_token_ok, p, cmd)) for p in known)
            assert ok, f"{startup.parent.name}: not a Cumulus Linux {release} command: {' '.join(cmd)}"
            checked += 1
    assert checked > 200


def test_in_band_and_bmc_ports_get_separate_vlans_subnets_and_relays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Today's port model cables only BMC ports to the management fabric (in-band ports are storage-purpose
    ports), so the in-band role is given here to the `cpu` pool's port: its 20 hosts must land in VLAN 10 on a
    10.252.0.0/16 subnet, the 3 head nodes on the same leaf in VLAN 20 on a 10.253.0.0/16 one."""
    from generator.deploy import mgmt_vlans
    from generator.emit.switches import management

    plan = _plan(LAB)
    real = mgmt_vlans._port_roles

    def roles(cluster: Any) -> dict[tuple[str, str], str]:
        return {k: ("inband" if k[0] == "cpu" else v) for k, v in real(cluster).items()}

    monkeypatch.setattr(mgmt_vlans, "_port_roles", roles)
    pools = {d.name: d.pool for d in plan.devices if d.kind == "node"}
    expected: dict[str, Counter[str]] = {}
    for link in plan.links_of("management"):
        if link.a.device in pools:
            expected.setdefault(link.b.device, Counter())[
                "inband" if pools[link.a.device] == "cpu" else "bmc"
            ] += 1
    files = dict(i for i in management.files(plan.cluster, plan) if isinstance(i, tuple))
    leaf = "m-leaf-cpu-01"
    assert expected[leaf] == Counter({"inband": 20, "bmc": 3})
    doc = yaml.safe_load(files[f"management/{leaf}/startup.yaml"])[0]["set"]
    access = Counter(
        c["bridge"]["domain"]["br_default"]["access"] for c in doc["interface"].values() if "bridge" in c
    )
    assert access == Counter({10: 20, 20: 3})
    assert doc["bridge"]["domain"]["br_default"]["vlan"] == {10: {}, 20: {}}
    inband = ipaddress.IPv4Interface(next(iter(doc["interface"]["vlan10"]["ipv4"]["address"])))
    bmc = ipaddress.IPv4Interface(next(iter(doc["interface"]["vlan20"]["ipv4"]["address"])))
    assert inband.network.subnet_of(ipaddress.IPv4Network("10.252.0.0/16"))
    assert bmc.network.subnet_of(ipaddress.IPv4Network("10.253.0.0/16"))
    assert not inband.network.overlaps(bmc.network)
    assert set(doc["service"]["dhcp-relay"]["default"]["downstream-interface"]) == {"vlan10", "vlan20"}
