"""verify-cabling's InfiniBand identification against the site's node-name map, on what the real
``ibnetdiscover`` prints (default and ``-p`` format) from an ibsim fabric with two HCAs swapped on a leaf.

A site's map may name its devices by the site's own names, be keyed by node GUIDs (what ibnetdiscover, opensm
and sm-guids use) or by port GUIDs (all an ``ibnetdiscover -p`` dump prints for an HCA): whatever it is, a
swapped cable must never be reported ok.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import ib_faults
import pytest
from ib_fixtures import plan_of, run_cli, simulators
from ibsim_harness import REQUIRES_TOOLS, Simulator, first_ca

from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Plan
from generator.verify.ibnetdiscover import parse_ibnetdiscover

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]

FT2 = str(Path(__file__).resolve().parent / "fixtures" / "ft2-hdr-rail.yaml")
# firmware-default descriptions (no host name set), one model each so the test can tell the two apart
UNSET = {
    "gpu001 mlx5_0": "MT4123 ConnectX6   Mellanox Technologies",
    "gpu002 mlx5_0": "MT4124 ConnectX6   Mellanox Technologies",
}
SWAPPED = ("gpu001 mlx5_0", "gpu002 mlx5_0")


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    yield from simulators(tmp_path)


def _swapped_ids(plan: Plan) -> list[str]:
    """The cables of gpu001 and gpu002 mlx5_0/1 (both on c-leaf-su1-r0)."""
    return [
        ln.id
        for ln in plan.links_of("compute")
        for ep in (ln.a, ln.b)
        if f"{ep.device} {ep.port}" in {f"{s}/1" for s in SWAPPED}
    ]


def _swapped_net(plan: Plan, desc: dict[str, str] | None = None) -> str:
    """The plan's fabric with gpu001 and gpu002 mlx5_0 on each other's leaf ports; ``desc`` replaces node
    descriptions (plan name → what the node says)."""
    ids = _swapped_ids(plan)
    net = render_netfile(ib_faults.swap_switch_ends(plan, *ids), "compute")
    for name, said in (desc or {}).items():
        net = net.replace(f'# "{name}"\n', f'# "{said}"\n')  # the Ca record's line only
    return net


def _dumps(
    simulator: Callable[[str, str], Simulator], net: str, tmp_path: Path, *extra: str
) -> tuple[Path, Path]:
    """(default-format dump, ``-p`` dump) of one simulated fabric."""
    sim = simulator(net, "swap")
    host = first_ca(net)
    assert "SUBNET UP" in sim.opensm(host, "ftree,minhop").log
    default, ports = tmp_path / "swap.topo", tmp_path / "swap.ports"
    default.write_text(sim.ibnetdiscover(host, *extra))
    ports.write_text(sim.ibnetdiscover(host, "-p", *extra))
    return default, ports


def _verify(dump: Path, *extra: str) -> tuple[int, dict, str]:
    code, out, err = run_cli("verify-cabling", FT2, "--discovered", str(dump), "--format", "json", *extra)
    return code, (json.loads(out) if code in (0, 1) else {}), err


def _miswired(report: dict) -> set[str]:
    return {r["cable"] for r in report["results"] if r["status"] == "miswired"}


def _guids(default: Path, ports: Path, said: dict[str, str]) -> dict[str, tuple[int, int]]:
    """plan name → (node GUID, port GUID) of the HCA whose description is ``said[name]``: the default format
    prints its node GUID (``caguid=``), the -p format its port GUID."""
    out = {}
    for name, desc in said.items():
        guids = []
        for dump in (default, ports):
            nodes = parse_ibnetdiscover(dump.read_text(), str(dump)).nodes.values()
            (guid,) = [n.guid for n in nodes if n.kind == "ca" and n.desc == desc]
            assert guid is not None
            guids.append(guid)
        out[name] = (guids[0], guids[1])
    return out


def test_a_map_name_that_is_no_plan_device_falls_back_to_the_description(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """The site's map names the two swapped HCAs by its own names ("r01-gpu-a HCA-1"): their descriptions
    ("gpu001 mlx5_0") still name their plan ports, so the swap is MISWIRED, as without the map. It was
    placed by position instead, and called ok with a warning that the description 'is not set'."""
    plan = plan_of(FT2)
    default, ports = _dumps(simulator, _swapped_net(plan), tmp_path)
    guids = _guids(default, ports, {s: s for s in SWAPPED})
    name_map = tmp_path / "site-map.txt"
    name_map.write_text(
        "".join(f'0x{guids[s][0]:016x} "r01-gpu-{c} HCA-1"\n' for s, c in zip(SWAPPED, "ab", strict=True))
    )
    ids = set(_swapped_ids(plan))
    for dump in (default, ports):
        code, plain, _ = _verify(dump)
        assert code == 1 and _miswired(plain) == ids, plain["results"]
    code, report, err = _verify(default, "--node-name-map", str(name_map))
    assert code == 1, err
    assert _miswired(report) == ids, report["results"]
    assert report["summary"]["miswired"] == 2
    assert not [w for w in report["warnings"] if "identified by position only" in w], report["warnings"]


def test_a_node_guid_map_reads_alike_in_both_formats(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """Two HCAs with firmware-default descriptions swapped: the site's map (keyed by node GUID, as sm-guids
    writes it) shows the swap in the default format; a -p dump prints no node GUID for an HCA, so the map
    matched none of its HCAs and the swap was placed by position and called ok. It is refused (exit 2),
    naming the two ways to run ibnetdiscover that do work; the map applied by ibnetdiscover -p works."""
    plan = plan_of(FT2)
    net = _swapped_net(plan, UNSET)
    default, ports = _dumps(simulator, net, tmp_path)
    disc = parse_ibnetdiscover(default.read_text(), str(default))
    named = {n.desc: n.guid for n in disc.nodes.values() if n.kind == "ca" and n.desc not in UNSET.values()}
    guids = _guids(default, ports, UNSET)
    name_map = tmp_path / "node-name-map"
    name_map.write_text(
        "".join(f'0x{g:016x} "{d}"\n' for d, g in sorted(named.items()))
        + "".join(f'0x{guids[s][0]:016x} "{s}"\n' for s in SWAPPED)
    )
    ids = set(_swapped_ids(plan))
    code, report, err = _verify(default, "--node-name-map", str(name_map))
    assert code == 1 and _miswired(report) == ids, (err, report.get("results"))

    code, report, err = _verify(ports, "--node-name-map", str(name_map))
    assert code == 2, report
    assert f"{ports}: an `ibnetdiscover -p` dump names each HCA by its port GUID only" in err, err
    assert "ibnetdiscover -p --node-name-map FILE" in err and "Traceback" not in err

    # what the refusal points to: ibnetdiscover applies the map itself, by node GUID
    sim = simulator(net, "mapped")
    mapped = tmp_path / "mapped.ports"
    mapped.write_text(sim.ibnetdiscover(first_ca(net), "-p", "--node-name-map", str(name_map)))
    code, report, err = _verify(mapped)
    assert code == 1 and _miswired(report) == ids, (err, report.get("results"))


def test_a_port_guid_map_reads_alike_in_both_formats(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """The same swap, the map keyed by port GUID (what sm-guids wrote before, and what a -p dump shows):
    MISWIRED in both formats (the default format used to look the map up by node GUID only, and placed the
    two HCAs by position: ok)."""
    plan = plan_of(FT2)
    default, ports = _dumps(simulator, _swapped_net(plan, UNSET), tmp_path)
    guids = _guids(default, ports, UNSET)
    name_map = tmp_path / "port-map"
    name_map.write_text("".join(f'0x{guids[s][1]:016x} "{s}"\n' for s in SWAPPED))
    ids = set(_swapped_ids(plan))
    for dump in (default, ports):
        code, report, err = _verify(dump, "--node-name-map", str(name_map))
        assert code == 1 and _miswired(report) == ids, (dump, err, report.get("results"))


def test_a_switch_named_like_a_host_is_said_to_name_no_plan_switch(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """A leaf whose description is a host's name is placed by position; the warning says its description
    names no plan switch (it said the description 'is not set', which it is)."""
    plan = plan_of(FT2)
    net = render_netfile(plan, "compute").replace('# "c-leaf-su1-r0" enhanced', '# "gpu001" enhanced')
    default, _ = _dumps(simulator, net, tmp_path)
    code, report, err = _verify(default)
    assert code == 0, (err, report.get("results"))
    (note,) = [w for w in report["warnings"] if "identified by position only" in w]
    assert note.startswith("c-leaf-su1-r0: switch 0x"), note
    assert "its node description names no plan switch (it reads 'gpu001')" in note, note
