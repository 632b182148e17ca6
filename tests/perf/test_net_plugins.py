"""Issue 28 round 2: cloud transports' NCCL net plugins (perf.yaml nccl.net_plugins).

The latency a plugin reports (aws-ofi-nccl: 75 us on p4d/p5, 35 us on p5en/P6) steers NCCL's tuner only; the
time a run pays per EFA traversal is [FITTED] to EFA floors outside the evaluation set
(tests/perf/data/efa_small_messages.yaml), re-fitted here by solving each row for the traversal latency."""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from perf_blueprints import build, server_nodes
from ruamel.yaml import YAML

from blueprints.catalog.perf import perf_data
from generator.perf.collectives import Estimate, Job, candidates, estimate
from generator.perf.predict import job_for
from generator.perf.sizes import parse_size
from generator.perf.system import system_for

ROOT = Path(__file__).resolve().parents[2]
DATA = YAML(typ="safe", pure=True).load(
    (Path(__file__).parent / "data" / "efa_small_messages.yaml").read_text()
)
ROCE400 = {
    "technology": "roce-v2-400",
    "topology": {"kind": "fat-tree", "switch": "sn5600", "rail_optimized": True},
    "lossless": {},
}


def _cloud(instance: str, nodes: int) -> dict:  # type: ignore[type-arg]
    return {**server_nodes(instance, nodes), "name": "efa-fit"}


def _job(model: dict, tmp_path: Path) -> Job:  # type: ignore[type-arg]
    if "instance" in model:
        cluster, plan, _ = build(_cloud(model["instance"], model["nodes"]), tmp_path, "efa.yaml")
        return job_for(system_for(cluster, plan), model["nodes"])
    bp = server_nodes(model["server"], model["nodes"], ROCE400)
    cluster, plan, _ = build(bp, tmp_path, "efa-spec.yaml")
    job = job_for(system_for(cluster, plan), model["nodes"])
    return dataclasses.replace(job, tuner_net_latency_us=model["plugin_latency_us"])


AT_FLOOR = 1e-6  # a solved latency this close to the solver's floor (0): the row bounds nothing


def _solve(job: Job, size: int, measured_us: float) -> float:
    """The traversal latency at which the model's time equals the measured one (bisection; time grows with
    it for a fixed choice, and NCCL's choice does not depend on it: the tuner sees the plugin's latency)."""
    lo, hi = 0.0, 500.0
    for _ in range(60):
        mid = (lo + hi) / 2
        t = estimate("all_reduce", size, dataclasses.replace(job, net_latency_us=mid)).time_s * 1e6
        lo, hi = (mid, hi) if t < measured_us else (lo, mid)
    return (lo + hi) / 2


def _solved_rows(tmp_path: Path) -> list[tuple[str, str | None, float]]:
    """(sweep id, the instance type it ran on or None, the traversal latency its row solves to) for every row
    of the fit data."""
    solved = []
    for sweep in DATA["sweeps"]:
        job = _job(sweep["model"], tmp_path)
        instance = sweep["model"]["instance"].split("/")[-1] if "instance" in sweep["model"] else None
        for size, times in sweep["time_us"].items():
            solved += [(sweep["id"], instance, _solve(job, int(size), t)) for t in times]
    return solved


def fitted_traversal_latency(
    rows: list[tuple[str, str | None, float]], instances: tuple[str, ...] = ()
) -> float:
    """The median over the solved ``rows`` that bound it, from the instance types ``instances`` (none: from
    every other one, the default figure). A row the model is already slower than with no traversal latency at
    all solves to the solver's floor (0) and says nothing about the figure."""
    grouped = {
        g
        for group in perf_data().nccl.net_plugins["efa"].instance_traversal_latency_us
        for g in group.instances
    }
    return statistics.median(
        v
        for _, instance, v in rows
        if v > AT_FLOOR and (instance in instances if instances else instance not in grouped)
    )


