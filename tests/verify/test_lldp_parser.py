"""The lldpcli JSON parser on the shapes lldpd really prints (json: single vs list; json0)."""

from __future__ import annotations

import json

import pytest

from generator.verify.lldp import device_name_of, parse_lldp_json, read_lldp
from generator.verify.model import DiscoveryError

# lldpd's own test suite, `lldpcli -f json show neighbors details` with one interface
SINGLE = """{"lldp": {"interface": {"eth0": {
   "via": "LLDP", "rid": "1", "age": "0 day, 00:00:45",
   "chassis": {"ns-2.example.com": {
       "id": {"type": "mac", "value": "00:00:00:00:00:02"},
       "descr": "Spectacular GNU/Linux 2016",
       "mgmt-ip": "fe80::200:ff:fe00:2",
       "capability": [{"type": "Bridge", "enabled": false}, {"type": "Router", "enabled": true}]}},
   "port": {"id": {"type": "mac", "value": "00:00:00:00:00:02"},
            "descr": "eth1", "ttl": "120"}}}}}"""

# two interfaces → a list of one-key objects; a chassis without SysName; two mgmt IPs → list
LIST = json.dumps(
    {
        "lldp": {
            "interface": [
                {
                    "swp1": {
                        "via": "LLDP",
                        "rid": "3",
                        "chassis": {
                            "dgx001": {
                                "id": {"type": "mac", "value": "b8:3f:d2:00:00:01"},
                                "mgmt-ip": ["10.0.0.1", "fe80::1"],
                            }
                        },
                        "port": {
                            "id": {"type": "ifname", "value": "eth0"},
                            "descr": "Intel X710",
                            "ttl": "120",
                        },
                    }
                },
                {
                    "swp2": {
                        "via": "LLDP",
                        "rid": "4",
                        "chassis": {"id": {"type": "mac", "value": "b8:3f:d2:00:00:02"}},
                        "port": {"id": {"type": "mac", "value": "b8:3f:d2:00:00:02"}, "descr": "eth0"},
                    }
                },
            ]
        }
    }
)

JSON0 = json.dumps(
    {
        "lldp": [
            {
                "interface": [
                    {
                        "name": "swp49",
                        "via": "LLDP",
                        "rid": "1",
                        "age": "0 day, 01:00:00",
                        "chassis": [
                            {
                                "id": [{"type": "mac", "value": "1c:34:da:00:00:49"}],
                                "name": [{"value": "m-spine-001"}],
                                "descr": [{"value": "Cumulus Linux version 5.9"}],
                                "capability": [{"type": "Bridge", "enabled": True}],
                            }
                        ],
                        "port": [
                            {
                                "id": [{"type": "ifname", "value": "swp1"}],
                                "descr": [{"value": "to m-leaf-001"}],
                                "ttl": [{"value": "120"}],
                            }
                        ],
                    },
                ]
            }
        ]
    }
)


def _tuples(entries):
    return [
        (n.local_device, n.local_port, n.chassis_name, n.chassis_id, n.port_id_type, n.port_id, n.port_descr)
        for n in entries
    ]


def test_single_interface_shape() -> None:
    assert _tuples(parse_lldp_json(SINGLE, "sw1")) == [
        ("sw1", "eth0", "ns-2.example.com", "00:00:00:00:00:02", "mac", "00:00:00:00:00:02", "eth1")
    ]


def test_list_shape_and_chassis_without_name() -> None:
    assert _tuples(parse_lldp_json(LIST, "m-leaf-001")) == [
        ("m-leaf-001", "swp1", "dgx001", "b8:3f:d2:00:00:01", "ifname", "eth0", "Intel X710"),
        ("m-leaf-001", "swp2", None, "b8:3f:d2:00:00:02", "mac", "b8:3f:d2:00:00:02", "eth0"),
    ]


def test_json0_shape() -> None:
    assert _tuples(parse_lldp_json(JSON0, "m-leaf-001")) == [
        ("m-leaf-001", "swp49", "m-spine-001", "1c:34:da:00:00:49", "ifname", "swp1", "to m-leaf-001")
    ]


def test_several_neighbours_on_one_interface() -> None:
    text = json.dumps(
        {
            "lldp": {
                "interface": [
                    {"swp3": {"chassis": {"a": {}}, "port": {"id": {"type": "ifname", "value": "eth0"}}}},
                    {"swp3": {"chassis": {"b": {}}, "port": {"id": {"type": "ifname", "value": "eth0"}}}},
                ]
            }
        }
    )
    assert [(n.local_port, n.chassis_name) for n in parse_lldp_json(text, "x")] == [
        ("swp3", "a"),
        ("swp3", "b"),
    ]


@pytest.mark.parametrize(
    "text", ['{"lldp": {}}', '{"lldp": [{}]}', '{"lldp": [{"interface": []}]}', "", "  \n"]
)
def test_no_neighbours(text: str) -> None:
    assert parse_lldp_json(text, "x") == []


def test_bad_json_is_located() -> None:
    with pytest.raises(DiscoveryError, match=r"sw\.json:2:\d+: not JSON"):
        parse_lldp_json('{"lldp":\n {oops}', "sw", "sw.json")
    with pytest.raises(DiscoveryError, match="no top-level `lldp` key"):
        parse_lldp_json('{"interfaces": []}', "sw", "sw.json")


def test_directory_reading(tmp_path) -> None:
    (tmp_path / "m-leaf-001.json").write_text(LIST)
    (tmp_path / "m-spine-001.json0").write_text(JSON0)
    (tmp_path / "README.txt").write_text("not read")
    got = read_lldp(tmp_path)
    assert [(n.local_device, n.local_port) for n in got] == [
        ("m-leaf-001", "swp1"),
        ("m-leaf-001", "swp2"),
        ("m-spine-001", "swp49"),
    ]
    assert device_name_of(tmp_path / "a.b.json") == "a.b"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DiscoveryError, match=r"no \*\.json files"):
        read_lldp(empty)
