"""A generated management leaf brought up as Linux does it, with a real DHCP relay and server.

The leaf's ``startup.yaml`` (build/switches/management/) is read back and applied to a network namespace
the way Cumulus Linux realises NVUE's VLAN-aware bridge (``br_default`` with ``vlan_filtering``; each
``bridge domain br_default access <vid>`` port a bridge port whose PVID is untagged ``<vid>``; each
``interface vlan<vid> type svi`` a VLAN device on the bridge with the SVI address). Each access port is a
veth into a host namespace; the first uplink of the relay's server group is a veth to a namespace standing
in for MAAS (dnsmasq as DHCP server at the relay target's address; the route to it stands in for what BGP
would learn from the spines). ISC's ``dhcrelay`` (Debian isc-dhcp-relay) runs with the file's downstream
SVIs and upstream interfaces and server; every host namespace asks with busybox ``udhcpc``. Passing means:
every host gets an address in its leaf's planned subnet through the relay, and reaches its gateway (SVI).
Every wait is bounded; namespaces and daemons are removed by pid even on failure (generator.rehearse.cleanup).
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import time
from pathlib import Path
from typing import IO, Any

import pytest
import yaml
from conftest import run_cli
from real_tools import missing_executables, needs

from generator.rehearse.cleanup import Reaper, must, run

HERE = Path(__file__).resolve().parent
BLUEPRINT = HERE.parent / "switches_mgmt" / "mgmt-lab.yaml"
LEAF = "m-leaf-su1-01"  # the 4 DGX BMC ports
TOOLS = ["ip", "bridge", "dhcrelay", "dnsmasq", "udhcpc", "busybox"]
LEASE_S = 30.0


def _leaf_config(tmp: Path) -> dict[str, Any]:
    code, _, err = run_cli(
        "generate", str(BLUEPRINT), "-o", str(tmp / "out"), "--quiet", "--only", "switches"
    )
    assert code == 0, err
    text = (tmp / "out" / "switches" / "management" / LEAF / "startup.yaml").read_text()
    doc = yaml.safe_load(text)[0]["set"]
    assert isinstance(doc, dict)
    return doc


def _nv(ns: str, *argv: str) -> str:
    return must(["ip", "netns", "exec", ns, *argv])


def _log(r: Reaper, path: Path) -> IO[bytes]:
    """A daemon's log file, closed with everything else the test made."""
    out = path.open("wb")  # outlives this function: closed by r.release()
    r.finally_.append(out.close)
    return out


def _vlan_aware(leaf: str) -> bool:
    """Whether this kernel has VLAN filtering bridges and 802.1Q devices (CONFIG_BRIDGE_VLAN_FILTERING,
    CONFIG_VLAN_8021Q); some CI kernels have neither."""
    made = run(["ip", "netns", "exec", leaf, "ip", "link", "add", "br_default", "type", "bridge",
                "vlan_filtering", "1"])  # fmt: skip
    if made.returncode != 0:
        return False
    probe = run(["ip", "netns", "exec", leaf, "ip", "link", "add", "link", "br_default", "name", "cbprobe",
                 "type", "vlan", "id", "4094"])  # fmt: skip
    run(["ip", "netns", "exec", leaf, "ip", "link", "del", "cbprobe"])
    if probe.returncode != 0:
        run(["ip", "netns", "exec", leaf, "ip", "link", "del", "br_default"])
    return probe.returncode == 0