def test_efa_traversal_latencies_are_the_medians_of_their_rows(tmp_path: Path) -> None:
    """The default figure from the rows of instances no group names (2 x p6-b200), each group's from its own
    instances' rows (2 x p5.48xlarge), and every group has rows: no figure without data."""
    efa = perf_data().nccl.net_plugins["efa"]
    assert efa.traversal_latency_us is not None
    rows = _solved_rows(tmp_path)  # solved once, shared by every figure
    assert efa.traversal_latency_us.value == pytest.approx(round(fitted_traversal_latency(rows) * 2) / 2)
    assert efa.instance_traversal_latency_us  # p5 has its own
    for group in efa.instance_traversal_latency_us:
        fitted = fitted_traversal_latency(rows, group.instances)  # median() of no rows raises
        assert group.value == pytest.approx(round(fitted * 2) / 2)  # kept to 0.5 us


def test_each_instance_runs_its_generations_traversal_latency(tmp_path: Path) -> None:
    """p5 and p5e share p5's fitted figure (one EFA, one aws-ofi-nccl entry); p4d keeps the default (its
    floors bound nothing); the two differ, as the generations' floors do (69 us on 2 x p5, 51-68 on p6)."""
    efa = perf_data().nccl.net_plugins["efa"]
    assert efa.traversal_latency_us is not None
    default = efa.traversal_latency_us.value
    assert efa.traversal_for("p5.48xlarge") == efa.traversal_for("p5e.48xlarge") != default
    assert efa.traversal_for("p4d.24xlarge") == efa.traversal_for("p5en.48xlarge") == default
    for instance in ("p5.48xlarge", "p4d.24xlarge"):
        cluster, plan, _ = build(_cloud(f"aws/{instance}", 2), tmp_path, f"{instance}.yaml")
        assert system_for(cluster, plan).net_latency_us == efa.traversal_for(instance)


def test_p4dn_floors_bound_nothing_once_the_plugin_forces_simple(tmp_path: Path) -> None:
    """aws-ofi-nccl runs p4d with NCCL_PROTO=simple (perf.yaml efa.instance_settings): the Simple tree's
    latency NCCL's 2.20.3 tuner gives (28 us a step over NVLink and the network) already exceeds the 4 x p4dn
    floors of NVIDIA/nccl #527 (164-210 us), so they solve to 0 and are left out of the median; the p6-b200
    rows set it. If the model's Simple latency comes down, these rows count again and this test says so."""
    rows = _solved_rows(tmp_path)
    assert all(v <= AT_FLOOR for sweep, _, v in rows if sweep == "nccl-527-p4dn-4node")
    assert all(v > AT_FLOOR for sweep, _, v in rows if sweep != "nccl-527-p4dn-4node")
    cluster, plan, _ = build(_cloud("aws/p4d.24xlarge", 2), tmp_path, "p4d.yaml")
    system = system_for(cluster, plan)
    assert system.transport_settings is not None and system.transport_settings.protocols == ("simple",)
    assert estimate("all_reduce", 1 << 20, job_for(system, 2)).protocol == "simple"
    cluster, plan, _ = build(_cloud("aws/p5.48xlarge", 2), tmp_path, "p5.yaml")
    assert system_for(cluster, plan).transport_settings is None  # p5: in-order writes, NCCL's own choice


def test_plugin_latency_reaches_the_tuner_not_the_time(tmp_path: Path) -> None:
    """2 x p5.48xlarge: aws-ofi-nccl reports 75 us; NCCL's tuner adds it per inter-node step (twice for
    Simple: tuning.cc 'Also add the flush extra latency'), the time carries the EFA traversal latency."""
    cluster, plan, _ = build(_cloud("aws/p5.48xlarge", 2), tmp_path, "p5.yaml")
    system = system_for(cluster, plan)
    assert system.tuner_net_latency_us == 75.0
    traversal = perf_data().nccl.net_plugins["efa"].traversal_for("p5.48xlarge")
    assert traversal is not None and system.net_latency_us == traversal
    job = job_for(system, 2)
    by = {(c.algorithm, c.protocol): c for c in candidates("all_reduce", job)}
    tree_ll = by[("tree", "ll")]
    # tree LL on 2 nodes of 8: baseLat 6.8 + 2 x (7 NVLink steps x 0.6 + 1 x (NET 5.0 + latency))
    assert tree_ll.latency_us == pytest.approx(6.8 + 2 * (7 * 0.6 + 5.0 + traversal))
    assert tree_ll.tuner_latency_us == pytest.approx(6.8 + 2 * (7 * 0.6 + 5.0 + 75.0))
    nvls_tree = by[("nvls_tree", "simple")]
    # NVLSTree over NVLink 25 us in 2.21.5 (the blueprint's default NCCL), the network's 14 plus twice 75
    assert nvls_tree.tuner_latency_us == pytest.approx(25.0 + 2 * (14.0 + 2 * 75.0))


