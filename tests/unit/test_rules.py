"""The rule set: ids and docs, a pass and a fail fixture per rule, explain, output formats, suppression."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from generator.findings import Severity
from generator.pipeline import check
from generator.rules.registry import all_rules, rule_by_id

FIXTURES = REPO / "tests" / "rules" / "fixtures"
RULE_IDS = [r.id for r in all_rules()]
SUPPRESSIBLE = [r.id for r in all_rules() if r.suppressible]
ID_RE = re.compile(r"^[A-Z]{3}\d{3}$")
# performance and design rule categories: the issue asks for numbers in every one of their messages
NUMBERED = ("GPU", "NET", "TOP", "PWR", "WRK", "PRF")


def test_rules_are_discovered() -> None:
    prefixes = {i[:3] for i in RULE_IDS}
    assert {"GPU", "NET", "TOP", "PWR", "WRK"} <= prefixes
    assert len(RULE_IDS) == len(set(RULE_IDS))


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_rule_metadata(rule_id: str) -> None:
    rule = rule_by_id(rule_id)
    assert rule is not None
    assert ID_RE.match(rule.id)
    assert isinstance(rule.severity, Severity)
    for attr in ("title", "rationale", "fix"):
        assert getattr(rule, attr).strip(), f"{rule_id}.{attr} is empty"
    assert len(rule.doc()) > 40, f"{rule_id} needs a docstring (the explain text)"
    # one rule per module, named after its id, in the folder of its category
    module = rule.__module__.split(".")
    assert module[-1].startswith(rule.id.lower() + "_"), rule.__module__
    assert module[-2] == rule.id[:3].lower(), rule.__module__


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_fail_fixture_triggers_rule(rule_id: str) -> None:
    path = FIXTURES / rule_id / "fail.yaml"
    assert path.is_file(), f"missing {path}"
    mine = [f for f in check(path).findings if f.rule == rule_id]
    assert mine, f"{path} does not trigger {rule_id}"
    for f in mine:
        assert f.location is not None and f.location.file == str(path)
        assert f.location.line > 1, f"{rule_id} finding not located in the fixture: {f}"
        assert f.path, f"{rule_id} finding has no path into the blueprint"
        if rule_id[:3] in NUMBERED:
            assert re.search(r"\d", f.message), f"{rule_id} message carries no numbers: {f.message}"


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_pass_fixture_does_not_trigger_rule(rule_id: str) -> None:
    path = FIXTURES / rule_id / "pass.yaml"
    assert path.is_file(), f"missing {path}"
    fired = [f for f in check(path).findings if f.rule == rule_id]
    assert not fired, fired


@pytest.mark.parametrize("rule_id", RULE_IDS)
def test_explain(rule_id: str) -> None:
    rule = rule_by_id(rule_id)
    assert rule is not None
    code, out, _ = run_cli("explain", rule_id.lower())
    assert code == 0
    flat = " ".join(out.split())
    assert rule_id in out and " ".join(rule.title.split()) in flat
    assert " ".join(rule.doc().split()[:8]) in flat
    assert " ".join(rule.fix.split()) in flat


def test_explain_unknown_rule_suggests() -> None:
    code, _, err = run_cli("explain", "NET0033")
    assert code == 2 and "did you mean" in err


def test_explain_list_names_every_rule() -> None:
    code, out, _ = run_cli("explain", "--list")
    assert code == 0
    assert all(i in out for i in RULE_IDS)


# ---- output formats and exit codes ------------------------------------------------------------

ERRORS = FIXTURES / "NET005" / "fail.yaml"


def only(rule_id: str, tmp_path: Path, keep_suppression: bool = False) -> Path:
    """A copy of ``rule_id``'s fail fixture with every other rule suppressed (so other rules cannot interfere)."""
    # rules that cannot be suppressed (PLN002, NET020, NET021) are left out: suppressing them only warns
    others = [r for r in SUPPRESSIBLE if r != rule_id or keep_suppression]
    lines = "".join(f"  - rule: {r}\n    reason: isolate {rule_id} in this test\n" for r in others)
    path = tmp_path / f"only-{rule_id}.yaml"
    path.write_text((FIXTURES / rule_id / "fail.yaml").read_text() + "suppress:\n" + lines)
    return path


