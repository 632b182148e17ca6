"""Expected LLDP neighbours: lldpcli JSON shape, round trip through the verifier."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vfy_plans import SUPERPOD, TINY, plan_of

from generator.emit import lldp as emitter
from generator.findings import BlueprintError
from generator.verify.check import verify
from generator.verify.lldp import parse_lldp_json


def test_one_file_per_switch_with_lldpcli_shape() -> None:
    plan = plan_of(SUPERPOD)
    files = emitter.render_lldp(plan, "management")
    assert sorted(files) == sorted(f"{d.name}.json" for d in plan.switches("management"))
    leaf = json.loads(files["m-leaf-su1-01.json"])
    first = leaf["lldp"]["interface"][0]
    assert first == {
        "swp1": {
            "via": "LLDP",
            "chassis": {"dgx001": {"capability": {"type": "Station", "enabled": True}}},
            # the DGX H100's out-of-band port is its BMC (DGX BasePOD deployment guide, "Networking")
            "port": {"id": {"type": "ifname", "value": "BMC"}, "descr": "BMC"},
        }
    }
    n = sum(len(parse_lldp_json(text, name)) for name, text in files.items())
    links = plan.links_of("management")
    switch_ends = sum(
        1 for ln in links for ep in (ln.a, ln.b) if plan.device_by_name[ep.device].kind == "switch"
    )
    assert n == switch_ends


def test_single_interface_is_an_object_like_lldpcli_prints_it() -> None:
    plan = plan_of(TINY)
    one = dataclasses.replace(plan, links=plan.links_of("management")[:1])
    doc = json.loads(emitter.render_lldp(one, "management")["m-leaf-su1-01.json"])
    assert list(doc["lldp"]["interface"]) == ["swp1"]


def test_infiniband_fabric_has_no_lldp_files_and_unknown_fabric_is_an_error() -> None:
    plan = plan_of(TINY)
    assert emitter.render_lldp(plan, "compute") == {}
    with pytest.raises(BlueprintError):
        emitter.render_lldp(plan, "nope")


def test_round_trip_verifies_clean(tmp_path) -> None:
    plan = plan_of(SUPERPOD)
    for name, text in emitter.render_lldp(plan, "management").items():
        (tmp_path / name).write_text(text)
    v = verify(plan, "management", tmp_path)
    assert v.clean and v.counts["ok"] == len(plan.links_of("management"))


def test_one_file_per_fabric_round_trips(tmp_path) -> None:
    """The generated lldp/<fabric>.json holds every switch; verify-cabling reads it like a directory."""
    plan = plan_of(SUPERPOD)
    text = emitter.render_lldp_fabric(plan, "management")
    assert text is not None
    combined = json.loads(text)
    per_switch = emitter.render_lldp(plan, "management")
    assert {f"{name}.json" for name in combined} == set(per_switch)
    assert all(combined[name.removesuffix(".json")] == json.loads(t) for name, t in per_switch.items())
    (tmp_path / "management.json").write_text(text)
    v = verify(plan, "management", tmp_path / "management.json")
    assert v.clean and v.counts["ok"] == len(plan.links_of("management"))


def test_lldp_faults_reported(tmp_path) -> None:
    plan = plan_of(SUPERPOD)
    files = {k: json.loads(v) for k, v in emitter.render_lldp(plan, "management").items()}
    leaf = files["m-leaf-su1-01.json"]["lldp"]["interface"]
    swp1, swp2 = leaf[0]["swp1"], leaf[1]["swp2"]
    swp1["chassis"], swp2["chassis"] = swp2["chassis"], swp1["chassis"]  # two host cables swapped
    del leaf[2]  # swp3's cable missing
    # a host whose lldpd sends its MAC as port id: the interface name is in PortDescr
    fourth = leaf[2][next(iter(leaf[2]))]
    fourth["port"] = {"id": {"type": "mac", "value": "b8:3f:d2:00:00:04"}, "descr": fourth["port"]["descr"]}
    # the spine's file as json0, with its first neighbour's SysName an FQDN
    spine = files["m-spine-001.json"]["lldp"]["interface"]
    json0 = {
        "lldp": [
            {
                "interface": [
                    {
                        "name": ifname,
                        "via": "LLDP",
                        "chassis": [
                            {
                                "name": [
                                    {
                                        "value": next(iter(body["chassis"]))
                                        + (".mgmt.example" if i == 0 else "")
                                    }
                                ]
                            }
                        ],
                        "port": [{"id": [{"type": "ifname", "value": body["port"]["id"]["value"]}]}],
                    }
                    for i, item in enumerate(spine)
                    for ifname, body in item.items()
                ]
            }
        ]
    }
    del files["m-spine-001.json"]
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc))
    (tmp_path / "m-spine-001.json0").write_text(json.dumps(json0))
    v = verify(plan, "management", tmp_path)
    bad = {(r.status, r.a.device, r.a.port, r.b.device, r.b.port) for r in v.discrepancies}
    assert v.counts == {
        "miswired": 2,
        "missing": 1,
        "rate": 0,
        "unexpected": 0,
        "ok": len(plan.links_of("management")) - 3,
    }
    assert {b[:2] for b in bad} == {("miswired", "dgx001"), ("miswired", "dgx002"), ("missing", "dgx003")}
    msg = {r.a.device: r.message for r in v.discrepancies}
    # the management cable ends at the DGX BMC port, never an mlx5 device
    assert "m-leaf-su1-01 port 1 goes to dgx002 BMC, plan says dgx001 BMC" in msg["dgx001"]


@settings(max_examples=200, deadline=None)
@given(
    st.text(min_size=1, max_size=12),
    st.one_of(st.none(), st.text(min_size=1, max_size=10)),
    st.sampled_from(["switch", "node"]),
)
def test_compact_neighbour_text_is_json_dumps_of_the_document(name, netdev, kind) -> None:
    """The neighbour text written directly is json.dumps of the neighbour document, whatever the names
    hold (quotes, backslashes, control and non-ASCII characters): json.loads reads back the document."""
    plan = plan_of(TINY)
    device = next(d for d in plan.devices if d.kind == kind)._replace(name=name)
    end = plan.links[0].a._replace(netdev=netdev, device=name)
    text = emitter._compact_neighbour(device, end)
    assert text == json.dumps(emitter._neighbour(device, end), separators=(",", ":"))
    assert json.loads(text)["chassis"] == {
        name: {"capability": {"type": "Bridge" if kind == "switch" else "Station", "enabled": True}}
    }