def test_plugin_latency_can_change_nccls_choice(tmp_path: Path) -> None:
    """At 16 MiB NCCL's tuner with 75 us per inter-node step does not pick NVLS-tree (its Simple steps pay the
    latency twice) but an LL128 tree; without a reported latency it would pick NVLS-tree."""
    cluster, plan, _ = build(_cloud("aws/p5.48xlarge", 2), tmp_path, "p5.yaml")
    job = job_for(system_for(cluster, plan), 2)
    with_plugin = estimate("all_reduce", 16 << 20, job)
    without = estimate("all_reduce", 16 << 20, dataclasses.replace(job, tuner_net_latency_us=None))
    assert (with_plugin.algorithm, with_plugin.protocol) == ("tree", "ll128")
    assert without.algorithm == "nvls_tree"


def test_tcpx_reports_no_latency_and_ib_has_no_plugin(tmp_path: Path) -> None:
    plugins = perf_data().nccl.net_plugins
    assert plugins["gpudirect-tcpx"].reported_for("a3-highgpu-8g") == 0.0
    # TCPXO's plugin is a binary image: no reported latency is published, so it reports none (not a guess)
    assert plugins["gpudirect-tcpxo"].reported_for("a3-megagpu-8g") is None
    fabric = {"technology": "infiniband-ndr", "topology": {"kind": "fat-tree", "switch": "qm9700"}}
    cluster, plan, _ = build(server_nodes("dgx-h100", 2, fabric), tmp_path, "ib.yaml")
    assert system_for(cluster, plan).tuner_net_latency_us is None


def test_fit_sources_stay_out_of_the_evaluation_set() -> None:
    doc = YAML(typ="safe", pure=True).load((ROOT / "benchmarks" / "evaluation.yaml").read_text())
    evaluated = {e["source"] for e in doc["measurements"]}
    assert not {s["source"] for s in DATA["sweeps"]} & evaluated


TCPX = YAML(typ="safe", pure=True).load((Path(__file__).parent / "data" / "tcpx_bandwidth.yaml").read_text())


def _tcpx_job(tmp_path: Path, latency_us: float, share: float = 1.0) -> Job:
    """The GKE example's job as it ran (its channels), with a traversal latency and a share of the NICs'
    RDMA-model bandwidth."""
    cluster, plan, _ = build(_cloud(TCPX["instance"], TCPX["nodes"]), tmp_path, "tcpx.yaml")
    system = system_for(cluster, plan)
    assert system.net is not None
    trial = dataclasses.replace(system, net=system.net.scaled(share), net_latency_us=latency_us)
    return job_for(trial, TCPX["nodes"], channels=TCPX["channels"])


def _tcpx_estimate(job: Job, label: str) -> Estimate:
    settings = {"algorithms": (TCPX["algorithm"],), "protocols": (TCPX["protocol"],)}
    return estimate(TCPX["collective"], parse_size(label), job, **settings)


