"""The NetBox interface types written for InfiniBand ports are choices NetBox has (issue 29: the docs named
one that older releases lack)."""

from __future__ import annotations

from generator.emit.cabling import netbox

# netbox-community/netbox netbox/dcim/choices.py, InterfaceTypeChoices, the per-lane InfiniBand slugs (from
# 4.6.9, #21387, beside the `-4x` ones): the slugs every NetBox 4 release accepts.
NETBOX_INFINIBAND = {
    "infiniband-sdr",
    "infiniband-ddr",
    "infiniband-qdr",
    "infiniband-fdr10",
    "infiniband-fdr",
    "infiniband-edr",
    "infiniband-hdr",
    "infiniband-ndr",
    "infiniband-xdr",
}


def test_every_infiniband_type_written_is_a_netbox_choice() -> None:
    assert {f"infiniband-{token}" for token in netbox._IB_TOKENS} <= NETBOX_INFINIBAND
