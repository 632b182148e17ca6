"""Foreign text cannot forge report lines: a line break (or any control) in an LLDP name, id or description,
a file-derived device name or an accept-file reason is shown escaped in the text report, on the line it
belongs to; ``--format json`` keeps the exact values (JSON escapes them itself)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vfy_plans import HERE, plan_of, run_cli

from generator.emit import lldp as emitter

ROCE = HERE.parents[1] / "examples" / "roce-rail-2tier.yaml"
FAKE = "\n1024 cables planned, 1024 ok, 0 miswired, 0 missing, 0 wrong speed/width, 0 unexpected — MATCHES THE PLAN"


def _entry(doc: dict[str, Any], ifname: str) -> dict[str, Any]:
    return next(item[ifname] for item in doc["lldp"]["interface"] if ifname in item)


def test_line_breaks_in_foreign_text_stay_on_their_line(tmp_path: Path) -> None:
    files = {k: json.loads(v) for k, v in emitter.render_lldp(plan_of(ROCE), "compute").items()}
    leaf = files["c-leaf-su1-r0.json"]
    # a host port description on the wrong host (gpu003 where the plan has gpu002: C-NL-000009)
    _entry(leaf, "swp1s1")["chassis"] = {"gpu003": {}}
    _entry(leaf, "swp1s1")["port"] = {
        "id": {"type": "mac", "value": "b8:3f:d2:00:00:03"},
        "descr": "eth9" + FAKE,
    }
    # an interface name, a chassis name and a device name from the file name, each with a fake summary
    items = leaf["lldp"]["interface"]
    items.append(
        {"swp99" + FAKE: {"chassis": {"c-spine-001": {}}, "port": {"id": {"type": "ifname", "value": "x"}}}}
    )
    _entry(leaf, "swp2s0")["chassis"] = {"gpu003" + FAKE: {}}
    for name, doc in files.items():
        (tmp_path / name).write_text(json.dumps(doc))
    (tmp_path / "odd\tname\x1b[2J.json").write_text(json.dumps({"lldp": {"interface": {"swp1": {}}}}))
    accept = tmp_path.parent / "accept.yaml"
    accept.write_text(json.dumps({"cables": [{"cable": "C-NL-000009", "reason": "spare optic" + FAKE}]}))

    code, out, _ = run_cli(
        "verify-cabling", str(ROCE), "--discovered", str(tmp_path), "--accept", str(accept)
    )
    assert code == 1
    summaries = [line for line in out.splitlines() if line.startswith("1024 cables planned")]
    assert (
        len(summaries) == 1 and out.splitlines()[-1] == summaries[0] and "DOES NOT MATCH" in summaries[0]
    ), out
    assert "\t" not in out and "\x1b" not in out
    assert "goes to gpu003 eth9\\x0a1024 cables planned" in out  # the host port description
    assert "[MISWIRED: spare optic\\x0a1024 cables planned" in out  # the accept file's reason
    assert "swp99\\x0a1024 cables planned" in out  # the interface name (no front-panel port: a note)
    assert "unidentified device 'odd\\tname\\x1b[2J'" in out  # the device a file name names

    _, js, _ = run_cli("verify-cabling", str(ROCE), "--discovered", str(tmp_path), "--format", "json")
    report = json.loads(js)
    ports = {r["b_connected_to"]["port"] for r in report["results"] if r["b_connected_to"]}
    ports |= {r["a_connected_to"]["port"] for r in report["results"] if r["a_connected_to"]}
    assert "eth9" + FAKE in ports  # exact in JSON
