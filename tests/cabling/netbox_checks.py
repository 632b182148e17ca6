"""What NetBox's bulk import would refuse, checked on our CSV files (no NetBox needed).

Mirrors the import forms (dcim/forms/bulk_import.py): referenced objects exist by name, choice fields
carry valid slugs, interface names are unique per device, an interface takes at most one cable, a
racked device fits its rack without overlapping another.
"""

from __future__ import annotations

import csv
import io

from generator.emit.cabling.netbox import CABLE_COLUMNS, IMPORT_ORDER

# From NetBox dcim/choices.py (CableTypeChoices, InterfaceTypeChoices subset we may emit, status choices).
CABLE_TYPES = {
    "cat3",
    "cat5",
    "cat5e",
    "cat6",
    "cat6a",
    "cat7",
    "cat7a",
    "cat8",
    "dac-active",
    "dac-passive",
    "mrj21-trunk",
    "coaxial",
    "mmf",
    "mmf-om1",
    "mmf-om2",
    "mmf-om3",
    "mmf-om4",
    "mmf-om5",
    "smf",
    "smf-os1",
    "smf-os2",
    "aoc",
    "power",
}
INTERFACE_TYPES = {
    "1000base-t",
    "1000base-x-sfp",
    "2.5gbase-t",
    "5gbase-t",
    "10gbase-t",
    "25gbase-t",
    "10gbase-x-sfpp",
    "25gbase-x-sfp28",
    "100gbase-x-qsfp28",
    "100gbase-x-qsfpdd",
    "200gbase-x-qsfp56",
    "200gbase-x-qsfpdd",
    "400gbase-x-osfp",
    "400gbase-x-qsfp112",
    "400gbase-x-qsfpdd",
    "800gbase-x-osfp",
    "800gbase-x-qsfpdd",
    "infiniband-sdr",
    "infiniband-ddr",
    "infiniband-qdr",
    "infiniband-fdr10",
    "infiniband-fdr",
    "infiniband-edr",
    "infiniband-hdr",
    "infiniband-ndr",
    "infiniband-xdr",
    "other",
}
DEVICE_STATUS = {"offline", "active", "planned", "staged", "failed", "inventory", "decommissioning"}
CABLE_STATUS = {"connected", "planned", "decommissioning"}
RACK_STATUS = {"reserved", "available", "planned", "active", "deprecated"}
SLUG_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


def read(files: dict[str, bytes]) -> dict[str, list[dict[str, str]]]:
    return {name: list(csv.DictReader(io.StringIO(files[name].decode("utf-8")))) for name in IMPORT_ORDER}


def header(data: bytes) -> tuple[str, ...]:
    return tuple(next(csv.reader(io.StringIO(data.decode("utf-8")))))


def problems(files: dict[str, bytes]) -> list[str]:
    """Every reason NetBox would reject the import (empty when it would accept it)."""
    assert sorted(files) == sorted(IMPORT_ORDER)
    t = read(files)
    bad: list[str] = []
    if header(files["cables.csv"]) != CABLE_COLUMNS:
        bad.append(f"cables.csv header {header(files['cables.csv'])}")
    sites = {r["name"] for r in t["sites.csv"]}
    locations = {(r["site"], r["name"]) for r in t["locations.csv"]}
    manufacturers = {r["name"] for r in t["manufacturers.csv"]}
    roles = {r["name"] for r in t["device-roles.csv"]}
    types = {(r["manufacturer"], r["model"]): int(r["u_height"]) for r in t["device-types.csv"]}
    for table in ("sites.csv", "manufacturers.csv", "device-roles.csv", "device-types.csv", "locations.csv"):
        slugs = [r["slug"] for r in t[table]]
        if len(set(slugs)) != len(slugs) or any(not s or set(s) - SLUG_CHARS for s in slugs):
            bad.append(f"{table}: bad or duplicate slugs")
    for r in t["locations.csv"]:
        if r["site"] not in sites:
            bad.append(f"location {r['name']}: unknown site")
    for r in t["device-types.csv"]:
        if r["manufacturer"] not in manufacturers:
            bad.append(f"device type {r['model']}: unknown manufacturer {r['manufacturer']}")
    racks = {}
    for r in t["racks.csv"]:
        if r["site"] not in sites or (r["site"], r["location"]) not in locations:
            bad.append(f"rack {r['name']}: unknown site/location")
        if r["status"] not in RACK_STATUS or r["width"] not in {"10", "19", "21", "23"}:
            bad.append(f"rack {r['name']}: bad status/width")
        racks[r["name"]] = int(r["u_height"])
    occupied: dict[tuple[str, int], str] = {}
    devices = set()
    for r in t["devices.csv"]:
        name = r["name"]
        if name in devices:
            bad.append(f"device {name} twice")
        devices.add(name)
        if r["role"] not in roles or r["site"] not in sites or r["status"] not in DEVICE_STATUS:
            bad.append(f"device {name}: unknown role/site/status")
        key = (r["manufacturer"], r["device_type"])
        if key not in types:
            bad.append(f"device {name}: unknown device type {key}")
            continue
        if r["rack"]:
            if r["rack"] not in racks:
                bad.append(f"device {name}: unknown rack {r['rack']}")
                continue
            if r["position"]:
                if r["face"] not in ("front", "rear"):
                    bad.append(f"device {name}: position without face")
                low, height = int(r["position"]), types[key]
                if low < 1 or low + height - 1 > racks[r["rack"]]:
                    bad.append(f"device {name}: U{low}+{height} outside rack {r['rack']}")
                for u in range(low, low + height):
                    other = occupied.setdefault((r["rack"], u), name)
                    if other != name:
                        bad.append(f"device {name}: U{u} of {r['rack']} already holds {other}")
    interfaces = set()
    for r in t["interfaces.csv"]:
        key = (r["device"], r["name"])
        if r["device"] not in devices:
            bad.append(f"interface {key}: unknown device")
        if key in interfaces:
            bad.append(f"interface {key} twice")
        interfaces.add(key)
        if r["type"] not in INTERFACE_TYPES:
            bad.append(f"interface {key}: type {r['type']}")
        if not r["speed"].isdigit():
            bad.append(f"interface {key}: speed {r['speed']}")
    cabled: dict[tuple[str, str], str] = {}
    for r in t["cables.csv"]:
        for side in ("a", "b"):
            key = (r[f"side_{side}_device"], r[f"side_{side}_name"])
            if r[f"side_{side}_type"] != "dcim.interface":
                bad.append(f"cable {r['label']}: side {side} type")
            if key not in interfaces:
                bad.append(f"cable {r['label']}: side {side} {key} is not an imported interface")
            other = cabled.setdefault(key, r["label"])
            if other != r["label"]:
                bad.append(f"cable {r['label']}: {key} already cabled by {other}")
        # a cable's type is optional in NetBox (netbox.netbox.netbox_cable: "Create cable within NetBox with
        # only required information" gives none): an appliance's cable before its length is known has none
        if (r["type"] and r["type"] not in CABLE_TYPES) or r["status"] not in CABLE_STATUS:
            bad.append(f"cable {r['label']}: type/status {r['type']}/{r['status']}")
        if r["length"] and (float(r["length"]) <= 0 or r["length_unit"] != "m"):
            bad.append(f"cable {r['label']}: length {r['length']} {r['length_unit']}")
    return bad