def test_isolated_fixtures(tmp_path: Path) -> None:
    assert [(f.rule, f.severity) for f in check(only("TOP005", tmp_path)).findings] == [
        ("TOP005", Severity.WARNING)
    ]
    assert [(f.rule, f.severity) for f in check(only("TOP002", tmp_path)).findings] == [
        ("TOP002", Severity.INFO)
    ]


def test_json_format_shape(tmp_path: Path) -> None:
    warning_only = only("TOP005", tmp_path)
    code, out, _ = run_cli("validate", str(warning_only), str(ERRORS), "--format", "json")
    assert code == 1
    report = json.loads(out)
    assert set(report) == {"version", "files"}
    by_file = {Path(f["file"]).name: f for f in report["files"]}
    assert by_file[warning_only.name]["valid"] is True and by_file["fail.yaml"]["valid"] is False
    (finding,) = by_file[warning_only.name]["findings"]
    assert set(finding) == {"rule", "severity", "file", "line", "column", "path", "message", "hint"}
    assert finding["rule"] == "TOP005" and finding["severity"] == "warning"
    assert finding["path"] == "fabrics.compute.topology.oversubscription"
    text = warning_only.read_text().splitlines()
    assert text[finding["line"] - 1][finding["column"] - 1 :].startswith("oversubscription:")
    assert "2:1" in finding["message"] and finding["hint"]


def test_sarif_format_shape() -> None:
    code, out, _ = run_cli("validate", str(ERRORS), "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(RULE_IDS)
    results = [r for r in run["results"] if r["ruleId"] == "NET005"]
    assert results and results[0]["level"] == "error"
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] > 1 and region["startColumn"] >= 1
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(ERRORS)


def test_fail_on_levels(tmp_path: Path) -> None:
    warning_only, info_only = only("TOP005", tmp_path), only("TOP002", tmp_path)
    assert run_cli("validate", str(warning_only))[0] == 0
    assert run_cli("validate", str(warning_only), "--fail-on", "warning")[0] == 1
    assert run_cli("validate", str(info_only), "--fail-on", "warning")[0] == 0
    assert run_cli("validate", str(info_only), "--fail-on", "info")[0] == 1
    assert run_cli("validate", str(ERRORS))[0] == 1


def test_suppress_with_reason_removes_finding(tmp_path: Path) -> None:
    path = only("TOP005", tmp_path, keep_suppression=True)
    assert check(path).findings == []
    code, out, err = run_cli("validate", str(path), "--fail-on", "warning")
    assert code == 0, out + err


def test_suppress_without_reason_is_a_schema_error(tmp_path: Path) -> None:
    fixture = FIXTURES / "TOP005" / "fail.yaml"
    path = tmp_path / "unreasoned.yaml"
    path.write_text(fixture.read_text() + "suppress:\n  - rule: TOP005\n")
    code, out, _ = run_cli("validate", str(path), "--format", "json")
    assert code == 2
    (finding,) = json.loads(out)["files"][0]["findings"]
    assert finding["rule"] == "SCHEMA" and finding["path"] == "suppress[0].reason"
    assert finding["line"] == len(fixture.read_text().splitlines()) + 2


def test_suppressing_an_unknown_rule_warns(tmp_path: Path) -> None:
    path = tmp_path / "unknown.yaml"
    path.write_text(
        (FIXTURES / "TOP002" / "fail.yaml").read_text()
        + "suppress:\n  - rule: ZZZ999\n    reason: does not exist\n"
    )
    assert "SUP001" in {f.rule for f in check(path).findings}


# ---- the numbers in the messages -------------------------------------------------------------

