"""Small and odd sites: switches sharing racks with nodes, middle-of-row network racks, units kept in
rows, copper inside a rack where the catalogue's reach allows it."""

from __future__ import annotations

from pathlib import Path

import yaml

from generator.plan.model import Plan

HERE = Path(__file__).resolve().parent
LAB = HERE / "fixtures" / "lab4-one-rack.yaml"
SUPERPOD = HERE.parents[1] / "examples" / "superpod-h100-4su.yaml"


def plan(path: Path) -> Plan:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(path)[1])


def variant(tmp_path: Path, **site: object) -> Path:
    data = yaml.safe_load(SUPERPOD.read_text())
    data["site"].update(site)
    out = tmp_path / "variant.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def test_four_node_lab_fits_one_rack_with_its_switch() -> None:
    p = plan(LAB)
    assert len(p.racks) == 1
    (rack,) = p.racks
    assert set(rack.devices) == {"gpu001", "gpu002", "gpu003", "gpu004", "c-leaf-001"}
    assert rack.purpose == "mixed"
    # the switch sits above the nodes
    dev = p.device_by_name
    assert dev["c-leaf-001"].u > max(dev[f"gpu00{i}"].u for i in range(1, 5))


def test_in_rack_cables_are_copper_within_catalogue_reach() -> None:
    p = plan(LAB)
    media = p.cluster.catalog.media
    for link in p.links_of("compute"):
        medium = media[link.medium]
        assert medium.kind in ("dac", "acc"), (link.id, link.medium, link.run_m)
        assert medium.reach_by_speed_m[link.speed_gbps] >= link.run_m
        # the cheaper passive copper wherever it reaches
        if media["dac"].reach_by_speed_m[link.speed_gbps] >= link.length_m:
            assert medium.kind == "dac", link


def test_middle_of_row_network_rack_sits_between_the_units_compute_racks(tmp_path: Path) -> None:
    p = plan(variant(tmp_path, switch_placement="middle-of-row"))
    row1 = sorted((r for r in p.racks if r.row == 1), key=lambda r: r.position)
    purposes = [r.purpose for r in row1]
    # SU1 = 32 DGX at 4 per rack = 8 compute racks, its network rack in the middle
    assert purposes[:9] == ["compute"] * 4 + ["network"] + ["compute"] * 4
    assert "c-leaf-su1-r0" in row1[4].devices


def test_scalable_units_stay_inside_rows() -> None:
    p = plan(SUPERPOD)
    rows_of_su: dict[int, set[int]] = {}
    rack_row = {r.id: r.row for r in p.racks}
    for d in p.devices:
        if d.kind == "node" and d.su is not None and d.rack:
            rows_of_su.setdefault(d.su, set()).add(rack_row[d.rack])
    assert len(rows_of_su) == 4 and all(len(rows) == 1 for rows in rows_of_su.values())
