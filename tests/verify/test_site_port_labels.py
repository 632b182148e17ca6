"""Per-port site labels (``pools[].ports[].label``): a site that calls its adapters HCA-1, HCA-2, HCA-5,
HCA-6 while the RDMA devices are mlx5_0, mlx5_1, mlx5_4, mlx5_5. Verification reads ``<host> HCA-5`` as the
declared device (a crossed rail is found, even where most hosts are crossed alike and a learned rule would
call the crossing the rule), cable labels print the site's label, NCCL keeps the RDMA names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError
from vfy_plans import FIXTURES, plan_of, run_cli

from blueprints.models.nodes import NodePool
from generator.emit.cabling.rows import cable_rows
from generator.emit.ibnetdiscover import render_netfile

BLUEPRINT = FIXTURES / "site-labels.yaml"
LABEL = {"mlx5_0": "HCA-1", "mlx5_1": "HCA-2", "mlx5_4": "HCA-5", "mlx5_5": "HCA-6"}
CROSSED = {"mlx5_4": "HCA-6", "mlx5_5": "HCA-5"}  # rails 3 and 4 swapped on the host


def _site_dump(tmp_path: Path, crossed_hosts: set[str], labels: dict[str, str] = LABEL) -> Path:
    """The planned fabric as ibnetdiscover prints it, each host naming its adapters by the site's labels
    (``gpu003 HCA-5``); on ``crossed_hosts`` the HCA-5 and HCA-6 cables are swapped."""

    def site_name(m: re.Match[str]) -> str:
        host, dev = m.group(1), m.group(2)
        return f'"{host} {(CROSSED if host in crossed_hosts else {}).get(dev, labels[dev])}"'

    text = re.sub(r'"(gpu\d{3}) (mlx5_\d+)"', site_name, render_netfile(plan_of(BLUEPRINT)))
    assert "mlx5_" not in re.sub(r'"[HS]-[^"]*"', "", text)  # every description uses the site's labels
    path = tmp_path / "site.topo"
    path.write_text(text)
    return path


def _verify(blueprint: Path, dump: Path) -> tuple[int, dict]:
    code, out, err = run_cli("verify-cabling", str(blueprint), "--discovered", str(dump), "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def test_declared_labels_verify_a_site_dump_and_find_a_crossed_rail(tmp_path: Path) -> None:
    code, clean = _verify(BLUEPRINT, _site_dump(tmp_path, set()))
    assert code == 0 and clean["summary"]["ok"] == 32 and not clean["warnings"], clean
    code, report = _verify(BLUEPRINT, _site_dump(tmp_path, {"gpu003"}))
    assert code == 1
    wrong = {(r["a"]["device"], r["a"]["port"], r["a"]["sheet_port"]) for r in report["results"]}
    assert wrong == {("gpu003", "mlx5_4/1", "HCA-5"), ("gpu003", "mlx5_5/1", "HCA-6")}
    assert {r["status"] for r in report["results"]} == {"miswired"}
    assert report["summary"]["ok"] == 30 and not report["unidentified"]


def test_a_declared_label_wins_over_the_rule_most_hosts_follow(tmp_path: Path) -> None:
    """Three of four hosts crossed alike: learned from the hosts, HCA-5 would mean mlx5_5 and the one correct
    host would be the miswired one; declared, the three crossed hosts are."""
    dump = _site_dump(tmp_path, {"gpu001", "gpu002", "gpu004"})
    _, report = _verify(BLUEPRINT, dump)
    wrong = sorted({r["a"]["device"] for r in report["results"] if r["status"] == "miswired"})
    assert wrong == ["gpu001", "gpu002", "gpu004"], report["results"]
    undeclared = tmp_path / "undeclared.yaml"
    undeclared.write_text(re.sub(r", label: HCA-\d", "", BLUEPRINT.read_text()))
    _, learned = _verify(undeclared, dump)
    assert sorted({r["a"]["device"] for r in learned["results"]}) == ["gpu003"]  # the other reading


def test_cable_labels_print_the_site_label_and_nccl_keeps_rdma_names(tmp_path: Path) -> None:
    plan = plan_of(BLUEPRINT)
    ends = [e for row in cable_rows(plan.cluster, plan) for e in (row.a, row.b) if e.kind == "node"]
    assert {e.label_port for e in ends} == {"HCA-1", "HCA-2", "HCA-5", "HCA-6"}
    assert any(e.label.endswith("-gpu003-HCA-5") for e in ends)
    code, _, err = run_cli("generate", str(BLUEPRINT), "-o", str(tmp_path / "out"))
    assert code == 0, err
    env = (tmp_path / "out" / "nccl" / "gpu" / "nccl.env").read_text()
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_4:1,mlx5_5:1\n" in env and "HCA-" not in env


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        (
            [{"role": "compute", "rdma": "mlx5_0", "label": "HCA-1"},
             {"role": "compute", "rdma": "mlx5_1", "label": "hca-1"}],
            "names two adapters",
        ),
        (
            [{"role": "compute", "rdma": "mlx5_0", "label": "mlx5_1"},
             {"role": "compute", "rdma": "mlx5_1"}],
            "another port's RDMA device name",
        ),
    ],
)  # fmt: skip
def test_a_label_must_name_one_adapter(ports: list[dict], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        NodePool.model_validate({"name": "gpu", "count": 1, "server": "pcie-h100-8", "ports": ports})


def test_both_ports_of_one_adapter_may_share_a_label() -> None:
    ports = [
        {"role": "storage", "rdma": "mlx5_2", "label": "HCA-3"},
        {"role": "inband", "rdma": "mlx5_2", "label": "HCA-3"},
    ]
    NodePool.model_validate({"name": "gpu", "count": 1, "server": "pcie-h100-8", "ports": ports})
