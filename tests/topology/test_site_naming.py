"""Site naming templates, explicit name lists and leaf port layouts: what they produce and the located
errors when they do not fit."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from blueprints.models.naming import parse_ports, render_template

HERE = Path(__file__).resolve().parent
SITE = HERE.parents[1] / "tests" / "realtools" / "fixtures" / "site-named-hdr.yaml"


def test_template_fields_and_widths() -> None:
    assert render_template("a05-p1-dgx-{index:02}-c{slot}", {"index": 7, "slot": 13}) == "a05-p1-dgx-07-c13"
    assert render_template("ib-leaf-su{su:3}-r{rail}", {"su": 2, "rail": 8}) == "ib-leaf-su002-r8"


def test_port_lists() -> None:
    assert parse_ports("1-3, 33,35-36") == [1, 2, 3, 33, 35, 36]
    with pytest.raises(ValueError, match="twice"):
        parse_ports("1-4,4")
    with pytest.raises(ValueError, match="not a port"):
        parse_ports("1-x")


def _variant(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(SITE.read_text())
    edit(data)
    out = tmp_path / "site.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def _validate(path: Path) -> tuple[int, str]:
    from conftest import run_cli

    code, out, err = run_cli("validate", str(path))
    return code, out + err


def test_explicit_host_names(tmp_path: Path) -> None:
    from generator.pipeline import load_and_resolve

    names = [f"node-{c}" for c in "abcdefgh"]

    def edit(d: dict) -> None:  # type: ignore[type-arg]
        del d["pools"][0]["hostname_template"]
        d["pools"][0]["hostnames"] = names

    _, cluster = load_and_resolve(_variant(tmp_path, edit))
    assert list(cluster.pools[0].hostnames) == names


def test_template_field_the_blueprint_cannot_fill_is_a_located_error(tmp_path: Path) -> None:
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        del d["pools"][0]["placement"]

    code, out = _validate(_variant(tmp_path, edit))
    assert code == 2
    assert "site.yaml:" in out and "uses rack, slot, which needs placement.nodes_per_rack" in out


def test_unknown_template_field_is_a_schema_error(tmp_path: Path) -> None:
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["pools"][0]["hostname_template"] = "dgx-{row}"

    code, out = _validate(_variant(tmp_path, edit))
    assert code == 2 and "unknown field(s) row" in out


def test_layout_with_too_few_ports_is_a_located_plan_error(tmp_path: Path) -> None:
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["fabrics"]["compute"]["topology"]["port_layout"] = {"down": "11-13", "up": "31-34"}

    code, out = _validate(_variant(tmp_path, edit))
    assert code == 1 and "PLN001" in out and "a leaf uses 4 node ports, the layout lists 3" in out


def test_too_few_listed_spine_names(tmp_path: Path) -> None:
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["fabrics"]["compute"]["topology"]["names"]["spine"] = {"names": ["only-one"]}

    code, out = _validate(_variant(tmp_path, edit))
    assert code == 1 and "1 spine names listed for 2 spine switches" in out


def test_switch_name_clashing_with_a_host(tmp_path: Path) -> None:
    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["fabrics"]["compute"]["topology"]["names"]["spine"] = {"names": ["a05-r01-dgx-01", "s2"]}

    code, out = _validate(_variant(tmp_path, edit))
    assert (
        code == 1
        and "switch name `a05-r01-dgx-01` of the compute fabric is also used by `a05-r01-dgx-01`" in out
    )


@pytest.mark.parametrize(
    ("spines", "other"),
    [
        (["A05-R01-DGX-01", "s2"], "`a05-r01-dgx-01` of pool gpu"),  # a host's name in other case
        (
            ["A05-IBLEAF-SU1-R1", "s2"],
            "switch `a05-ibleaf-su1-r1` of the compute fabric",
        ),  # a leaf's, in other case
    ],
)
def test_switch_names_differing_only_in_case_are_one_name(
    tmp_path: Path, spines: list[str], other: str
) -> None:
    """DNS, LLDP and OpenSM compare names without case: `SW-1` and `sw-1` were two inventory hosts and two
    config folders for what resolves to one switch."""

    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["fabrics"]["compute"]["topology"]["names"]["spine"] = {"names": spines}

    code, out = _validate(_variant(tmp_path, edit))
    assert code == 1 and f"switch name `{spines[0]}` of the compute fabric is also used by {other}" in out, (
        out
    )


def test_renamed_leaf_spine_spines_keep_the_spine_model(tmp_path: Path) -> None:
    """A leaf-spine fabric with `switch: sn2201, spine_switch: sn4600c` and site names for its spines: the
    spines are still SN4600C in the plan and the bill of materials (the blueprint says so), not SN2201s."""
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    def edit(d: dict) -> None:  # type: ignore[type-arg]
        d["fabrics"]["management"] = {
            "technology": "ethernet-1",
            "topology": {
                "kind": "leaf-spine",
                "switch": "sn2201",
                "spine_switch": "sn4600c",
                "names": {"spine": {"template": "mgmt-spine-{index:02}"}},
            },
        }

    _, cluster = load_and_resolve(_variant(tmp_path, edit))
    plan = build_plan(cluster)
    models = {(d.role, d.name.startswith("mgmt-spine-"), d.model) for d in plan.switches("management")}
    assert ("spine", True, "sn4600c") in models
    assert not any(role == "spine" and model != "sn4600c" for role, _, model in models)
    bom = {(b.item, b.model) for b in plan.bom}
    assert ("switch", "sn4600c") in bom


def test_switch_names_keep_the_sites_case(tmp_path: Path) -> None:
    """A site's upper-case switch names (issue 24: `R01-P1-IBLEAF-1`) reach the outputs as written; two
    names differing only in case are one name to DNS, LLDP and OpenSM and are refused."""
    from conftest import EXAMPLES, run_cli

    text = (EXAMPLES / "hdr-fat-tree-a100.yaml").read_text()
    named = text.replace(
        "      scalable_unit: 20\n",
        '      scalable_unit: 20\n      names:\n        leaf: {template: "R{su:02}-P1-IBLEAF-{rail}"}\n',
        1,
    )
    assert named != text
    bp = tmp_path / "upper.yaml"
    bp.write_text(named)
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "b"), "-q", "--only", "cabling")
    assert code == 0, out + err
    cables = (tmp_path / "b" / "cabling" / "cables.csv").read_text()
    assert "R01-P1-IBLEAF-1" in cables and "r01-p1-ibleaf" not in cables
    names = ", ".join([f"L{i}" for i in range(1, 16)] + ["l1"])  # 16 leaves; L1 and l1 are one name
    bp.write_text(
        named.replace('leaf: {template: "R{su:02}-P1-IBLEAF-{rail}"}', f"leaf: {{names: [{names}]}}")
    )
    code, out, err = run_cli("validate", str(bp))
    assert code in (1, 2) and "the same name twice (case ignored)" in out + err, out + err
