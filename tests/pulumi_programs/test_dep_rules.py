"""DEP rules: each fires on its fail fixture (and no other DEP rule does), never on its pass fixture;
and the deployment facts they share with the Pulumi emitter."""

from __future__ import annotations

from pathlib import Path

import pytest

from blueprints.catalog import default_catalog
from generator.deploy.address_plan import address_plan
from generator.deploy.managed_storage import size_managed
from generator.deploy.rdma_layout import efa_layout, rdma_domains
from generator.load import load_file
from generator.pipeline import check
from generator.resolve import resolve
from generator.rules.registry import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "rules" / "fixtures"
DEP_RULES = [r for r in all_rules() if r.id.startswith("DEP")]


def test_every_dep_rule_has_fixtures_and_docs() -> None:
    assert len(DEP_RULES) >= 11
    for rule in DEP_RULES:
        assert (FIXTURES / rule.id / "pass.yaml").is_file() and (
            FIXTURES / rule.id / "fail.yaml"
        ).is_file(), rule.id
        assert rule.doc() and rule.title and rule.fix, rule.id


@pytest.mark.parametrize("rule", DEP_RULES, ids=lambda r: r.id)
def test_fail_fixture_fires_only_that_rule(rule) -> None:
    findings = check(FIXTURES / rule.id / "fail.yaml").findings
    fired = {f.rule for f in findings if f.rule.startswith("DEP")}
    assert fired == {rule.id}, [f.message for f in findings]
    mine = [f for f in findings if f.rule == rule.id]
    assert any(f.severity == rule.severity for f in mine)
    assert all(f.location is not None and f.location.line > 0 for f in mine)


@pytest.mark.parametrize("rule", DEP_RULES, ids=lambda r: r.id)
def test_pass_fixture_is_clean(rule) -> None:
    findings = check(FIXTURES / rule.id / "pass.yaml").findings
    assert not [f for f in findings if f.rule.startswith("DEP")], [f.message for f in findings]


def test_fat_tree_on_a_cloud_says_why() -> None:
    findings = check(FIXTURES / "DEP002" / "fail.yaml").findings
    msg = next(f for f in findings if f.rule == "DEP002")
    assert (
        "fat-tree" in msg.message
        and "azure" in msg.message
        and msg.path == ("fabrics", "compute", "topology")
    )


def test_efa_layout_follows_aws() -> None:
    cloud = default_catalog().cloud["aws"]
    p5 = efa_layout(cloud["p5.48xlarge"], efa_only_cards=True)
    assert len(p5) == 32
    assert (p5[0].network_card_index, p5[0].device_index, p5[0].interface_type) == (0, 0, "efa")
    assert {(i.device_index, i.interface_type) for i in p5[1:]} == {(1, "efa-only")}
    p4d = efa_layout(cloud["p4d.24xlarge"], efa_only_cards=False)
    assert [(i.network_card_index, i.interface_type) for i in p4d] == [
        (0, "efa"),
        (1, "efa"),
        (2, "efa"),
        (3, "efa"),
    ]


def test_managed_storage_sizing() -> None:
    ms = default_catalog().managed_storage
    fsx = ms["aws"]["lustre"]
    # EFA-enabled FSx grows in tier-specific steps; 100 TiB at 50 GB/s needs the 500 tier.
    s = size_managed(fsx, 100, 50, efa=True)
    assert (s.tier, s.size) == (500, 105600) and s.throughput_gbytes >= 50
    # Without EFA the SSD steps are 2400 GiB; the smallest tier when no throughput is asked.
    s = size_managed(fsx, 10, None, efa=False)
    assert (s.tier, s.size) == (125, 12000)
    # Smallest size when nothing is asked.
    assert size_managed(fsx, None, None, efa=False).size == 1200
    # GCP Managed Lustre: a throughput beyond every tier at this capacity grows the capacity.
    s = size_managed(ms["gcp"]["lustre"], 9, 100, efa=False)
    assert s.tier == 1000 and s.throughput_gbytes >= 100 and s.size % 9000 == 0
    assert any("raised" in n for n in s.notes)
    # Elastic NFS services provision no throughput and say so.
    s = size_managed(ms["oci"]["nfs"], 5, 10, efa=False)
    assert s.tier == 0 and any("not guaranteed" in n for n in s.notes)


