"""The expected-fabric net file: consistent on both ends, one Ca per RDMA device, ibsim-safe."""

from __future__ import annotations

import re

import pytest
from vendor_tables import dgx_h100_compute_ports, dgx_h100_storage_ports
from vfy_plans import SUPERPOD, TINY, plan_of

from generator.emit import ibnetdiscover as emitter
from generator.findings import BlueprintError
from generator.verify.check import verify

RECORD = re.compile(r'^(Switch|Ca)\t(\d+) "([^"]+)"\t\t# "([^"]*)"')
PORT = re.compile(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\]\t\t# (?:lid 0 lmc 0 )?"([^"]*)" lid 0 (\S+)$')


def records(text: str) -> dict[str, tuple[str, int, str, dict[int, tuple[str, int, str, str]]]]:
    """node id → (kind, nports, description, {port: (remote id, remote port, remote desc, rate)})."""
    out: dict[str, tuple[str, int, str, dict[int, tuple[str, int, str, str]]]] = {}
    current = None
    for line in text.splitlines():
        if m := RECORD.match(line):
            current = m.group(3)
            out[current] = (m.group(1), int(m.group(2)), m.group(4), {})
        elif line.startswith("["):
            m = PORT.match(line)
            assert m and current, line
            out[current][3][int(m.group(1))] = (m.group(2), int(m.group(3)), m.group(4), m.group(5))
    return out


def test_every_link_is_declared_on_both_ends_with_one_rate() -> None:
    plan = plan_of(TINY)
    recs = records(emitter.render_netfile(plan, "compute"))
    n = 0
    for nid, (_kind, nports, _desc, ports) in recs.items():
        for port, (rid, rport, rdesc, rate) in ports.items():
            assert 1 <= port <= nports
            back = recs[rid][3][rport]
            assert back[:2] == (nid, port) and back[3] == rate == "4xNDR"
            assert recs[rid][2] == rdesc
            n += 1
    assert n == 2 * len(plan.links_of("compute"))


def test_one_ca_per_rdma_device_and_descriptions_are_device_names() -> None:
    plan = plan_of(TINY)
    recs = records(emitter.render_netfile(plan, "compute"))
    cas = sorted(desc for kind, _n, desc, _p in recs.values() if kind == "Ca")
    # CA names are the DGX H100's real RDMA devices (User Guide Table 6, kept as test data)
    assert cas == sorted(f"dgx00{h} {r.rdma}" for h in range(1, 5) for r in dgx_h100_compute_ports())
    switches = {desc: n for kind, n, desc, _p in recs.values() if kind == "Switch"}
    assert switches == {d.name: 64 for d in plan.switches("compute")}
    storage = records(emitter.render_netfile(plan, "storage"))
    dual = {desc: (n, sorted(p)) for kind, n, desc, p in storage.values() if kind == "Ca"}
    # the two dual-port storage cards: User Guide Table 5 (test data) gives each port its own PCI function
    # and RDMA device, so each is one Ca with one port, named by its device
    assert {d: v for d, v in dual.items() if d.startswith("dgx001 ")} == {
        f"dgx001 {r.rdma}": (1, [1]) for r in dgx_h100_storage_ports()
    }
    assert {rate for *_x, ports in storage.values() for *_y, rate in ports.values()} == {"2xNDR"}


def test_sim_speed_is_written_and_said() -> None:
    plan = plan_of(TINY)
    text = emitter.render_netfile(plan, "compute", sim_speed="HDR")
    assert (
        "# Simulated at HDR: ibsim 0.10 models link speeds only up to HDR; the planned fabric runs 4xNDR."
        in text
    )
    rates = {r for *_x, ports in records(text).values() for *_y, r in ports.values()}
    assert rates == {"4xHDR"}
    assert "4xNDR" not in text.replace("(infiniband-ndr, 4xNDR)", "").replace("runs 4xNDR", "")


def test_large_fabric_lines_are_short_and_output_deterministic() -> None:
    plan = plan_of(SUPERPOD)
    text = emitter.render_netfile(plan, "compute")
    assert max(len(line) for line in text.splitlines()) < 256
    assert text == emitter.render_netfile(plan_of(SUPERPOD), "compute")
    # 127 DGX x 8 HCAs + the UFM appliances' 4 ports (the RA's "Compute and UFM" 1020 cables)
    assert text.count("\nCa\t") == 1020 and text.count("\nSwitch\t") == 48


@pytest.mark.parametrize("fabric", ["compute", "storage"])
def test_netfile_round_trips_through_the_verifier(fabric: str, tmp_path) -> None:
    plan = plan_of(TINY)
    f = tmp_path / f"{fabric}.net"
    f.write_text(emitter.render_netfile(plan, fabric))
    v = verify(plan, fabric, f)
    assert v.clean and v.counts["ok"] == len(plan.links_of(fabric))


def test_non_infiniband_and_unknown_fabrics_are_errors() -> None:
    plan = plan_of(TINY)
    with pytest.raises(BlueprintError, match="not InfiniBand"):
        emitter.render_netfile(plan, "management")
    with pytest.raises(BlueprintError, match="no `backend` fabric"):
        emitter.render_netfile(plan, "backend")


def test_node_ids_stay_unique_and_short() -> None:
    ids = emitter._Ids()
    long = "x" * 80
    a, b = ids.get("H", long + "a"), ids.get("H", long + "b")
    assert a != b and len(a) <= emitter.MAX_NODE_ID and len(b) <= emitter.MAX_NODE_ID
    assert ids.get("S", 'we"ird #name@') == "S-we_ird__name_"
    assert ids.get("H", long + "a") == a


def test_expected_links_rates_come_from_the_catalogue() -> None:
    plan = plan_of(TINY)
    assert {el.rate for el in emitter.expected_links(plan, "compute")} == {"4xNDR"}
    assert {el.rate for el in emitter.expected_links(plan, "storage")} == {"2xNDR"}
    # a 200 Gb/s link on an NDR fabric is 2xNDR (same token), not 4xHDR
    assert emitter.link_rate(plan, "compute", 200.0) == ("2x", "NDR")
    assert emitter.link_rate(plan, "compute", 123.0) is None


def test_emit_writes_one_file_per_infiniband_fabric(tmp_path) -> None:
    plan = plan_of(TINY)
    assert emitter.applies(plan.cluster)
    emitter.emit(plan.cluster, plan, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compute.net", "storage.net"]


def test_long_descriptions_are_flagged(tmp_path) -> None:
    import dataclasses

    plan = plan_of(TINY)
    long = "h" * 60
    links = tuple(
        ln._replace(a=ln.a._replace(device=long)) if ln.a.device == "dgx001" else ln
        for ln in plan.links_of("compute")
    )
    devices = tuple(d._replace(name=long) if d.name == "dgx001" else d for d in plan.devices)
    text = emitter.render_netfile(dataclasses.replace(plan, links=links, devices=devices), "compute")
    assert "# Warning: 8 node description(s) exceed 63 characters" in text
    assert max(len(line) for line in text.splitlines()) < 256
