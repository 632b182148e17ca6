"""NetBox bulk-import CSVs on a hand-built plan: exact columns, names, types, referential integrity."""

from __future__ import annotations

from dataclasses import replace

import netbox_checks
from cabling_plans import small_plan

from generator.emit.cabling import render_format
from generator.plan.model import Device


def _files(plan=None) -> dict[str, bytes]:
    plan = plan or small_plan()
    return render_format(plan.cluster, plan, "netbox")


def test_import_is_consistent() -> None:
    assert netbox_checks.problems(_files()) == []


def test_cables_and_interfaces() -> None:
    t = netbox_checks.read(_files())
    cables = {r["label"]: r for r in t["cables.csv"]}
    assert len(cables) == 5
    first = cables["C-NL-000001"]
    assert (first["side_a_device"], first["side_a_name"], first["side_b_device"], first["side_b_name"]) == (
        "dgx001",
        "ib0",
        "c-leaf-001",
        "1",
    )
    assert (first["type"], first["status"], first["length"], first["length_unit"]) == (
        "mmf-om4",
        "planned",
        "5",
        "m",
    )
    mgmt = cables["M-NL-000001"]
    # Ethernet switch ports carry the switch OS names the expected-LLDP files use
    assert (mgmt["side_a_name"], mgmt["side_b_name"], mgmt["type"]) == ("eth0", "swp1", "cat6")
    ifaces = {(r["device"], r["name"]): r for r in t["interfaces.csv"]}
    assert ifaces[("dgx001", "ib0")]["type"] == "infiniband-ndr"
    assert ifaces[("dgx001", "ib0")]["speed"] == "400000000"  # kb/s
    # the RDMA device as the label (a later sync matches OS names and RDMA devices, issue 30)
    assert ifaces[("dgx001", "ib0")]["label"] == "mlx5_0/1"
    assert ifaces[("c-leaf-001", "33")]["label"] == "P17/1"
    # the in-band management port is not mgmt_only: NetBox means out-of-band (BMC) by it (issue 30)
    assert (
        ifaces[("dgx001", "eth0")]["type"] == "1000base-t"
        and ifaces[("dgx001", "eth0")]["mgmt_only"] == "false"
    )
    assert ifaces[("m-leaf-001", "swp1")]["type"] == "1000base-t"


def test_devices_racks_types() -> None:
    t = netbox_checks.read(_files())
    devices = {r["name"]: r for r in t["devices.csv"]}
    assert set(devices) == {"dgx001", "dgx002", "c-leaf-001", "c-spine-001", "m-leaf-001"}
    d = devices["dgx002"]
    assert (d["rack"], d["position"], d["face"], d["location"], d["role"]) == (
        "r01-01",
        "9",
        "front",
        "row-01",
        "gpu-node",
    )
    assert devices["c-leaf-001"]["role"] == "compute-leaf"
    types = {r["slug"]: r for r in t["device-types.csv"]}
    assert types["dgx-h100"]["u_height"] == "8" and types["nvidia-qm9700"]["u_height"] == "1"
    # the devicetype-library's model and slug, so an instance holding library types gets no parallel type
    assert types["dgx-h100"]["manufacturer"] == "NVIDIA" and types["nvidia-qm9700"]["model"] == "QM9700"
    assert devices["dgx001"]["manufacturer"] == "NVIDIA"
    assert [r["name"] for r in t["manufacturers.csv"]] == ["NVIDIA"]
    racks = {r["name"]: r for r in t["racks.csv"]}
    assert racks["r01-02"]["facility_id"] == "R01-02" and racks["r01-02"]["u_height"] == "48"
    assert (racks["r01-02"]["outer_width"], racks["r01-02"]["outer_depth"]) == ("600", "1200")


def test_checker_catches_overlapping_devices_and_dangling_cables() -> None:
    """The integrity checker itself must fail on a broken import, or the tests above prove nothing."""
    plan = small_plan()
    overlapping = tuple(
        d._replace(u=5) if d.name == "dgx002" else d for d in plan.devices
    )  # dgx001 holds U1-U8
    found = netbox_checks.problems(_files(replace(plan, devices=overlapping)))
    assert any("already holds dgx001" in p for p in found)
    files = _files()
    text = files["interfaces.csv"].decode().splitlines()
    files["interfaces.csv"] = (
        "\n".join(line for line in text if not line.startswith("dgx002,")) + "\n"
    ).encode()
    found = netbox_checks.problems(files)
    assert any("C-NL-000002" in p and "not an imported interface" in p for p in found)


def test_duplicate_netdevs_fall_back_to_rdma_port_names() -> None:
    plan = small_plan()
    # two ports of one node both called eth0 (possible with a custom spec): names must stay unique
    links = tuple(
        link._replace(a=link.a._replace(netdev="eth0")) if link.a.device == "dgx001" else link
        for link in plan.links
    )
    t = netbox_checks.read(_files(replace(plan, links=links)))
    names = sorted(r["name"] for r in t["interfaces.csv"] if r["device"] == "dgx001")
    assert names == ["mlx5_0/1", "mlx5_1/1", "mlx5_10/1"]
    assert netbox_checks.problems(_files(replace(plan, links=links))) == []


def test_unknown_model_gets_generic_type() -> None:
    plan = small_plan()
    custom = tuple(d._replace(model="custom") if d.name.startswith("dgx") else d for d in plan.devices)
    files = _files(replace(plan, devices=custom))
    assert netbox_checks.problems(files) == []
    types = netbox_checks.read(files)["device-types.csv"]
    assert [r for r in types if r["slug"] == "custom-dgx"] == [
        {
            "manufacturer": "Generic",
            "model": "custom node (dgx)",
            "slug": "custom-dgx",
            "u_height": "8",
            "is_full_depth": "true",
            "description": "",
        }
    ]
    assert isinstance(custom[0], Device)


def test_catalogue_ids_and_manufacturers_that_slug_alike_are_kept_apart() -> None:
    """Catalogue ids `lab-box` and `lab.box` both slugged `lab-box`: one device type was dropped (its devices'
    import failed), or, at different heights, generate stopped with an internal error; a site file's
    `Nvidia` beside the shipped `NVIDIA` gave two manufacturers of one slug."""
    from pathlib import Path

    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    bp = Path(__file__).resolve().parent / "fixtures" / "slug-collision" / "bp.yaml"
    plan = build_plan(load_and_resolve(str(bp))[1])
    files = _files(plan)
    assert netbox_checks.problems(files) == []
    t = netbox_checks.read(files)
    lab = {
        r["description"]: (r["manufacturer"], r["model"], r["slug"], r["u_height"])
        for r in t["device-types.csv"]
    }
    assert lab["catalogue id lab-box"] == ("NVIDIA", "Lab box one", "lab-box", "8")
    assert lab["catalogue id lab.box"] == ("NVIDIA", "Lab box two", "lab-box-2", "4")
    assert [r["name"] for r in t["manufacturers.csv"]] == ["Lab", "NVIDIA"]
    used = {(r["manufacturer"], r["device_type"]) for r in t["devices.csv"] if r["name"].startswith("gpu")}
    assert used == {("NVIDIA", "Lab box one"), ("NVIDIA", "Lab box two")}