def _bisect(lo: float, hi: float, below: Callable[[float], bool], steps: int = 50) -> float:
    """The value where ``below`` turns false (it holds below it)."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
    return (lo + hi) / 2


def _floor_fit(floor_time_us: dict[str, float], time_us: Callable[[float, str], float]) -> float:
    """Median over the floor rows of the traversal latency at which the model's time (``time_us(latency,
    size label)``) equals the measured."""
    return statistics.median(
        _bisect(0.0, 2000.0, lambda x, label=label, t=t: time_us(x, label) < t)
        for label, t in floor_time_us.items()
    )


def fitted_tcpx_latency(tmp_path: Path) -> float:
    return _floor_fit(
        TCPX["floor_time_us"], lambda x, label: _tcpx_estimate(_tcpx_job(tmp_path, x), label).time_s * 1e6
    )


def test_tcpx_traversal_latency_is_the_median_of_its_floor_rows(tmp_path: Path) -> None:
    traversal = perf_data().nccl.net_plugins["gpudirect-tcpx"].traversal_latency_us
    assert traversal is not None
    assert traversal.value == pytest.approx(round(fitted_tcpx_latency(tmp_path) * 2) / 2)  # kept to 0.5 us


def test_tcpx_needs_no_bandwidth_share(tmp_path: Path) -> None:
    """Run as the example ran (Ring, Simple, 12 channels), the share of the RDMA model's NIC bandwidth that
    meets each bandwidth-bound row is at least 0.95: the NICs as the model counts them carry TCPX."""
    latency = perf_data().nccl.net_plugins["gpudirect-tcpx"].traversal_latency_us
    assert latency is not None
    for label, measured in TCPX["busbw"].items():
        share = _bisect(
            0.05,
            1.5,
            lambda s, size=label, busbw=measured: (
                _tcpx_estimate(_tcpx_job(tmp_path, latency.value, s), size).busbw_gbytes < busbw
            ),
        )
        assert share >= 0.95, label


def test_a_tcpx_job_runs_the_transports_settings(tmp_path: Path) -> None:
    """Across nodes an A3 High job runs Ring/Simple as TCPX's published setup sets (perf.yaml settings), unless
    the estimate names an algorithm; on one node (no TCPX) NCCL chooses as usual."""
    cluster, plan, _ = build(_cloud(TCPX["instance"], TCPX["nodes"]), tmp_path, "tcpx.yaml")
    system = system_for(cluster, plan)
    two = job_for(system, 2)
    assert (two.transport_algorithms, two.transport_protocols) == (("ring",), ("simple",))
    for size in (1 << 20, 1 << 30):
        est = estimate("all_reduce", size, two)
        assert (est.algorithm, est.protocol) == ("ring", "simple")
    assert estimate("all_reduce", 1 << 30, two, algorithms=("tree",)).algorithm == "tree"
    one = job_for(system, 1)
    assert one.transport_algorithms is None
    assert estimate("all_reduce", 1 << 30, one).algorithm == "nvls"
    assert any("NCCL_ALGO=Ring NCCL_PROTO=Simple" in n for n in system.notes)


def test_a_tcpxo_job_runs_the_profile_of_the_installed_plugin(tmp_path: Path) -> None:
    """A3 Mega across nodes: the profile of the installer the catalogue installs (v1.0.10, between v1.0.9-1
    and v1.0.11, whose release notes both set NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple,LL128 and
    NCCL_NVLS_ENABLE=0), so NVLS-tree (NCCL's own choice on 2 x 8 H100 at 1 GiB) is out; on one node NVLS
    stays NCCL's choice."""
    cluster, plan, _ = build(_cloud("gcp/a3-megagpu-8g", 2), tmp_path, "tcpxo.yaml")
    system = system_for(cluster, plan)
    two = job_for(system, 2)
    assert (two.transport_algorithms, two.transport_protocols) == (("ring", "tree"), ("simple", "ll128"))
    assert estimate("all_reduce", 1 << 30, two, algorithms=("nvls_tree",)).algorithm == "nvls_tree"
    for size in (1 << 10, 1 << 20, 16 << 20, 1 << 30):
        est = estimate("all_reduce", size, two)
        assert est.algorithm in ("ring", "tree") and est.protocol in ("simple", "ll128"), size
    assert estimate("all_reduce", 1 << 30, job_for(system, 1)).algorithm == "nvls"
    profile = "gpudirect-tcpxo jobs across nodes run NCCL_ALGO=Ring,Tree NCCL_PROTO=Simple,LL128"
    assert any(profile in n for n in system.notes)
    installed = (ROOT / "blueprints" / "catalog" / "data" / "platforms.yaml").read_text()
    assert "nccl-plugin-gpudirecttcpx-dev:v1.0.10" in installed  # the settings follow the installer


TCPXO = YAML(typ="safe", pure=True).load((Path(__file__).parent / "data" / "tcpxo_floor.yaml").read_text())


def _tcpxo_estimate(tmp_path: Path, latency_us: float, label: str) -> Estimate:
    """The A3 Mega all_gather run of tests/perf/data/tcpxo_floor.yaml with a traversal latency (its profile's
    protocols; all_gather across nodes runs rings)."""
    cluster, plan, _ = build(_cloud(TCPXO["instance"], TCPXO["nodes"]), tmp_path, "tcpxo.yaml")
    job = job_for(dataclasses.replace(system_for(cluster, plan), net_latency_us=latency_us), TCPXO["nodes"])
    settings = {"algorithms": (TCPXO["algorithm"],), "protocols": tuple(TCPXO["protocols"])}
    return estimate(TCPXO["collective"], parse_size(label), job, **settings)


def fitted_tcpxo_latency(tmp_path: Path) -> float:
    return _floor_fit(
        TCPXO["floor_time_us"], lambda x, label: _tcpxo_estimate(tmp_path, x, label).time_s * 1e6
    )


def test_tcpxo_traversal_latency_is_the_median_of_its_floor_rows(tmp_path: Path) -> None:
    traversal = perf_data().nccl.net_plugins["gpudirect-tcpxo"].traversal_latency_us
    assert traversal is not None
    assert traversal.value == pytest.approx(round(fitted_tcpxo_latency(tmp_path) * 2) / 2)  # kept to 0.5 us
    # the fitted run's largest row: the ring on 8 x 200G as the model counts the NICs
    latency, (label, measured) = traversal.value, next(iter(TCPXO["busbw"].items()))
    assert _tcpxo_estimate(tmp_path, latency, label).busbw_gbytes == pytest.approx(measured, rel=0.05)


def test_tcpxo_fit_source_stays_out_of_the_evaluation_set() -> None:
    doc = YAML(typ="safe", pure=True).load((ROOT / "benchmarks" / "evaluation.yaml").read_text())
    assert TCPXO["source"] not in {e["source"] for e in doc["measurements"]}
    assert not any("MG-Cafe" in e["source"] for e in doc["measurements"])


def test_tcpx_fit_source_stays_out_of_the_evaluation_set() -> None:
    doc = YAML(typ="safe", pure=True).load((ROOT / "benchmarks" / "evaluation.yaml").read_text())
    assert TCPX["source"] not in {e["source"] for e in doc["measurements"]}
    assert not any("ai-infra-cluster-provisioning" in e["source"] for e in doc["measurements"])


def _h100_nodes_with_nics(count: int, speed_gbps: int, model: str, fabric: dict) -> dict:  # type: ignore[type-arg]
    """Two 8 x H100 nodes (NVSwitch) with ``count`` compute NICs each, on ``fabric``."""
    from blueprints.catalog import default_catalog
    from generator.perf.starter import server_spec

    bp = server_nodes("dgx-h100", 2, fabric)
    nics = [{"purpose": "compute", "model": model, "count": count, "speed_gbps": speed_gbps}]
    bp["pools"][0].pop("server")
    bp["pools"][0]["spec"] = server_spec(default_catalog().servers["dgx-h100"], nics)
    return bp


def test_nvls_graph_uses_twice_the_ring_graphs_nics(tmp_path: Path) -> None:
    """NCCL init.cc (2.20.3): ringGraph.maxChannels = MAXCHANNELS/2, nvlsGraph.maxChannels = MAXCHANNELS, one
    NIC per inter-node channel: a node of 32 NICs of 100G (NCCL's own RoCE transport, one device a NIC) feeds
    rings and trees through 16, NVLS-tree through 32, whose 16 NVLS channels (NCCL_NVLS_NCHANNELS' default)
    carry at most what the catalogue says a Hopper channel does."""
    roce100 = {**ROCE400, "technology": "roce-v2-100"}
    roce100["topology"] = {"kind": "fat-tree", "switch": "sn4600c", "rail_optimized": True}
    cluster, plan, _ = build(_h100_nodes_with_nics(32, 100, "cx6-dx", roce100), tmp_path, "nics32.yaml")
    system = system_for(cluster, plan)
    assert system.net is not None and system.net_ports == system.nccl_nics == 32
    job = job_for(system, 2)
    assert job.net is not None and job.nvls_net is not None
    assert job.net.gbytes == pytest.approx(system.net.gbytes * 16 / 32)
    channel = perf_data().nccl.net_channel_gbytes[90].value
    assert job.nvls_net.gbytes == pytest.approx(min(system.net.gbytes, 16 * channel))


def test_p5_nics_are_grouped_around_its_gpus(tmp_path: Path) -> None:
    """aws-ofi-nccl's RDMA protocol on p5 shows NCCL one device per GPU, its four 100G EFA NICs together
    (perf.yaml nccl.net_plugins.efa rail_groups): NCCL's graph counts 8 devices of 400 Gb/s (50 GB/s), not
    32 of 100G, so rings are no longer held to 16 of 32 NICs (16 × 12.5 = 200 GB/s of line rate). The node's
    line rate is the same 3,200 Gb/s; p4d (SENDRECV protocol) keeps a device a NIC."""
    cluster, plan, _ = build(_cloud("aws/p5.48xlarge", 2), tmp_path, "p5.yaml")
    system = system_for(cluster, plan)
    assert (system.net_ports, system.nccl_nics, system.nic_gbytes) == (32, 8, 50.0)
    assert system.net_line_gbps == 3200
    assert any("one device per GPU on p5.48xlarge" in n for n in system.notes)
    # estimate --format json shows both counts
    code, out, err = run_cli("estimate", str(tmp_path / "p5.yaml"), "--sizes", "1G", "--format", "json")
    assert code == 0, err
    shown = json.loads(out)["blueprints"][0]["system"]
    assert (shown["compute_ports_per_node"], shown["nccl_nics_per_node"], shown["nccl_nic_gbytes"]) == (
        32,
        8,
        50.0,
    )
    job = job_for(system, 2)
    assert job.net is not None and job.net.gbytes > 200
    nvls_tree = next(c for c in candidates("all_reduce", job) if c.algorithm == "nvls_tree")
    # two nodes: the tree of nodes carries S per node each way (x2 x 0.5), under the NVLS-tree domain share
    assert job.nvls is not None and system.net is not None
    share = perf_data().nccl.nvls_tree_multi_unit_efficiency.value
    assert nvls_tree.algbw.gbytes == pytest.approx(min(system.net.gbytes, job.nvls.gbytes * share))
    # a run on one of p5's 32 NICs reaches a quarter of one grouped device: one device of 100G
    from generator.perf.predict import _graph_nics

    assert _graph_nics(system, 1 / 32) == (12.5, 1.0) and _graph_nics(system, 1 / 8) == (50.0, 1.0)
    cluster, plan, _ = build(_cloud("aws/p4d.24xlarge", 2), tmp_path, "p4d.yaml")
    p4d = system_for(cluster, plan)
    assert (p4d.net_ports, p4d.nccl_nics, p4d.nic_gbytes) == (4, 4, 12.5)
    # p5en: 16 EFA NICs of 200G, two a GPU: 8 devices of 400 Gb/s
    cluster, plan, _ = build(_cloud("aws/p5en.48xlarge", 2), tmp_path, "p5en.yaml")
    p5en = system_for(cluster, plan)
    assert (p5en.net_ports, p5en.nccl_nics, p5en.nic_gbytes) == (16, 8, 50.0)


def test_a_cloud_transport_without_a_fabric_is_modelled_as_the_named_one(tmp_path: Path, monkeypatch) -> None:
    """EFA has no fabrics.yaml entry: it is modelled as perf.yaml nccl.cloud_transport_as_fabric (RoCE v2 at
    400G), and naming another fabric there changes the model (its kind, hence its wire share), so the choice
    is that one entry, not ids in code. A name that is no fabric is refused."""
    import generator.perf.system as system_module
    from generator.perf.system import PerfError

    cluster, plan, _ = build(_cloud("aws/p5.48xlarge", 2), tmp_path, "efa.yaml")
    shipped = perf_data()
    as_roce = system_for(cluster, plan)
    assert as_roce.net_kind == "roce"
    assert any(
        "`efa` is not in the catalogue: modelled as RoCE v2 (`roce-v2-400`)" in n for n in as_roce.notes
    )

    def named(fabric: str) -> None:
        nccl = shipped.nccl.model_copy(update={"cloud_transport_as_fabric": fabric})
        monkeypatch.setattr(system_module, "perf_data", lambda: shipped.model_copy(update={"nccl": nccl}))

    named("infiniband-ndr")
    as_ib = system_for(cluster, plan)
    assert as_ib.net_kind == "infiniband"
    assert any("modelled as InfiniBand (`infiniband-ndr`)" in n for n in as_ib.notes)
    assert as_ib.net is not None and as_roce.net is not None and as_ib.net.gbytes != as_roce.net.gbytes
    named("infiniband-qdr")
    with pytest.raises(PerfError, match="cloud_transport_as_fabric `infiniband-qdr` is no fabric"):
        system_for(cluster, plan)