def _bridge(r: Reaper, leaf: str, doc: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """The file's VLANs, SVIs and access ports; access port name -> (host ns, vid).

    VLAN-aware (Cumulus Linux's own realisation of br_default): one bridge with vlan_filtering, each access
    port's PVID untagged <vid>, the SVI an 802.1Q device on the bridge. Without those kernel features: one
    bridge per VLAN named after the SVI (Cumulus's "traditional bridge mode"), holding that VLAN's access
    ports and the SVI address. For access ports and routed uplinks (no tagged frame anywhere) the two
    forward the same frames; the test says which it used."""
    aware = _vlan_aware(leaf)
    svis = {name: cfg for name, cfg in doc["interface"].items() if cfg.get("type") == "svi"}
    if aware:
        _nv(leaf, "ip", "link", "set", "br_default", "up")
        for vid in doc["bridge"]["domain"]["br_default"]["vlan"]:
            _nv(leaf, "bridge", "vlan", "add", "dev", "br_default", "vid", str(vid), "self")
        for name in svis:
            vid = name.removeprefix("vlan")
            _nv(leaf, "ip", "link", "add", "link", "br_default", "name", name, "type", "vlan", "id", vid)
    else:
        for vid in doc["bridge"]["domain"]["br_default"]["vlan"]:
            _nv(leaf, "ip", "link", "add", f"vlan{vid}", "type", "bridge")
    for name, cfg in svis.items():
        for address in (cfg.get("ipv4") or cfg.get("ip"))["address"]:
            _nv(leaf, "ip", "address", "add", address, "dev", name)
        _nv(leaf, "ip", "link", "set", name, "up")
    hosts: dict[str, tuple[str, int]] = {}
    for ifname, cfg in sorted(doc["interface"].items()):
        access = cfg.get("bridge", {}).get("domain", {}).get("br_default", {}).get("access")
        if access is None:
            continue
        host = r.namespace()
        must(["ip", "link", "add", ifname, "netns", leaf, "type", "veth", "peer", "eth0", "netns", host])
        if aware:
            _nv(leaf, "ip", "link", "set", ifname, "master", "br_default")
            _nv(leaf, "bridge", "vlan", "del", "dev", ifname, "vid", "1")
            _nv(leaf, "bridge", "vlan", "add", "dev", ifname, "vid", str(access), "pvid", "untagged")
        else:
            _nv(leaf, "ip", "link", "set", ifname, "master", f"vlan{access}")
        _nv(leaf, "ip", "link", "set", ifname, "up")
        _nv(host, "ip", "link", "set", "eth0", "up")
        hosts[ifname] = (host, access)
    print(f"bridge realised {'VLAN-aware' if aware else 'as one bridge per VLAN'}: {len(hosts)} access ports")
    return hosts


def _maas(r: Reaper, leaf: str, uplink: str, server: str, subnets: list[str], tmp: Path) -> None:
    """The provisioning server's namespace on the uplink, dnsmasq serving every leaf subnet."""
    maas = r.namespace()
    must(["ip", "link", "add", uplink, "netns", leaf, "type", "veth", "peer", "eth0", "netns", maas])
    _nv(leaf, "ip", "address", "add", "192.0.2.1/31", "dev", uplink)
    _nv(maas, "ip", "address", "add", "192.0.2.0/31", "dev", "eth0")
    _nv(maas, "ip", "address", "add", f"{server}/32", "dev", "eth0")
    for ns, ifname in ((leaf, uplink), (maas, "eth0"), (maas, "lo"), (leaf, "lo")):
        _nv(ns, "ip", "link", "set", ifname, "up")
    _nv(leaf, "ip", "route", "add", f"{server}/32", "via", "192.0.2.0")  # what BGP would learn
    for subnet in subnets:
        _nv(maas, "ip", "route", "add", subnet, "via", "192.0.2.1")
    ranges = []
    for subnet in subnets:
        net = ipaddress.IPv4Network(subnet)
        ranges += [f"--dhcp-range={net.network_address + 2},{net.broadcast_address - 1},{net.netmask},1h"]
    r.spawn(
        "dnsmasq",
        ["ip", "netns", "exec", maas, "dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--port=0",
         "--interface=eth0", "--bind-interfaces", f"--dhcp-leasefile={tmp / 'leases'}",
         f"--pid-file={tmp / 'dnsmasq.pid'}", "--log-dhcp",
         # no address-in-use ping before each offer: it waits 3 s (dnsmasq's PING_WAIT), longer than
         # udhcpc's -T 2, so every first DISCOVER went unanswered and the lease hung on the retries
         "--no-ping", *ranges],
        stdout=_log(r, tmp / "dnsmasq.log"), stderr=subprocess.STDOUT,
    )  # fmt: skip


def _lease(host: str, tmp: Path, name: str) -> tuple[str, int, str]:
    """udhcpc in ``host``: (address, prefix length, router option) it was given, bounded by LEASE_S."""
    script = tmp / "udhcpc.sh"
    router = tmp / f"router-{name}"
    script.write_text(
        '#!/bin/sh\n[ "$1" = bound ] || exit 0\nip address add "$ip/$mask" dev "$interface"\n'
        f'echo "$router" > {router}\n'
    )
    script.chmod(0o755)
    proc = run(
        ["ip", "netns", "exec", host, "udhcpc", "-i", "eth0", "-f", "-q", "-n", "-t", "4", "-T", "2",
         "-s", str(script)],
        timeout_s=LEASE_S,
    )  # fmt: skip
    (tmp / f"udhcpc-{name}.log").write_text(proc.stdout + proc.stderr)
    shown = run(["ip", "-n", host, "-4", "-o", "address", "show", "dev", "eth0"]).stdout.split()
    assert "inet" in shown, f"{name}: no lease ({proc.stdout}{proc.stderr})"
    address, prefix = shown[shown.index("inet") + 1].split("/")
    return address, int(prefix), router.read_text().strip()


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_a_management_leaf_relays_dhcp_to_the_provisioning_server(tmp_path: Path) -> None:
    needs(missing_executables(TOOLS), "apt-get install iproute2 isc-dhcp-relay dnsmasq-base udhcpc")
    doc = _leaf_config(tmp_path)
    relay = doc["service"]["dhcp-relay"]["default"]
    group = next(iter(relay["server-group"].values()))
    server = next(iter(group["server"]))
    uplink = sorted(group["upstream-interface"])[0]
    downstream = sorted(relay["downstream-interface"])
    svis = {
        name: next(iter((cfg.get("ipv4") or cfg.get("ip"))["address"]))
        for name, cfg in doc["interface"].items()
        if cfg.get("type") == "svi"
    }
    subnets = [str(ipaddress.IPv4Interface(a).network) for a in svis.values()]
    assert downstream == sorted(svis) and subnets
    r = Reaper()
    try:
        leaf = r.namespace()
        hosts = _bridge(r, leaf, doc)
        assert len(hosts) == 4  # the 4 DGX BMC ports of the SU's management leaf
        _maas(r, leaf, uplink, server, subnets, tmp_path)
        interfaces = [x for name in [*downstream, uplink] for x in ("-i", name)]
        r.spawn(
            "dhcrelay",
            ["ip", "netns", "exec", leaf, "dhcrelay", "-d", "-4", "-pf", str(tmp_path / "dhcrelay.pid"),
             *interfaces, server],
            stdout=_log(r, tmp_path / "dhcrelay.log"), stderr=subprocess.STDOUT,
        )  # fmt: skip
        time.sleep(1.0)  # both daemons bind their sockets
        assert not r.dead(), r.dead()
        got = {}
        for ifname, (host, vid) in hosts.items():
            address, prefix, router = _lease(host, tmp_path, ifname)
            gateway = ipaddress.IPv4Interface(svis[f"vlan{vid}"])
            assert ipaddress.IPv4Address(address) in gateway.network and prefix == gateway.network.prefixlen
            # dnsmasq answers a relayed request with the relay's gateway address (giaddr) as the router:
            # the relay ran on the SVI the file names
            assert router == str(gateway.ip), (ifname, router)
            ping = run(
                ["ip", "netns", "exec", host, "busybox", "ping", "-c", "1", "-W", "2", str(gateway.ip)], 10
            )
            assert ping.returncode == 0, f"{ifname}: gateway {gateway.ip} unreachable: {ping.stdout}"
            got[ifname] = address
        assert len(set(got.values())) == len(hosts)
        leases = (tmp_path / "leases").read_text().splitlines()
        assert len(leases) == len(hosts)  # every lease came through the relay to the one server
        assert not r.dead(), r.dead()
    finally:
        r.release()
