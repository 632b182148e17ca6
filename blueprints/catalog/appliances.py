"""Appliances cabled to fabric switch ports (``data/appliances.yaml``): what NVIDIA publishes about each.

A figure the vendor does not publish is ``None``: the blueprint declares it (``appliances[].rack_units``,
``power_w``) and rule NET024 says so. The facts and their sources live in the YAML; this module types,
loads and looks them up.
"""

from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from blueprints.catalog.load import validated_file


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class ApplianceModel(_Entry):
    name: str
    manufacturer: str | None = None
    part_number: str | None = None
    runs: Literal["ufm"] | None = None  # ufm: the subnet manager and SHARP Aggregation Manager run on it
    hca: str | None = None
    fabric_interface: str | None = None  # the port the SM binds to by default
    ib_ports: int | None = Field(default=None, ge=1, le=16)
    # the cage of its fabric ports (osfp, qsfp112, ...): picks the transceiver at the appliance end of an
    # optical cable; None where not published (the blueprint declares it, rule NET024 asks)
    port_form_factor: str | None = None
    rack_units: int | None = Field(default=None, ge=1, le=10)
    power_w: float | None = Field(default=None, gt=0)


class _Document(_Entry):
    appliances: dict[str, ApplianceModel]


@cache
def _document() -> _Document:
    return validated_file(_Document, "appliances.yaml")


def appliance_models() -> dict[str, ApplianceModel]:
    return dict(_document().appliances)


def appliance_model(model_id: str | None) -> ApplianceModel | None:
    """The catalogue entry, or None for a generic host (no model) or an unknown id."""
    return _document().appliances.get(model_id) if model_id else None
