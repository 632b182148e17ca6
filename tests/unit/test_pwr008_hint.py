"""PWR008's hint names only keys the compute fabric's topology has (a dragonfly has no scalable_unit)."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO

from generator.pipeline import check

FAT_TREE = REPO / "tests" / "rules" / "fixtures" / "PWR008" / "fail.yaml"
# 36 NVL72 trays (4 compute ports each) on a dragonfly of 4 routers × 8 terminal ports a group: groups of
# 4 × 2 = 8 nodes, so the first 18-tray domain is racked in three racks
DRAGONFLY = """\
apiVersion: cluster-blueprint/v1
name: pwr008-dragonfly
site: {rows: 1, racks_per_row: 16, rack: {units: 48, power_kw: 140}}
pools:
  - name: gpu
    count: 36
    server: gb200-nvl72-tray
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: dragonfly, switch: qm9700, p: 8, a: 4, h: 4, groups: 5}
    subnet_manager: {kind: opensm, ha: true}
software:
  nccl: "2.27.3"
"""


def _hints(path: Path) -> list[str]:
    return [f.hint or "" for f in check(path).findings if f.rule == "PWR008"]


def test_dragonfly_hint_names_its_own_keys(tmp_path: Path) -> None:
    path = tmp_path / "dragonfly.yaml"
    path.write_text(DRAGONFLY)
    hints = _hints(path)
    assert hints, "the dragonfly fixture no longer racks a domain apart"
    for hint in hints:
        assert "scalable_unit" not in hint  # the dragonfly schema refuses the key
        assert "`a`" in hint and "`p`" in hint and "4 × 2 = 8" in hint and "multiple of 18" in hint


def test_dragonfly_hint_followed_keeps_domains_whole(tmp_path: Path) -> None:
    """The hint's advice works: 9 routers of 2 nodes make 18-node groups, one domain each."""
    path = tmp_path / "dragonfly.yaml"
    path.write_text(DRAGONFLY.replace("p: 8, a: 4, h: 4, groups: 5", "p: 8, a: 9, h: 2, groups: 2"))
    assert _hints(path) == []


def test_fat_tree_hint_names_scalable_unit() -> None:
    hints = _hints(FAT_TREE)
    assert hints and all("scalable_unit a multiple of 18" in h for h in hints)
