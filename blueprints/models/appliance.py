"""Devices cabled to fabric switch ports that are not pool nodes: UFM appliances, a spare host.

NVIDIA's DGX SuperPOD cables its UFM appliances (subnet manager and SHARP Aggregation Manager) to compute
leaf ports (DGX SuperPOD H100 RA, "Network Fabrics", Table 4: "Compute and UFM" cables); real sites also
put a spare host or another appliance on spare leaf ports. Each is a device of the plan with its cables,
rack position and bill-of-materials line (generator/plan/attached.py).
"""

from typing import Literal

from pydantic import Field, model_validator

from blueprints.models.base import Model, SafeName
from blueprints.models.naming import SwitchName
from blueprints.models.site import RackName


class ApplianceLink(Model):
    """One cable from the appliance to a switch port the topology leaves free."""

    switch: SwitchName
    """the switch it is cabled to, by its plan (or site) name, e.g. c-leaf-su4-r0"""
    port: int = Field(ge=1, le=1024)
    """the switch's logical port number (a free one: `blueprint plan` lists the taken ones)"""


class Appliance(Model):
    name: SafeName
    """its host name (inventory, cable labels, the subnet manager member it is)"""
    model: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
    """catalogue appliance id (`ufm-enterprise-appliance-3`); absent: a generic host with declared figures"""
    fabric: Literal["compute", "storage", "management"] = "compute"
    """the fabric whose switch ports it is cabled to"""
    links: list[ApplianceLink] | None = Field(default=None, min_length=1, max_length=16)
    """the switch ports it is cabled to, one entry per cable"""
    ports: int | None = Field(default=None, ge=1, le=16)
    """instead of `links`: this many cables on leaf ports the topology leaves free, where NVIDIA's SuperPOD
    puts its UFM appliances (the free node slots of the last leaves; the two appliances of an HA pair on
    different leaves)"""
    rack: RackName | None = None
    """the rack it is mounted in (a rack of the plan); default: the rack of the first switch it is cabled
    to"""
    rack_units: int | None = Field(default=None, ge=1, le=10)
    """its height in U, where the catalogue has no published figure"""
    power_w: float | None = Field(default=None, gt=0, le=10_000)
    """its power draw in watts, where the catalogue has no published figure"""
    port_form_factor: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9-]{0,31}$")
    """the cage of its fabric ports (`osfp`, `qsfp112`, a form factor of the catalogue's transceivers), where
    the catalogue has no published figure: it picks the transceiver at the appliance end of an optical
    cable"""

    @model_validator(mode="after")
    def _links_or_ports(self) -> "Appliance":
        if (self.links is None) == (self.ports is None):
            raise ValueError(
                "give exactly one of `links` (switch and port of each cable) or `ports` (a count)"
            )
        return self
