"""Real ``ibnetdiscover`` dumps (tests/verify/fixtures/real/, origins in its README): every node description
read in the form it has, every link and CA port GUID found."""

from __future__ import annotations

from collections import Counter

from vfy_plans import FIXTURES

from generator.verify.ibnetdiscover import parse_ibnetdiscover
from generator.verify.identify import Described, describe
from generator.verify.sm_guids import parse_nodes

REAL = FIXTURES / "real"


def _forms(name: str) -> dict[str, Described]:
    disc = parse_ibnetdiscover((REAL / name).read_text(), name)
    return {n.desc: describe(n.desc) for n in disc.nodes.values()}


def test_managed_switch_firmware_defaults_and_hca_n_hosts() -> None:
    forms = _forms("ibtopotool-3.topo")
    assert forms["MF0;switch-de779e:SX6012/U1"] == Described("switch-de779e", None, "mf0")
    assert forms["SwitchIB Mellanox Technologies"] == Described(None, None, "firmware")
    assert forms["r-ufm216 HCA-2"] == Described("r-ufm216", "HCA-2", "name")
    assert forms["r-ufm101 HCA-1"] == Described("r-ufm101", "HCA-1", "name")
    # 2 switches, 6 CAs (r-ufm101 has two), no other form
    assert Counter(d.form for d in forms.values()) == {"mf0": 1, "firmware": 1, "name": 6}


def test_old_firmware_default_switch() -> None:
    forms = _forms("ibtopotool-2.topo")
    assert forms["MT43132 Mellanox Technologies"].form == "firmware"
    assert {d.name for d in forms.values() if d.form == "name"} == {"compute-00-00", "compute-00-01"}


def test_every_cable_of_the_real_dumps_is_read() -> None:
    disc = parse_ibnetdiscover((REAL / "ibtopotool-3.topo").read_text(), "3.topo")
    # 3 loopbacks on the SwitchIB (1-2, 19-21, 29-30), the inter-switch cable, 2 + 4 host cables
    assert len(disc.links) == 10
    assert sorted(ln.rate for ln in disc.links).count("4xFDR") == 3
    nodes = parse_nodes((REAL / "ibtopotool-3.topo").read_text(), "3.topo")
    cas = {n.desc: n for n in nodes if n.kind == "ca"}
    assert cas["r-ufm111 HCA-1"].ports == {2: 0x2C903003421B2}  # its cabled port is port 2
    assert cas["r-ufm111 HCA-1"].peers == {2: (0xE41D2D030003E470, 35)}


def test_localhost_and_empty_descriptions_name_nothing() -> None:
    assert describe("localhost HCA-3") == Described(None, "HCA-3", "localhost")
    assert describe("localhost.localdomain mlx5_2").form == "localhost"
    assert describe("MT4129 ConnectX7   Mellanox Technologies").form == "firmware"
    assert describe("   ").form == "empty"
    assert describe("MF0;A09-P1-IBLEAF-04-04:MQM9701/U1") == Described("A09-P1-IBLEAF-04-04", None, "mf0")