def test_rdma_domains_split_evenly() -> None:
    assert rdma_domains(100, 100) == [100]
    assert rdma_domains(150, 100) == [75, 75]
    assert rdma_domains(301, 100) == [76, 75, 75, 75]
    assert rdma_domains(7, None) == [7]


def test_maas_address_plan_has_one_subnet_per_rail() -> None:
    cluster = resolve(load_file(Path(__file__).resolve().parents[2] / "examples" / "maas-onprem-h100.yaml"))
    plan = address_plan(cluster)
    assert not plan.problems
    rails = [s for s in plan.subnets if s.name.startswith("compute-rail")]
    assert [s.name for s in rails] == [f"compute-rail{r}" for r in range(8)]
    assert len({s.cidr for s in rails}) == 8 and all(s.cidr.endswith("/19") for s in rails)


# EC2 User Guide, "Find and purchase Capacity Blocks": durations in 1-day increments up to 14 days, then
# 7-day increments up to 182 days; up to 64 instances a block. Written out here, not computed by the rule.
SOLD_DAYS = [*range(1, 15), *range(21, 183, 7)]


@pytest.mark.parametrize("days", [1, 14, 15, 20, 21, 28, 30, 182])
def test_capacity_block_lengths_aws_sells(days: int, tmp_path: Path) -> None:
    text = (
        (FIXTURES / "DEP006" / "pass.yaml")
        .read_text()
        .replace("capacity_hours: 168", f"capacity_hours: {days * 24}")
    )
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    mine = [f for f in check(path).findings if f.rule == "DEP006"]
    assert bool(mine) == (days not in SOLD_DAYS), [f.message for f in mine]
    assert all(f.path == ("deployment", "cloud", "capacity_hours") for f in mine)


@pytest.mark.parametrize("count", [64, 65])
def test_a_capacity_block_holds_64_instances(count: int, tmp_path: Path) -> None:
    text = (FIXTURES / "DEP006" / "pass.yaml").read_text()
    assert "count: 4" in text
    path = tmp_path / "bp.yaml"
    path.write_text(text.replace("count: 4", f"count: {count}"))
    mine = [f for f in check(path).findings if f.rule == "DEP006"]
    assert bool(mine) == (count > 64), [f.message for f in mine]


def test_azure_reservation_is_refused_with_the_reason(tmp_path: Path) -> None:
    """A Uniform scale set takes a capacity reservation group only with singlePlacementGroup false (Microsoft
    Learn, capacity reservation for Uniform scale sets, Limitations); the program's InfiniBand scale sets
    keep one placement group, so Azure rejected what validate and generate passed."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    doc = yaml.load((Path(__file__).resolve().parents[2] / "examples" / "azure-ndh100v5.yaml").read_text())
    doc["deployment"]["cloud"].update(
        capacity="reservation",
        reservation_id="/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Compute/capacityReservationGroups/crg1",
    )
    path = tmp_path / "bp.yaml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    mine = [f for f in check(path).findings if f.rule == "DEP006"]
    assert len(mine) == 1 and mine[0].severity.name == "ERROR"
    assert "singlePlacementGroup" in mine[0].message and mine[0].path == ("deployment", "cloud", "capacity")


@pytest.mark.parametrize(
    ("share", "refused"), [("sh", True), ("scratch--a", True), ("scratch-", True), ("scratch-a", False)]
)
def test_azure_nfs_share_names_are_ones_azure_takes(share: str, refused: bool, tmp_path: Path) -> None:
    """Azure Files names a share with 3-63 lowercase letters, digits and hyphens, starting and ending with a
    letter or digit, no two hyphens in a row; the blueprint's storage name becomes the share's."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    doc = yaml.load((Path(__file__).resolve().parents[2] / "examples" / "azure-ndh100v5.yaml").read_text())
    doc["deployment"]["cloud"]["managed_storage"] = "nfs"
    doc["storage"][0]["name"] = share
    path = tmp_path / "bp.yaml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    mine = [f for f in check(path).findings if f.rule == "DEP012"]
    assert bool(mine) == refused, [f.message for f in mine]
