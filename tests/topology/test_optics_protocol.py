"""Optics matched by protocol as well as medium, speed, cage and reach; transceiver totals per fabric."""

from __future__ import annotations

from pathlib import Path

from blueprints.catalog import default_catalog
from generator.plan.media import MediaChooser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_ethernet_only_module_never_on_an_infiniband_port() -> None:
    cat = default_catalog()
    chooser = MediaChooser(cat)
    # the catalogue's Ethernet-only 800G OSFP module: chosen for Ethernet, refused for InfiniBand
    eth_only = {tid for tid, t in cat.transceivers.items() if t.protocols == ("ethernet",)}
    assert "osfp-800-sr8" in eth_only
    assert chooser.transceiver("mmf", 800, "osfp", 10, "ethernet") == "osfp-800-sr8"
    ib = chooser.transceiver("mmf", 800, "osfp", 10, "infiniband")
    assert ib not in eth_only and ib.startswith("generic-")
    # a twin-port module that carries both protocols serves both
    assert chooser.transceiver("mmf", 400, "osfp-twin", 10, "infiniband") == "mma4z00-ns"
    assert chooser.transceiver("mmf", 400, "osfp-twin", 10, "ethernet") == "mma4z00-ns"


def test_per_fabric_transceiver_totals_add_up() -> None:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    for name in ("superpod-h100-4su.yaml", "maas-onprem-h100.yaml"):
        plan = build_plan(load_and_resolve(EXAMPLES / name)[1])
        per = plan.transceivers_by_fabric
        assert sum(sum(v.values()) for v in per.values()) == sum(plan.transceivers.values())
        cat = plan.cluster.catalog
        for fabric, modules in per.items():
            kind = plan.cluster.fabrics[fabric].kind
            proto = "infiniband" if kind == "infiniband" else "ethernet"
            for tid in modules:
                t = cat.transceivers.get(tid)
                assert t is None or proto in t.protocols, (fabric, tid)


def test_xdr_plan_uses_xdr_single_mode_parts() -> None:
    # NVIDIA's XDR parts list: no multimode, AOC or passive DAC at 200G-PAM4; twin-port 2xDR4 in switch cages,
    # single-port DR4 flat top in ConnectX-8 cages
    from collections import Counter

    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    plan = build_plan(load_and_resolve(Path(__file__).parent / "fixtures" / "xdr-cx8.yaml")[1])
    media = Counter(link.medium for link in plan.links_of("compute"))
    assert set(media) <= {"acc", "smf", "smf-fr4"}, media
    node_ports = sum(1 for link in plan.links_of("compute") if link.layer == "node_leaf")
    assert plan.transceivers.get("mms4a20") == node_ports  # one per ConnectX-8 port (all optical here)
    switch_cages = {
        (ep.device, ep.cage)
        for link in plan.links_of("compute")
        if link.medium == "smf"
        for ep in (link.a, link.b)
        if plan.device_by_name[ep.device].kind == "switch"
    }
    assert plan.transceivers.get("mms4a00") == len(switch_cages)
    assert not any(tid.startswith("generic-") for tid in plan.transceivers)


def test_dgx_h100_cages_take_flat_top_twin_port_modules() -> None:
    # NVIDIA: twin-port OSFP RHS (flat top, "-FLT") in DGX H100/H200 Cedar7 cages, IHS (finned) in switches only.
    # DGX H100 user guide, Network Modules table: 8 compute ports in 4 twin-port cages (OSFP1..OSFP4, P1/P2).
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    plan = build_plan(load_and_resolve(EXAMPLES / "superpod-h100-4su.yaml")[1])
    compute = plan.transceivers_by_fabric["compute"]
    assert compute["mma4z00-ns-flt"] == 127 * 4  # 127 DGX (the RA's UFM node slot)
    assert compute["mma4z00-ns"] == (32 + 16) * 32  # every leaf and spine cage, finned