MESSAGES = {
    "GPU001": "uses NVLink 4.0 (18 links, 900 GB/s per GPU) but the interconnect says NVLink 3.0 (600 GB/s)",
    "GPU004": "8 × 141 GB = 1,128 GB of GPU memory per node, 1.76× the article's 640 GB",
    "NET001": "400 Gb/s = 50 GB/s needs PCIe Gen5 x16 (63 GB/s per direction); the slot is PCIe Gen4 x16 = 31.5 GB/s",
    "NET002": "8 GPUs but 4 compute NIC ports per node",
    "NET003": "25 GB/s of network injection per GPU vs 300 GB/s NVLink 3.0 per direction: 12.0:1",
    "TOP001": "832 endpoints exceed what 2 tiers of `qm8700` (radix k = 40 at 200 Gb/s, 20 node ports per leaf) carry: k²/2 = 800; 3 tiers carry k × 16 leaves per pod × 20 down = 12,800",
    "TOP003": "a scalable unit of 40 nodes needs 40 down ports per rail leaf; `qm9700` has 64 ports at 400 Gb/s, 32 down and 32 up",
    "TOP005": "oversubscribed 2:1 for training (no workload given): cross-leaf collectives get 50% of line rate",
    "TOP007": "34 groups but a·h + 1 = 8·4 + 1 = 33",
    "TOP008": "p + a + h − 1 = 16 + 32 + 16 − 1 = 63 ports; `sn4700` has 32 at 400 Gb/s",
    "TOP009": "68 node ports but p·a·groups = 4·8·2 = 64 terminal ports",
    "TOP010": "torus 4 × 4 = 16 vertices but 15 nodes",
    "TOP011": "torus 4 × 4 needs 4 compute ports per node; the server has 2",
    "TOP012": "2^4 = 16 switches × 2 = 32 node slots but 30 nodes",
    "TOP013": "5 nodes × 8 ports + 2 neighbour links = 42 ports; `qm8700` has 40",
    "PWR001": "4 × dgx-h100 at 10.2 kW = 40.8 kW per rack, over the 40 kW budget",
    "PWR002": "6 × 8U = 48U per rack but a rack has 48U − 2U reserved = 46U",
    "WRK002": "16 B/param × 70B = 1,120 GB + activations 5.3 GB per GPU × 8 = 42.1 GB = 1,162 GB; the cluster has 8 × 80 GB = 640 GB",
    "WRK003": "810 GB weights + 34.0 GB KV cache = 844 GB; the largest node (`gpu`) has 8 × 80 GB = 640 GB",
    "WRK004": "tensor 8 × pipeline 2 × data 4 = 64 but the cluster has 32 GPUs",
    "NET027": "2 management leaves relay DHCP to 10.10.2.1 (the MAAS rack controller's address), which is in none of the networks the generated management fabric routes (its VLAN subnets 10.253.0.0/29, 10.253.0.8/29, and the switch loopbacks)",
    "WRK005": "TP 1 × PP 1 × DP 8 (given, sharding none) holds 113.1 GB per GPU; the NVIDIA H100 SXM5 80GB has 80 GB",
}


@pytest.mark.parametrize("rule_id", sorted(MESSAGES))
def test_message_numbers(rule_id: str) -> None:
    messages = [f.message for f in check(FIXTURES / rule_id / "fail.yaml").findings if f.rule == rule_id]
    assert any(MESSAGES[rule_id] in m for m in messages), messages


