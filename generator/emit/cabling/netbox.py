"""NetBox bulk-import CSVs: the site, its racks, devices, interfaces and planned cables.

Import the files in the order of ``IMPORT_ORDER`` (each refers to objects the earlier ones create).
Field names and choice slugs follow NetBox's ``dcim/forms/bulk_import.py`` and ``dcim/choices.py``
(netbox-community/netbox); related objects are referenced by name, as the import forms expect.
Only cabled ports become interfaces: the import creates them, so the device types carry no interface
templates (which would otherwise create clashing duplicates).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from operator import attrgetter, itemgetter
from typing import Any

from generator.emit.cabling.rows import CableEnd, CableRow, fmt_num, natural_key, rack_code
from generator.emit.cabling.tables import Cell, CsvStream, sliced_csv, to_csv
from generator.emit.lldp import interface_name as ethernet_interface_name
from generator.plan.model import Device, Plan
from generator.resolve import NicPort, ResolvedCluster

IMPORT_ORDER: tuple[str, ...] = (
    "sites.csv",
    "locations.csv",
    "manufacturers.csv",
    "device-roles.csv",
    "device-types.csv",
    "racks.csv",
    "devices.csv",
    "interfaces.csv",
    "cables.csv",
)
CABLE_COLUMNS: tuple[str, ...] = (
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "length",
    "length_unit",
)
# Whether the import files' text cells carry safetext.csv_cell's spreadsheet `'`: they do not, since
# NetBox's CSV import stores a cell as it is (a `'-1-1` rack or `'-Acme` manufacturer kept the `'`). One
# rule for this writer and the build's reader (sot/build.py cell_text): a name `'=x` is read as written.
SPREADSHEET_PREFIX = False
# NetBox's devicetype-library files vendor-neutral items under this manufacturer; used when the
# catalogue does not name one.
GENERIC_MANUFACTURER = "Generic"
# Every switch and server in the catalogue mounts on 19-inch (EIA-310) rails; NetBox requires a width.
RAIL_WIDTH_IN = 19
STATUS = "planned"
# Catalogue models the NetBox devicetype-library has, by its model name and slug (the key NetBox's
# device-type importer and `sot push` match on), so a site that loaded the library gets no parallel
# type: netbox-community/devicetype-library device-types/Nvidia/SN5600.yaml, SN2201.yaml (its slug
# keeps the Mellanox name), QM9700.yaml, Q3400-RA.yaml.
DEVICETYPE_LIBRARY: dict[str, tuple[str, str]] = {
    "sn5600": ("SN5600", "nvidia-sn5600"),
    "sn2201": ("SN2201", "mellanox-sn2201"),
    "qm9700": ("QM9700", "nvidia-qm9700"),
    "q3400": ("Q3400-RA", "nvidia-q3400-ra"),
}

# NetBox InterfaceTypeChoices slugs for Ethernet by (Gb/s, cage form factor), then by speed alone where
# one form factor is near-universal. InfiniBand uses infiniband-<speed token> (netbox/dcim/choices.py
# "InfiniBand" group, per-lane labels such as "NDR (100 Gbps)"), which every NetBox 4 release accepts; the
# "InfiniBand 4X" group (infiniband-<token>-4x) exists only from NetBox 4.6.9 (#21387), so it is not
# written (docs/cabling.md).
_ETH_BY_FORM: dict[tuple[float, str], str] = {
    (1, "rj45"): "1000base-t",
    (1, "sfp"): "1000base-x-sfp",
    (1, "sfp28"): "1000base-x-sfp",
    (10, "rj45"): "10gbase-t",
    (10, "sfp28"): "10gbase-x-sfpp",
    (10, "sfp+"): "10gbase-x-sfpp",
    (25, "sfp28"): "25gbase-x-sfp28",
    (100, "qsfp28"): "100gbase-x-qsfp28",
    (100, "qsfp-dd"): "100gbase-x-qsfpdd",
    (200, "qsfp56"): "200gbase-x-qsfp56",
    (200, "qsfp-dd"): "200gbase-x-qsfpdd",
    (400, "osfp"): "400gbase-x-osfp",
    (400, "qsfp112"): "400gbase-x-qsfp112",
    (400, "qsfp-dd"): "400gbase-x-qsfpdd",
    (800, "osfp"): "800gbase-x-osfp",
    (800, "qsfp-dd"): "800gbase-x-qsfpdd",
}
_ETH_BY_SPEED: dict[float, str] = {
    1: "1000base-t",
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
}
# Twisted-pair links (the plan's medium says utp) end in RJ45 ports whatever cage the NIC family has.
_BASE_T: dict[float, str] = {
    1: "1000base-t",
    2.5: "2.5gbase-t",
    5: "5gbase-t",
    10: "10gbase-t",
    25: "25gbase-t",
}
_IB_TOKENS = ("sdr", "ddr", "qdr", "fdr10", "fdr", "edr", "hdr", "ndr", "xdr")
_ROLE_COLORS = {
    "compute": "2196f3",
    "storage": "4caf50",
    "management": "ff9800",
    "gpu": "9c27b0",
    "login": "607d8b",
}
_SLUG_BAD = re.compile(r"[^a-z0-9_-]+")


def slugify(text: str) -> str:
    """A NetBox slug for ``text`` (Django's SlugField: [-a-zA-Z0-9_]+): its ASCII letters and digits, lower
    case, other runs as `-`. A name with characters outside ASCII, or with no letter or digit, also gets 8
    hex digits of its SHA-256: `富士通` and `日立` were both slugged `x`, and their device types merged into
    one manufacturer. Names that still slug alike are told apart where they meet (_unique_slugs)."""
    slug = _SLUG_BAD.sub("-", text.lower()).strip("-")
    if slug and text.isascii():
        return slug
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug[:60]}-{digest}" if slug else f"x-{digest}"


def _unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """Each of ``names`` with a slug none of the others has: in sort order, a later name whose slug is taken
    gets `-2`, `-3`, ... (`Acme Inc` and `Acme-Inc` both slug `acme-inc`; NetBox refuses a second
    manufacturer of one slug, so the import stopped there)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(set(names), key=lambda n: (slugify(n), n)):
        slug = base = slugify(name)
        n = 2
        while slug in taken:
            slug, n = f"{base}-{n}", n + 1
        taken.add(slug)
        out[name] = slug
    return out


def _import_csv(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str:
    """to_csv without the spreadsheet prefix (SPREADSHEET_PREFIX). The human-facing cables/labels/BOM CSVs
    and the workbook keep the prefix."""
    return to_csv(header, rows, neutralise=SPREADSHEET_PREFIX)


def _import_columns(header: Sequence[str], columns: Sequence[Sequence[Cell]]) -> CsvStream:
    """sliced_csv without the spreadsheet prefix (see _import_csv)."""
    return sliced_csv(header, columns, neutralise=SPREADSHEET_PREFIX)


def _role_name(device: Device) -> str:
    if device.kind == "switch":
        return f"{device.fabric}-{device.role}" if device.fabric else f"switch-{device.role}"
    return f"{device.role}-node"


def _role_color(device: Device) -> str:
    key = (device.fabric or device.role) if device.kind == "switch" else device.role
    return _ROLE_COLORS.get(key, "9e9e9e")


def _device_type(cluster: ResolvedCluster, device: Device) -> tuple[str, str, str, str]:
    """(manufacturer, model, slug, description) of the NetBox device type for ``device``."""
    cat = cluster.catalog
    entry = (cat.switches if device.kind == "switch" else cat.servers).get(device.model)
    if entry is None:
        owner = device.pool or device.fabric or device.role
        # no catalogue height: each declared height is a type of its own (a NetBox device type has one
        # u_height); _type_names gives a second one its own slug and name
        return (
            GENERIC_MANUFACTURER,
            f"{device.model} {device.kind} ({owner})",
            slugify(f"{device.model}-{owner}"),
            f"{device.height_u}U" if device.kind == "appliance" else "",
        )
    manufacturer = entry.manufacturer or GENERIC_MANUFACTURER
    library = DEVICETYPE_LIBRARY.get(device.model)
    if library is not None:
        return manufacturer, library[0], library[1], f"catalogue id {device.model}: {entry.name}"
    return manufacturer, entry.name, slugify(device.model), f"catalogue id {device.model}"


def _form_factor(cluster: ResolvedCluster, plan: Plan, end: CableEnd) -> str | None:
    cat = cluster.catalog
    device = plan.device_by_name[end.device]
    if device.kind == "switch":
        sw = cat.switches.get(device.model)
        return sw.form_factor.removesuffix("-twin") if sw else None
    pool = next((p for p in cluster.pools if p.name == device.pool), None)
    if pool is None:
        return None
    nic_port = next((p for p in pool.ports if p.plan_port == end.port), None)
    nic = cat.nics.get(nic_port.model) if nic_port else None
    return nic.form_factor.removesuffix("-twin") if nic else None


def interface_type(cluster: ResolvedCluster, plan: Plan, row: CableRow, end: CableEnd) -> str:
    fabric = cluster.fabrics.get(row.fabric)
    if fabric is not None and fabric.kind == "infiniband":
        token = (fabric.tech.speed_token or "").lower()
        return f"infiniband-{token}" if token in _IB_TOKENS else "other"
    speed = row.speed_gbps
    if row.medium_kind == "utp" and speed in _BASE_T:
        return _BASE_T[speed]
    form = _form_factor(cluster, plan, end)
    return _ETH_BY_FORM.get((speed, form or ""), _ETH_BY_SPEED.get(speed, "other"))


def _ends(rows: Sequence[CableRow]) -> list[CableEnd]:
    """Every cable end: the A end, then the B end, of each row in turn."""
    return list(chain.from_iterable(zip(map(attrgetter("a"), rows), map(attrgetter("b"), rows), strict=True)))


def _interface_names(
    cluster: ResolvedCluster, plan: Plan, rows: Sequence[CableRow], ends: list[CableEnd]
) -> list[str]:
    """The NetBox interface name of each of ``ends`` (``_ends(rows)``).

    Ethernet/RoCE switch ports use the switch OS names the expected-LLDP files use (``swp17``); InfiniBand
    switch ports keep the plan's logical port number (the number ibnetdiscover and the SM report). Node
    ports take the OS interface name from the port map (ibp220s0), else the faceplate name (BMC), else
    the plan port, when the names are unique on that node.
    """
    ethernet = {name for name, f in cluster.fabrics.items() if f.kind in ("ethernet", "roce")}
    devices = plan.device_by_name
    names: list[str] = [e.port for e in ends]
    node_ends: dict[str, list[int]] = {}
    for i, e in enumerate(ends):
        if e.kind != "switch":
            node_ends.setdefault(e.device, []).append(i)
        elif rows[i >> 1].fabric in ethernet:
            names[i] = ethernet_interface_name(devices[e.device], e.endpoint)
    for indices in node_ends.values():
        # the OS interface where the port map gives one, else the chassis name (faceplate), else the
        # plan port; only when the result is unique on the node (a NetBox interface name is a key)
        chosen = [ends[i].netdev or ends[i].endpoint.faceplate or ends[i].port for i in indices]
        if len(set(chosen)) == len(chosen):
            for i, name in zip(indices, chosen, strict=True):
                names[i] = name
    return names


def render_netbox(cluster: ResolvedCluster, plan: Plan, rows: list[CableRow]) -> dict[str, str | CsvStream]:
    """File name → CSV text for every file in IMPORT_ORDER (the interfaces and cables as CsvStreams)."""
    types = _type_names(cluster, plan)
    files: dict[str, str | CsvStream] = {
        **_site_files(cluster, plan),
        **_device_type_files(cluster, plan, types),
        "racks.csv": _racks_csv(cluster, plan),
        "devices.csv": _devices_csv(cluster, plan, types),
    }
    ends = _ends(rows)
    names = _interface_names(cluster, plan, rows, ends)
    files["interfaces.csv"] = _import_columns(
        ("device", "name", "label", "type", "speed", "enabled", "mgmt_only", "description"),
        _interface_columns(cluster, plan, rows, ends, names),
    )
    files["cables.csv"] = _cables_csv(rows, names)
    return {name: files[name] for name in IMPORT_ORDER}


def _site_files(cluster: ResolvedCluster, plan: Plan) -> dict[str, str]:
    """sites.csv and locations.csv: the site and one location per rack row in use."""
    site = cluster.blueprint.site
    rows_used = sorted({r.row for r in plan.racks})
    return {
        "sites.csv": _import_csv(
            ("name", "slug", "status", "description"),
            [[site.name, slugify(site.name), STATUS, f"cluster {cluster.name}"]],
        ),
        "locations.csv": _import_csv(
            ("site", "name", "slug", "status", "description"),
            [
                [site.name, f"row-{n:02d}", f"{slugify(site.name)}-row-{n:02d}", STATUS, f"rack row {n}"]
                for n in rows_used
            ],
        ),
    }


TypeKey = tuple[str, str, str, str]  # what _device_type gives a device: its type as the catalogue names it


def _type_names(cluster: ResolvedCluster, plan: Plan) -> dict[TypeKey, TypeKey]:
    """Each device type as NetBox must hold it: one manufacturer per name spelt with any case (the catalogue's
    `NVIDIA` and a site file's `Nvidia` were two rows of one slug, refused by the import; the first spelling
    in sort order names both), and per manufacturer one device type per slug and per model name (catalogue
    ids `lab-box` and `lab.box` both slugged `lab-box`: one type was dropped and its devices' import failed,
    or generate stopped at their heights). Later ones in sort order get a `-2` slug and their catalogue id
    after the name. Manufacturers of other names that slug alike stay apart (_unique_slugs)."""
    keys = sorted({_device_type(cluster, d) for d in plan.devices}, key=lambda k: (slugify(k[0]), k[2], k[3]))
    spelling: dict[str, str] = {}
    for manufacturer in sorted({k[0] for k in keys}):
        spelling.setdefault(manufacturer.casefold(), manufacturer)
    slugs: set[tuple[str, str]] = set()
    models: set[tuple[str, str]] = set()
    out: dict[TypeKey, TypeKey] = {}
    for key in keys:
        manufacturer, model, slug, desc = key
        maker = spelling[manufacturer.casefold()]
        n, unique = 2, slug
        while (maker, unique) in slugs:
            unique, n = f"{slug}-{n}", n + 1
        name = model if (maker, model) not in models else f"{model} ({unique})"
        slugs.add((maker, unique))
        models.add((maker, name))
        out[key] = (maker, name, unique, desc)
    return out


def _device_type_files(cluster: ResolvedCluster, plan: Plan, names: dict[TypeKey, TypeKey]) -> dict[str, str]:
    """manufacturers.csv, device-roles.csv and device-types.csv, from the plan's devices."""
    types: dict[str, tuple[str, str, str, int, str]] = {}
    roles: dict[str, tuple[str, str]] = {}
    for d in plan.devices:
        manufacturer, model, slug, desc = names[_device_type(cluster, d)]
        known = types.get(f"{manufacturer}\0{slug}")
        if known is not None and known[3] != d.height_u:
            raise ValueError(f"device type {slug}: devices of {d.height_u}U and {known[3]}U")
        types[f"{manufacturer}\0{slug}"] = (manufacturer, model, slug, d.height_u, desc)
        roles.setdefault(_role_name(d), (_role_color(d), d.kind))
    makers = _unique_slugs(t[0] for t in types.values())
    return {
        "manufacturers.csv": _import_csv(("name", "slug"), [[m, makers[m]] for m in sorted(makers)]),
        "device-roles.csv": _import_csv(
            ("name", "slug", "color", "description"),
            [
                [name, slugify(name), color, f"{kind} role {name}"]
                for name, (color, kind) in sorted(roles.items())
            ],
        ),
        "device-types.csv": _import_csv(
            ("manufacturer", "model", "slug", "u_height", "is_full_depth", "description"),
            [
                [m, model, slug, h, "true", desc]
                for m, model, slug, h, desc in sorted(types.values(), key=lambda t: (t[2], t[0]))
            ],
        ),
    }


_RACK_COLUMNS = (
    "site",
    "location",
    "name",
    "facility_id",
    "status",
    "width",
    "u_height",
    "outer_width",
    "outer_depth",
    "outer_unit",
    "description",
)


def _racks_csv(cluster: ResolvedCluster, plan: Plan) -> str:
    site = cluster.blueprint.site
    geo = site.rack
    return _import_csv(
        _RACK_COLUMNS,
        [
            [
                site.name,
                f"row-{r.row:02d}",
                r.id,
                rack_code(r),
                STATUS,
                RAIL_WIDTH_IN,
                r.units,
                round(geo.width_m * 1000),
                round(geo.depth_m * 1000),
                "mm",
                f"{r.purpose} rack, {fmt_num(r.power_budget_kw)} kW budget",
            ]
            for r in sorted(plan.racks, key=lambda x: (x.row, x.position, x.id))
        ],
    )


_DEVICE_COLUMNS = (
    "name",
    "role",
    "manufacturer",
    "device_type",
    "site",
    "location",
    "rack",
    "position",
    "face",
    "status",
    "description",
)


def _devices_csv(cluster: ResolvedCluster, plan: Plan, names: dict[TypeKey, TypeKey]) -> str:
    site = cluster.blueprint.site
    dev_rows = []
    for d in plan.devices:
        manufacturer, model, _, _ = names[_device_type(cluster, d)]
        rack = plan.rack_by_id.get(d.rack) if d.rack else None
        placed = rack is not None and d.u is not None
        dev_rows.append(
            [
                d.name,
                _role_name(d),
                manufacturer,
                model,
                site.name,
                f"row-{rack.row:02d}" if rack else "",
                rack.id if rack else "",
                d.u if placed else "",
                "front" if placed else "",
                STATUS,
                _describe(d),
            ]
        )
    return _import_csv(_DEVICE_COLUMNS, dev_rows)


def _cables_csv(rows: list[CableRow], names: list[str]) -> CsvStream:
    """cables.csv: each cable between the two interfaces ``names`` gives its ends (A, B, A, B, ...)."""
    lengths = {v: (fmt_num(v) if v > 0 else "", "m" if v > 0 else "") for v in {r.length_m for r in rows}}
    length_cells = [lengths[r.length_m] for r in rows]
    n = len(rows)
    return _import_columns(
        CABLE_COLUMNS,
        [
            [r.a.device for r in rows],
            ["dcim.interface"] * n,
            names[0::2],
            [r.b.device for r in rows],
            ["dcim.interface"] * n,
            names[1::2],
            [r.netbox_type for r in rows],
            [STATUS] * n,
            [r.id for r in rows],
            [c[0] for c in length_cells],
            [c[1] for c in length_cells],
        ],
    )


def _describe(d: Device) -> str:
    bits = []
    if d.kind == "switch":
        bits.append(f"{d.fabric} fabric {d.role}")
    else:
        bits.append(f"pool {d.pool}" if d.pool else d.role)
    for key, value in (("SU", d.su), ("pod", d.pod), ("rail", d.rail)):
        if value is not None:
            bits.append(f"{key} {value}")
    return ", ".join(bits)


def _interface_columns(
    cluster: ResolvedCluster, plan: Plan, rows: list[CableRow], ends: list[CableEnd], names: list[str]
) -> list[list[str | int]]:
    """interfaces.csv as columns: one interface per cable end, sorted by device then natural port order.

    Built for 630k ends at 100k GPUs: interface types, speeds and name sort keys repeat per model and
    port, so each is computed once and looked up after; the sort runs on one int per end.
    """
    speeds = {v: round(v * 1_000_000) for v in {r.speed_gbps for r in rows}}
    kinds = _interface_kinds(cluster, plan, rows, ends)
    labels, descriptions, management = _interface_texts(cluster, plan, rows, ends)
    device = [e.device for e in ends]
    # Sort key: (device, natural order of the interface name), as one int: device rank x name rank.
    name_rank = _ranks(names, natural_key)
    device_rank = _ranks(device, None)
    width = max(name_rank.values(), default=0) + 1
    keys = [device_rank[d] * width + name_rank[n] for d, n in zip(device, names, strict=True)]
    order = sorted(range(len(ends)), key=keys.__getitem__)

    def sorted_column(values: list) -> list:
        return list(itemgetter(*order)(values)) if len(order) > 1 else [values[i] for i in order]

    return [
        sorted_column(device),
        sorted_column(names),
        sorted_column(labels),
        sorted_column(kinds),
        sorted_column([speeds[rows[i >> 1].speed_gbps] for i in range(len(ends))]),
        ["true"] * len(ends),
        sorted_column(management),
        sorted_column(descriptions),
    ]


def _interface_kinds(
    cluster: ResolvedCluster, plan: Plan, rows: list[CableRow], ends: list[CableEnd]
) -> list[str]:
    """The NetBox interface type of each end (computed once per fabric, speed, medium, model and port)."""
    devices = plan.device_by_name
    types: dict[tuple, str] = {}
    kinds: list[str] = []
    for i, end in enumerate(ends):
        r = rows[i >> 1]
        node = end.kind == "node"
        # interface_type depends on the fabric, speed and medium, and on the cage form factor: the
        # switch model's, or (nodes) the NIC behind that port of the device's pool.
        key = (
            r.fabric,
            r.speed_gbps,
            r.medium_kind,
            end.kind,
            devices[end.device].pool if node else end.model,
            end.port,
        )
        kind = types.get(key)
        if kind is None:
            kind = types[key] = interface_type(cluster, plan, r, end)
        kinds.append(kind)
    return kinds


def _interface_texts(
    cluster: ResolvedCluster, plan: Plan, rows: list[CableRow], ends: list[CableEnd]
) -> tuple[list[str], list[str], list[str]]:
    """Each end's label, description and mgmt_only cell."""
    labels: list[str] = []
    descriptions: list[str] = []
    management: list[str] = []
    port_cache: dict[tuple[str, str], NicPort | None] = {}
    for i, end in enumerate(ends):
        r = rows[i >> 1]
        text = f"{r.fabric} {r.layer}, cable {r.id}"
        port = _node_port(cluster, plan, end, port_cache) if end.kind == "node" else None
        if end.kind == "node" and port is not None and port.label and port.has_rdma:
            # the site's label for the adapter (pools[].ports[].label: HCA-5, as its cable labels print it)
            # is what the site calls the port; the RDMA device/port stays in the description
            labels.append(end.label_port)
            descriptions.append(f"{end.port}; {text}")
        elif end.kind == "node":
            # the RDMA device/port as the label (the name NCCL and ibstat use; the interface name is the
            # OS one), the chassis port in the description
            labels.append(end.port if port is not None and port.has_rdma else end.label_port)
            descriptions.append(f"{end.label_port}; {text}")
        elif end.label_port != f"P{end.port}":
            labels.append(end.label_port)
            descriptions.append(f"cage {end.label_port}; {text}")
        else:
            labels.append(end.label_port)
            descriptions.append(text)
        management.append("true" if _out_of_band(r, port) else "false")
    return labels, descriptions, management


def _node_port(
    cluster: ResolvedCluster, plan: Plan, end: CableEnd, cache: dict[tuple[str, str], NicPort | None]
) -> NicPort | None:
    """The pool's NIC port behind a node's cable end (one lookup per pool and port)."""
    pool = plan.device_by_name[end.device].pool or ""
    key = (pool, end.port)
    if key not in cache:
        resolved = next((p for p in cluster.pools if p.name == pool), None)
        ports = resolved.ports if resolved else ()
        cache[key] = next((p for p in ports if p.plan_port == end.port), None)
    return cache[key]


def _out_of_band(row: CableRow, port: NicPort | None) -> bool:
    """NetBox's mgmt_only means an out-of-band management interface ("This interface is used only for
    out-of-band management", dcim Interface model): a node's BMC port, not the in-band host network.
    A port the port map names is the BMC by its role; without a map, servers.yaml's management NIC is
    the BMC port (generator/platform/ports.py, ROLES_FOR_PURPOSE)."""
    if port is None or row.fabric != "management":
        return False
    return port.role == "bmc" or (port.role == "" and port.purpose == "management")


def _ranks(values: list[str], key: Callable[[str], Any] | None) -> dict[str, int]:
    """Each distinct value's rank in sorted order (by ``key``); values whose keys are equal share a rank."""
    ordered = sorted(set(values), key=key)
    ranks: dict[str, int] = {}
    rank, previous = -1, object()
    for v in ordered:
        k = key(v) if key else v
        if k != previous:
            rank, previous = rank + 1, k
        ranks[v] = rank
    return ranks


# --- air-gapped import: the files cut to sizes one NetBox request can take --------------------------
# NetBox's bulk import handles a file in one request and one transaction: it must finish inside the
# documented gunicorn timeout (120 s, NetBox docs "Installation: gunicorn") and stay under Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB by default) for pasted text. A cable row cost ~1 s of server CPU in
# a measured NetBox 4.4 import (it traces the cable path), so cable files hold 60 rows (~60 s, half the
# timeout); interfaces 500; everything else at most 1,000.
CHUNK_ROWS: dict[str, int] = {"cables.csv": 60, "interfaces.csv": 500}
MAX_CHUNK_ROWS = 1000


def import_chunks(files: dict[str, str], rows: dict[str, int] | None = None) -> dict[str, str]:
    """``files`` (IMPORT_ORDER name -> CSV text) cut into numbered files that sort in import order:
    ``01-sites.csv``, ``08-interfaces-001.csv``, ``08-interfaces-002.csv``, ... each with the header.

    A file whose rows are all dropped (nothing new) is left out; ``rows`` overrides rows per file."""
    limits = {**CHUNK_ROWS, **(rows or {})}
    out: dict[str, str] = {}
    for step, name in enumerate(IMPORT_ORDER, start=1):
        header, records = csv_records(files.get(name, ""))
        if not records:
            continue
        size = max(1, min(limits.get(name, MAX_CHUNK_ROWS), MAX_CHUNK_ROWS))
        parts = [records[i : i + size] for i in range(0, len(records), size)]
        stem = name.removesuffix(".csv")
        for number, part in enumerate(parts, start=1):
            label = f"{step:02d}-{stem}" + (f"-{number:03d}" if len(parts) > 1 else "")
            out[f"{label}.csv"] = header + "".join(part)
    return out


def csv_records(text: str) -> tuple[str, list[str]]:
    """The header line and each record's text (a quoted cell may hold a line break)."""
    # lines end at "\n" only ("\r\n" kept whole), as the csv module reads them: str.splitlines also breaks
    # at VT, FF, NEL, U+2028 and U+2029, which a cell may hold unquoted, and cut its row in two
    lines = text.split("\n")
    tail = lines.pop()  # what follows the last "\n": "" when the text ends with one
    lines = [line + "\n" for line in lines] + ([tail] if tail else [])
    if not lines:
        return "", []
    header, records = lines[0], []
    pending: list[str] = []
    quotes = 0  # counted line by line: recounting the growing record made one stray quote quadratic
    for line in lines[1:]:
        pending.append(line)
        quotes += line.count('"')
        # a record ends where its quotes balance (RFC 4180: a quote inside a cell is doubled)
        if quotes % 2 == 0:
            records.append("".join(pending))
            pending, quotes = [], 0
    if pending:
        records.append("".join(pending))
    return header, records
