"""A host's LLDP file lists every port of the host, whichever fabric cables it (fixtures/lldp-sn5600/mgmt:
real lldpd output of a RoCE compute fabric and an Ethernet management fabric). The links of the fabrics
not verified are left out with one counted note, not reported as links missing from the plan."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sn5600_lldp import FIXTURES, TWO_FABRICS
from vfy_plans import run_cli


def _verify(path: Path, fabric: str) -> tuple[int, str, dict[str, Any]]:
    args = ("verify-cabling", str(TWO_FABRICS), "--discovered", str(path), "--fabric", fabric)
    code, out, err = run_cli(*args)
    _, js, _ = run_cli(*args, "--format", "json")
    return code, out + err, json.loads(js)


@pytest.mark.parametrize(
    ("fabric", "other", "left_out"), [("compute", "management", 24), ("management", "compute", 64)]
)
def test_a_correct_build_matches_each_fabric(tmp_path: Path, fabric: str, other: str, left_out: int) -> None:
    code, out, report = _verify(FIXTURES / "mgmt", fabric)
    assert code == 0, out
    assert report["summary"]["unexpected"] == 0
    (note,) = [w for w in report["warnings"] if "other fabrics" in w]
    assert note.startswith(
        f"{left_out} LLDP neighbour entries between ports of other fabrics left out ({other}: "
    )


def _interfaces(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["lldp"]["interface"]  # type: ignore[no-any-return]


def test_a_compute_cable_in_a_management_switch_is_still_reported(tmp_path: Path) -> None:
    """gpu001's rail-0 cable, planned on c-leaf-su1-r0 swp1s0, lands in m-leaf-su1-01 swp40: the compute fabric
    misses it, the management fabric has a link it does not plan; neither calls it correct."""
    lldp = shutil.copytree(FIXTURES / "mgmt", tmp_path / "lldp")
    host, leaf, mleaf = (
        json.loads((lldp / f"{d}.json").read_text()) for d in ("gpu001", "c-leaf-su1-r0", "m-leaf-su1-01")
    )
    (entry,) = [i["ens0np0"] for i in _interfaces(host) if "ens0np0" in i]
    entry["chassis"] = {"m-leaf-su1-01": next(iter(entry["chassis"].values()))}
    entry["port"]["descr"] = "swp40"
    (seen,) = [i for i in _interfaces(leaf) if "swp1s0" in i]
    _interfaces(leaf).remove(seen)
    _interfaces(mleaf).append({"swp40": seen["swp1s0"]})
    for name, doc in (("gpu001", host), ("c-leaf-su1-r0", leaf), ("m-leaf-su1-01", mleaf)):
        (lldp / f"{name}.json").write_text(json.dumps(doc))

    code, out, report = _verify(lldp, "compute")
    assert code == 1, out
    assert [(r["status"], r["cable"]) for r in report["results"]] == [("missing", "C-NL-000001")]
    code, out, report = _verify(lldp, "management")
    assert code == 1, out
    (extra,) = report["results"]
    assert extra["status"] == "unexpected"
    assert "m-leaf-su1-01 port 40" in extra["message"] and "gpu001 ens0np0" in extra["message"]