def test_clos_capacity_matches_the_reference_table() -> None:
    from generator.rules.sizing import capacity_formula, clos_capacity, leaf_split, pod_leaves

    # folded-Clos worked examples (k²/2 and k³/4; Al-Fares et al., SIGCOMM 2008)
    for k, two, three in ((40, 800, 16_000), (64, 2_048, 65_536), (144, 10_368, 746_496)):
        assert clos_capacity(k, 2, k // 2) == two
        assert clos_capacity(k, 3, k // 2) == three
        assert capacity_formula(k, 3, k // 2) == f"k³/4 = {three:,}"
    # 42 node ports at 2:1 need 21 uplinks (the builder cables 21; k − down = 22 would leave one idle)
    assert leaf_split(64, "2:1") == (42, 21)
    assert clos_capacity(64, 2, 42) == 64 * 42
    # rail-optimised pods hold whole scalable units: 6 rails → 30 of a 64-port spine's 32 down ports
    assert pod_leaves(64, 6) == 30 and clos_capacity(64, 3, 32, rails=6) == 64 * 30 * 32


def test_dragonfly_test_vectors_pass_the_rules(tmp_path: Path) -> None:
    """Kim et al. balanced vectors (h, p, a, g, N) are clean for TOP006–TOP009 with N terminals attached."""
    for h, p, a, g, n in ((2, 2, 4, 9, 72), (4, 4, 8, 33, 1056)):
        path = tmp_path / f"df{h}.yaml"
        path.write_text(
            "apiVersion: cluster-blueprint/v1\nname: df\nsite: {rows: 40, racks_per_row: 40}\n"
            f"pools:\n  - name: n\n    count: {n}\n    spec:\n      gpu: l40s\n      gpus: 1\n"
            "      gpu_interconnect: pcie4\n      pcie_gen: 4\n      power_kw: 0.8\n      rack_units: 1\n"
            "      nics: [{purpose: compute, model: cx7, count: 1, speed_gbps: 200}]\n"
            "fabrics:\n  compute:\n    technology: roce-v2-200\n    lossless: {pfc: true, ecn: true}\n"
            f"    topology: {{kind: dragonfly, switch: sn5600, p: {p}, a: {a}, h: {h}, groups: {g}}}\n"
        )
        fired = {f.rule for f in check(path).findings}
        assert not fired & {"TOP006", "TOP007", "TOP008", "TOP009"}, fired


def test_workload_memory_factors() -> None:
    from blueprints.catalog.workload import memory_need, workload_factors

    f = workload_factors()
    assert memory_need(70e9, "pretrain", "bf16", 4096).weights == pytest.approx(16 * 70e9)  # ZeRO 16 B/param
    assert memory_need(70e9, "full-finetune", "fp32", 4096).weights == pytest.approx(16 * 70e9)
    assert memory_need(70e9, "lora", "bf16", 4096).weights == pytest.approx(2 * 70e9)
    assert 0.5 <= memory_need(70e9, "qlora", "int4", 4096).weight_bytes_per_param <= 0.6
    inf = memory_need(70e9, "inference", "fp8", 4096)
    assert inf.weights == pytest.approx(70e9) and inf.activations_per_gpu == 0 and inf.kv_cache > 0
    hidden, layers = f.shape(175e9)
    assert hidden == pytest.approx(12288, rel=0.01) and layers == pytest.approx(96, rel=0.01)  # GPT-3 175B
    assert [f.size_class(p).scope for p in (6.9e9, 7e9, 70e9, 70.1e9)] == ["gpu", "node", "node", "nodes"]


def test_advice_thresholds_are_the_articles() -> None:
    from blueprints.catalog.advice import advice

    a = advice()
    assert (a.max_gpus_per_server, a.node_memory_class_gb) == (8, 640)
    assert a.topology_scale["fat-tree"].holds(99) and not a.topology_scale["fat-tree"].holds(1001)
    assert a.topology_scale["dragonfly"].holds(1001) and not a.topology_scale["dragonfly"].holds(99)


# ---- robustness: no rule crashes on odd but schema-valid blueprints ----------------------------


def _rules_of_this_issue() -> list[type]:
    return [r for r in all_rules() if r.id[:3] in ("GPU", "NET", "TOP", "PWR", "WRK")]


def test_rules_never_crash_on_generated_blueprints() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from blueprints.catalog import default_catalog
    from generator.findings import BlueprintError
    from generator.load import load_text
    from generator.resolve import resolve
    from generator.rules.base import RuleContext

    cat = default_catalog()
    servers = sorted(k for k in cat.servers)
    switches = sorted(cat.switches)
    techs = sorted(cat.fabrics)
    topologies = st.one_of(
        st.builds(
            lambda sw, t, r, su, g, o: {
                "kind": "fat-tree",
                "switch": sw,
                "tiers": t,
                "rail_optimized": r,
                "scalable_unit": su,
                "growth_nodes": g,
                "oversubscription": o,
            },
            st.sampled_from(switches),
            st.sampled_from([2, 3]),
            st.booleans(),
            st.none() | st.integers(1, 80),
            st.none() | st.integers(1, 5000),
            st.sampled_from(["1:1", "2:1", "3:2", "1:2"]),
        ),
        st.builds(
            lambda sw, p, a, h, g: {"kind": "dragonfly", "switch": sw, "p": p, "a": a, "h": h, "groups": g},
            st.sampled_from(switches),
            st.integers(1, 20),
            st.integers(1, 40),
            st.integers(1, 20),
            st.integers(1, 60),
        ),
        st.builds(
            lambda d, at, sw, n: {
                "kind": "torus",
                "dimensions": d,
                "attach": at,
                "switch": sw,
                "nodes_per_switch": n,
            },
            st.lists(st.integers(2, 6), min_size=1, max_size=3),
            st.sampled_from(["direct", "switch"]),
            st.none() | st.sampled_from(switches),
            st.integers(1, 8),
        ),
        st.builds(
            lambda d, at, sw, n: {
                "kind": "hypercube",
                "dimension": d,
                "attach": at,
                "switch": sw,
                "nodes_per_switch": n,
            },
            st.integers(1, 6),
            st.sampled_from(["direct", "switch"]),
            st.none() | st.sampled_from(switches),
            st.integers(1, 8),
        ),
        st.builds(
            lambda sw, sp: {"kind": "leaf-spine", "switch": sw, "spine_switch": sp},
            st.sampled_from(switches),
            st.none() | st.sampled_from(switches),
        ),
    )
    fabric = st.builds(
        lambda t, topo, sm, ll: {
            "technology": t,
            "topology": topo,
            **({"subnet_manager": {"ha": sm}} if sm is not None else {}),
            **({"lossless": {"pfc": ll, "ecn": ll}} if ll is not None else {}),
        },
        st.sampled_from(techs),
        st.none() | topologies,
        st.none() | st.booleans(),
        st.none() | st.booleans(),
    )
    nic = st.builds(
        lambda pu, m, c, po, sp, pc: {
            "purpose": pu,
            "model": m,
            "count": c,
            "ports": po,
            "speed_gbps": sp,
            **({"pcie": {"gen": pc[0], "lanes": pc[1]}} if pc else {}),
        },
        st.sampled_from(["compute", "storage", "management"]),
        st.sampled_from(sorted(cat.nics)),
        st.integers(1, 8),
        st.integers(1, 2),
        st.sampled_from([1, 25, 100, 200, 400, 800]),
        st.none() | st.tuples(st.integers(3, 6), st.sampled_from([4, 8, 16])),
    )
    spec = st.builds(
        lambda g, n, ic, dom, nics, kw, ru: {
            "gpu": g,
            "gpus": n if g else 0,
            "gpu_interconnect": ic,
            "nvlink_domain_gpus": dom,
            "nics": nics,
            "power_kw": kw,
            "rack_units": ru,
        },
        st.none() | st.sampled_from(sorted(cat.gpus)),
        st.integers(1, 80),
        st.sampled_from(["nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5", "infinity-fabric"]),
        st.none() | st.integers(0, 80),
        st.lists(nic, max_size=3),
        st.floats(0.1, 150),
        st.integers(1, 50),
    )
    placement = st.builds(
        lambda npr, rows: {"nodes_per_rack": npr, "rows": rows},
        st.none() | st.integers(1, 12),
        st.none() | st.lists(st.integers(0, 4), max_size=3),
    )
    pool = st.one_of(
        st.builds(
            lambda s, c, pl: {"name": "p", "count": c, "server": s, "placement": pl},
            st.sampled_from(servers),
            st.integers(1, 300),
            placement,
        ),
        st.builds(
            lambda s, c, pl: {"name": "p", "count": c, "spec": s, "placement": pl},
            spec,
            st.integers(1, 64),
            placement,
        ),
    )
    workload = st.none() | st.builds(
        lambda p, m, pr, t, pp, d: {
            "params": p,
            "mode": m,
            "precision": pr,
            "parallelism": {"tensor": t, "pipeline": pp, "data": d},
        },
        st.floats(1e6, 2e12),
        st.sampled_from(["pretrain", "full-finetune", "lora", "qlora", "inference"]),
        st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4"]),
        st.none() | st.integers(1, 64),
        st.none() | st.integers(1, 64),
        st.none() | st.integers(1, 4096),
    )

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        pool,
        st.dictionaries(st.sampled_from(["compute", "storage", "management"]), fabric),
        workload,
        st.integers(1, 5),
        st.integers(1, 20),
        st.floats(1, 200),
    )
    def run(p, fabrics, wl, rows, per_row, kw) -> None:  # type: ignore[no-untyped-def]
        import json

        doc = {
            "apiVersion": "cluster-blueprint/v1",
            "name": "fuzz",
            "pools": [p],
            "fabrics": fabrics,
            "site": {"rows": rows, "racks_per_row": per_row, "rack": {"power_kw": kw}},
        }
        if wl is not None:
            doc["workload"] = wl
        try:
            bp, _ = load_text(json.dumps(doc), "fuzz.yaml")
            cluster = resolve(bp)
        except BlueprintError:
            return  # unusable input is the loader's business, reported elsewhere
        ctx = RuleContext(cluster)
        for rule_cls in _rules_of_this_issue():
            for f in rule_cls().check(ctx):  # an exception here fails the test
                assert f.rule == rule_cls.id and f.path and re.search(r"\d", f.message), f

    run()


def test_an_nvl72_rack_short_of_power_is_told_to_take_the_whole_domain(tmp_path: Path) -> None:
    """PWR001 said "at most 5 per rack", which PWR007 then refuses: a rack-scale NVLink domain is racked
    whole, so the way out is the rack's power."""
    bp = tmp_path / "nvl.yaml"
    bp.write_text(
        "apiVersion: cluster-blueprint/v1\nname: nvl\npools:\n  - {name: gpu, count: 36, server: gb200-nvl72-tray}\n"
        "fabrics:\n  compute:\n    technology: infiniband-ndr\n"
        "    topology: {kind: fat-tree, switch: qm9700, rail_optimized: true, scalable_unit: 18}\n"
    )
    found = [f for f in check(bp).findings if f.rule in ("PWR001", "PWR007")]
    assert [f.rule for f in found] == ["PWR001"], found
    assert "raise site.rack.power_kw to 120.6 kW or more" in (found[0].hint or "")


# ---- workload rules agree with the training estimate (validate never passes what estimate refuses) -------

_TWO_POOLS = """apiVersion: cluster-blueprint/v1
name: two-pools
site: {{rows: 4, racks_per_row: 12, rack: {{units: 48, power_kw: 44}}}}
pools:
  - {{name: gpu, count: 64, server: hgx-h200, placement: {{nodes_per_rack: 4}}}}
  - {{name: infer, count: 4, server: hgx-h200, placement: {{nodes_per_rack: 4}}}}
fabrics:
  compute:
    technology: roce-v2-400
    topology: {{kind: fat-tree, tiers: 2, switch: sn5600, rail_optimized: true, scalable_unit: 32}}
    lossless: {{pfc: true, pfc_priority: 3, ecn: true, dscp: 26, trust: dscp}}
workload: {{params: 70e9, mode: pretrain, parallelism: {{tensor: 8, data: {data}}}}}
"""


@pytest.mark.parametrize(("data", "fires"), [(68, True), (64, False)])
def test_wrk004_counts_the_gpus_of_the_pool_the_job_runs_on(tmp_path: Path, data: int, fires: bool) -> None:
    """64 + 4 HGX H200: the training estimate runs the job on the largest GPU pool (512 GPUs), so TP 8 x DP 68
    = 544 is refused by `estimate`; WRK004 counted all 544 GPUs of the cluster and passed it."""
    path = tmp_path / "two-pools.yaml"
    path.write_text(_TWO_POOLS.format(data=data))
    found = [f.message for f in check(path).findings if f.rule == "WRK004"]
    if fires:
        assert found == [
            "tensor 8 × pipeline 1 × data 68 = 544 but pool `gpu`, the GPU pool with the most GPUs, where the "
            "job runs, has 512 GPUs"
        ]
    else:
        assert found == []


def test_wrk004_keeps_tensor_parallelism_inside_an_nvlink_domain_not_a_tray(tmp_path: Path) -> None:
    """An NVL72 rack's 18 four-GPU trays are one NVLink domain: TP 8 stays on NVLink there."""
    path = tmp_path / "nvl72.yaml"
    path.write_text(
        "apiVersion: cluster-blueprint/v1\nname: nvl72\nsite: {rows: 1, racks_per_row: 4, rack: {units: 48, "
        "power_kw: 130}}\npools:\n  - {name: gpu, count: 18, server: gb200-nvl72-tray}\n"
        "workload: {params: 70e9, mode: pretrain, parallelism: {tensor: 8, sharding: zero1}}\n"
    )
    assert not [f for f in check(path).findings if f.rule == "WRK004"]
    path.write_text(path.read_text().replace("tensor: 8", "tensor: 128"))
    (warning,) = [f for f in check(path).findings if f.rule == "WRK004" and "NVLink domain" in f.message]
    assert "spans more than the 72 GPUs of an NVLink domain" in warning.message


def test_a_global_batch_below_one_sequence_is_refused_where_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "gb.yaml"
    path.write_text(
        "apiVersion: cluster-blueprint/v1\nname: gb\npools:\n  - {name: gpu, count: 1, server: dgx-h100}\n"
        "workload: {params: 1e9, tokens: 1e11, global_batch_tokens: 1, sequence_length: 4096}\n"
    )
    code, out, err = run_cli("validate", str(path))
    assert (
        code == 2 and "global_batch_tokens 1 is less than one sequence (sequence_length 4,096)" in out + err
    )


def test_a_step_computes_at_least_one_sequence_per_data_parallel_rank() -> None:
    """A global batch smaller than one micro-batch per rank was charged only its own tokens (a 16,384-token
    step costed as 4,097 tokens); every rank runs a whole sequence."""
    from blueprints.models.workload import Workload
    from generator.perf.system import system_for
    from generator.perf.training import training_step
    from generator.pipeline import load_and_resolve

    system = system_for(load_and_resolve(REPO / "examples" / "roce-rail-2tier.yaml")[1])
    wl = Workload(params=1e9, tokens=1e11, global_batch_tokens=4097, sequence_length=4096)
    step = training_step(wl, system)
    assert step.tokens_per_step == step.layout.dp * 4096 >= 4096 * 2


def test_wrk004_refuses_more_pipeline_stages_than_layers(tmp_path: Path) -> None:
    """PP 64 of a ~33-layer 7B model passed validate and `estimate` costed 33/64 of a layer per stage (the
    layout chooser itself never goes past the layers; `estimate` now says the step cannot be costed)."""
    path = tmp_path / "pp.yaml"
    path.write_text(
        "apiVersion: cluster-blueprint/v1\nname: pp\npools:\n  - {name: gpu, count: 8, server: dgx-h100}\n"
        "workload: {params: 7e9, mode: pretrain, parallelism: {tensor: 1, pipeline: 64}}\n"
    )
    found = [f for f in check(path).findings if f.rule == "WRK004"]
    assert [f.message for f in found] == [
        "pipeline 64 stages, but the model has ~33 layers (the catalogue's estimate from 7e+09 parameters): "
        "each stage needs at least one layer"
    ]
    assert found[0].path[-1] == "pipeline"
    path.write_text(path.read_text().replace("pipeline: 64", "pipeline: 32"))
    assert not [f for f in check(path).findings if f.rule == "WRK004" and "stages" in f.message]


def test_net020_warns_of_a_pool_that_is_a_full_member_nowhere(tmp_path: Path) -> None:
    """A pool named only in limited partitions is a limited member of Default too: its hosts can talk to
    none of each other (NCCL has no P_Key index to use), which no finding said."""
    path = tmp_path / "limited.yaml"
    text = (
        "apiVersion: cluster-blueprint/v1\nname: limited\nsite: {rows: 1, racks_per_row: 8}\n"
        "pools:\n  - {name: gpu, role: gpu, count: 4, server: dgx-h100, placement: {nodes_per_rack: 2}}\n"
        "fabrics:\n  compute:\n    technology: infiniband-ndr\n"
        "    topology: {kind: fat-tree, tiers: 2, switch: qm9700, rail_optimized: true, scalable_unit: 4}\n"
        "    subnet_manager:\n      kind: opensm\n      ha: true\n"
        "      partitions: [{name: obs, pkey: 0x10, pools: [gpu], membership: MEMBERSHIP}]\n"
    )
    path.write_text(text.replace("MEMBERSHIP", "limited"))
    found = [f for f in check(path).findings if f.rule == "NET020"]
    assert any("pool `gpu` is a limited member of every partition that names it" in f.message for f in found)
    path.write_text(text.replace("MEMBERSHIP", "full"))
    assert not [
        f for f in check(path).findings if f.rule == "NET020" and "pool `gpu` is a limited" in f.message
    ]
