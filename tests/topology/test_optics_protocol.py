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
