"""LLDP input is bounded by its neighbour entries, not only its bytes: a directory just past
MAX_LLDP_NEIGHBORS entries (each a few bytes) is refused at the file that crosses it, exit 2, before any
entry of it is compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from sn5600_lldp import BLUEPRINT
from vfy_plans import run_cli

from generator.verify import lldp
from generator.verify.lldp import MAX_LLDP_NEIGHBORS
from generator.verify.model import DiscoveryError


def _tiny_entries(path: Path, count: int) -> None:
    """``count`` neighbour entries of the ``-f json`` list shape, the smallest each can be."""
    path.write_text('{"lldp": {"interface": [' + ",".join(['{"swp1": {}}'] * count) + "]}}")


def test_entries_past_the_cap_are_refused_at_the_file(tmp_path: Path) -> None:
    _tiny_entries(tmp_path / "c-leaf-su1-r1.json", MAX_LLDP_NEIGHBORS + 1)  # 9.6 MB: under the byte limits
    code, out, err = run_cli("verify-cabling", str(BLUEPRINT), "--discovered", str(tmp_path))
    assert code == 2, out + err
    assert f"c-leaf-su1-r1.json: more than {MAX_LLDP_NEIGHBORS:,} LLDP neighbour entries" in err
    assert "Traceback" not in err


def test_the_cap_counts_the_entries_of_all_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lldp, "MAX_LLDP_NEIGHBORS", 10)
    _tiny_entries(tmp_path / "a.json", 5)
    _tiny_entries(tmp_path / "b.json", 5)
    assert len(lldp.read_lldp(tmp_path)) == 10  # at the cap: read
    _tiny_entries(tmp_path / "c.json", 1)
    with pytest.raises(DiscoveryError, match=r"c\.json: more than 10 LLDP neighbour entries"):
        lldp.read_lldp(tmp_path)


def test_the_cap_holds_the_largest_fabric_seen_from_both_ends() -> None:
    from generator.verify.ibnetdiscover import MAX_SEEN

    assert MAX_LLDP_NEIGHBORS >= 2 * MAX_SEEN
