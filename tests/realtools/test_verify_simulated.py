"""verify-cabling on what the real ``ibnetdiscover`` reports from a simulated fabric.

The fabric as built is simulated by ibsim from a net file (optionally with faults built in), swept
by OpenSM (so the dump carries LIDs like a live fabric), discovered by ``ibnetdiscover`` and the
dump is verified against the *original* plan through the CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import ib_faults
import pytest
from ib_fixtures import plan_of, run_cli, simulators
from ibsim_harness import REQUIRES_TOOLS, SIM_SPEEDS, Simulator, first_ca

from generator.cli import main
from generator.emit.ibnetdiscover import render_netfile
from generator.plan.model import Link, Plan

pytestmark = [pytest.mark.realtools, REQUIRES_TOOLS]


@pytest.fixture
def simulator(tmp_path: Path) -> Iterator[Callable[..., Simulator]]:
    yield from simulators(tmp_path)


REPO = Path(__file__).resolve().parents[2]
FT2 = str(Path(__file__).resolve().parent / "fixtures" / "ft2-hdr-rail.yaml")
SUPERPOD = str(REPO / "examples" / "superpod-h100-4su.yaml")
SUPERPOD8 = str(Path(__file__).resolve().parent / "fixtures" / "superpod-h100-8su.yaml")


def _sim_speed(plan: Plan) -> str | None:
    token = plan.cluster.fabrics["compute"].tech.speed_token
    return None if token in SIM_SPEEDS else "HDR"


def discover(
    simulator: Callable[[str, str], Simulator], net: str, tmp_path: Path, name: str, *args: str
) -> Path:
    sim = simulator(net, name)
    host = first_ca(net)
    assert "SUBNET UP" in sim.opensm(host, "ftree,minhop").log
    out = tmp_path / f"{name}.ibnetdiscover"
    out.write_text(sim.ibnetdiscover(host, *args))
    return out


def verify_json(blueprint: str, dump: Path, *extra: str) -> tuple[int, dict]:
    code, out, err = run_cli(
        "verify-cabling", blueprint, "--discovered", str(dump), "--format", "json", *extra
    )
    assert code in (0, 1), err
    return code, json.loads(out)


def _speed_args(plan: Plan) -> tuple[str, ...]:
    s = _sim_speed(plan)
    return ("--sim-speed", s) if s else ()


@pytest.mark.parametrize(
    "blueprint", [FT2, SUPERPOD, SUPERPOD8], ids=["ft2-hdr-rail", "superpod-4su", "superpod-8su"]
)
@pytest.mark.parametrize("fmt", ["default", "ports"])
def test_clean_build_verifies(
    blueprint: str, fmt: str, simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    plan = plan_of(blueprint)
    net = render_netfile(plan, "compute", sim_speed=_sim_speed(plan))
    dump = discover(simulator, net, tmp_path, "clean", *(["-p"] if fmt == "ports" else []))
    code, out, err = run_cli("verify-cabling", blueprint, "--discovered", str(dump), *_speed_args(plan))
    planned = len(plan.links_of("compute"))
    assert code == 0, out + err
    assert (
        f"{planned} cables planned, {planned} ok, 0 miswired, 0 missing, 0 wrong speed/width, 0 unexpected"
        in out
    )


def test_ndr_plan_against_hdr_simulation_reports_every_link_rate(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """Without --sim-speed the speed check is exact: every 4xHDR link of an NDR plan is wrong."""
    plan = plan_of(SUPERPOD)
    dump = discover(simulator, render_netfile(plan, "compute", sim_speed="HDR"), tmp_path, "hdr")
    code, report = verify_json(SUPERPOD, dump)
    assert code == 1
    assert report["summary"]["rate"] == len(plan.links_of("compute"))
    assert {(r["expected_rate"], r["found_rate"]) for r in report["results"]} == {("4xNDR", "4xHDR")}


def _leaf(plan: Plan, link: Link) -> str:
    return link.a.device if plan.device_by_name[link.a.device].role == "leaf" else link.b.device


def _node_links_of_leaf(plan: Plan, leaf: str) -> list[Link]:
    return [
        ln
        for ln in plan.links_of("compute")
        if ln.layer == "node_leaf" and leaf in (ln.a.device, ln.b.device)
    ]


def _parallel_uplinks(plan: Plan) -> tuple[Link, Link]:
    """Two uplinks of one leaf to the same spine (a crossed pair keeps the same GUIDs at both ends)."""
    by_pair: dict[tuple[str, str], list[Link]] = {}
    for ln in plan.links_of("compute"):
        if ln.layer == "leaf_spine":
            by_pair.setdefault((ln.a.device, ln.b.device), []).append(ln)
    pair = next(v for v in by_pair.values() if len(v) >= 2)
    return pair[0], pair[1]


def _node_and_switch(plan: Plan, link: Link) -> tuple:
    return (link.a, link.b) if plan.device_by_name[link.a.device].kind == "node" else (link.b, link.a)


@pytest.mark.parametrize("blueprint", [FT2, SUPERPOD], ids=["ft2-hdr-rail", "superpod-4su"])
def test_faults_reported_exactly(
    blueprint: str, simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    plan = plan_of(blueprint)
    leaf = _leaf(plan, next(ln for ln in plan.links_of("compute") if ln.layer == "leaf_spine"))
    h1, h2 = _node_links_of_leaf(plan, leaf)[2:4]  # two host cables swapped on a leaf
    u1, u2 = _parallel_uplinks(plan)  # two parallel uplinks crossed between the same switches
    gone = [ln for ln in plan.links_of("compute") if ln.layer == "leaf_spine"][-1]  # one cable missing
    slow = _node_links_of_leaf(plan, leaf)[-1]  # one link forced down to 4xDDR
    built = ib_faults.swap_switch_ends(plan, h1.id, h2.id)
    built = ib_faults.swap_switch_ends(built, u1.id, u2.id)
    built = ib_faults.drop(built, gone.id)
    net = render_netfile(built, "compute", sim_speed=_sim_speed(plan))
    node, sw = _node_and_switch(plan, slow)
    net = ib_faults.degrade(
        net, sw.device, sw.port_number, f"{node.device} {node.port.split('/')[0]}", node.port_number, "4xDDR"
    )
    dump = discover(simulator, net, tmp_path, "faulty")

    code, report = verify_json(blueprint, dump, *_speed_args(plan))
    assert code == 1
    wanted_rate = f"4x{_sim_speed(plan) or 'HDR'}"
    got = {(r["status"], r["cable"]) for r in report["results"]}
    assert got == {
        ("miswired", h1.id),
        ("miswired", h2.id),
        ("miswired", u1.id),
        ("miswired", u2.id),
        ("missing", gone.id),
        ("rate", slow.id),
    }
    assert report["summary"] == {
        "planned": len(plan.links_of("compute")),
        "discovered_links": len(plan.links_of("compute")) - 1,
        "miswired": 4,
        "missing": 1,
        "rate": 1,
        "unexpected": 0,
        "ok": len(plan.links_of("compute")) - 6,
        "rate_unchecked": 0,
    }
    by_cable = {r["cable"]: r for r in report["results"]}

    # both ends named, for the swapped host cables
    n1, s1 = _node_and_switch(plan, h1)
    n2, s2 = _node_and_switch(plan, h2)
    r1 = by_cable[h1.id]
    ends = {
        (r1["a"]["device"], r1["a"]["port"]): r1["a_connected_to"],
        (r1["b"]["device"], r1["b"]["port"]): r1["b_connected_to"],
    }
    # ports as the cabling sheet labels them (cage/sub-port on twin-port cages)
    assert ends[(n1.device, n1.port)] == {
        "device": s2.device,
        "port": s2.port,
        "identified": True,
        "sheet_port": s2.label_port,
    }
    assert ends[(s1.device, s1.port)] == {
        "device": n2.device,
        "port": n2.port,
        "identified": True,
        "sheet_port": n2.label_port,
    }

    def sw(ep) -> str:  # type: ignore[no-untyped-def]
        cage = f" [{ep.label_port}]" if ep.label_port != f"P{ep.port}" else ""
        return f"{ep.device} port {ep.port}{cage}"

    assert f"{sw(s1)} goes to {n2.device} {n2.port}, plan says {n1.device} {n1.port}" in r1["message"]
    assert f"{n1.device} {n1.port} goes to {sw(s2)}, plan says {sw(s1)}" in r1["message"]

    # crossed parallel uplinks: same two switches, different ports (ibnetdiscover --diff misses this)
    r2 = by_cable[u1.id]
    assert {r2["a_connected_to"]["device"], r2["b_connected_to"]["device"]} == {u1.a.device, u1.b.device}
    assert (r2["a_connected_to"]["port"], r2["b_connected_to"]["port"]) != (u1.b.port, u1.a.port)

    assert by_cable[gone.id]["a_connected_to"] is None and by_cable[gone.id]["b_connected_to"] is None
    assert (by_cable[slow.id]["expected_rate"], by_cable[slow.id]["found_rate"]) == (wanted_rate, "4xDDR")

    # the text report names the same cables
    code, text, _ = run_cli("verify-cabling", blueprint, "--discovered", str(dump), *_speed_args(plan))
    assert code == 1
    for cable in (h1.id, h2.id, u1.id, u2.id, gone.id, slow.id):
        assert re.search(rf"^(MISWIRED|MISSING|WRONG RATE)\s+{cable}\s", text, re.M), text


def test_firmware_default_description_and_node_name_map(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """An HCA whose description was never set, on its planned port, is identified by position: its cable is
    ok with a warning that the description is not set (issue 24: it used to be a MISWIRED false alarm);
    naming its GUID identifies it outright."""
    plan = plan_of(FT2)
    net = render_netfile(plan, "compute")
    victim = "gpu002 mlx5_0"
    net = net.replace(f'# "{victim}"\n', '# "MT4123 ConnectX6   Mellanox Technologies"\n')
    dump = discover(simulator, net, tmp_path, "fwdesc")
    code, report = verify_json(FT2, dump)
    assert code == 0, report["results"]
    assert report["unidentified"] == []
    assert any(
        w.startswith("gpu002 (mlx5_0/1): HCA 0x") and "identified by position only" in w
        for w in report["warnings"]
    ), report["warnings"]

    guid = re.search(
        r'^caguid=0x([0-9a-f]+)\s*\n(?:.*\n)?Ca\s+\d+\s+"H-[0-9a-f]+"\s+# "MT4123', dump.read_text(), re.M
    )
    assert guid, dump.read_text()[:2000]
    name_map = tmp_path / "node-name-map"
    name_map.write_text(f'0x{int(guid.group(1), 16):016x} "{victim}"\n')
    code, report = verify_json(FT2, dump, "--node-name-map", str(name_map))
    assert code == 0, report["results"]


def test_sharp_aggregation_node_is_left_out(
    simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """A SHARP Aggregation Node (devid 0xcf09) on a switch's last port is not a cable."""
    plan = plan_of(FT2)
    leaf = plan.switches("compute")[0]
    net = render_netfile(plan, "compute")
    sharp_port = plan.cluster.catalog.switch(leaf.model).sharp_port
    assert sharp_port is not None and sharp_port > leaf.ports
    # the aggregation node hangs off port `sharp_port` (41 on a QM8700 "Switch 41")
    net = net.replace(f'Switch\t{leaf.ports} "S-{leaf.name}"', f'Switch\t{sharp_port} "S-{leaf.name}"')
    lines = net.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(f'Switch\t{sharp_port} "S-{leaf.name}"'))
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("["))
    lines.insert(
        end, f'[{sharp_port}]\t"H-sharp-an"[1]\t\t# "Mellanox Technologies Aggregation Node" lid 0 4xHDR'
    )
    lines += [
        "",
        "devid=0xcf09",
        'Ca\t1 "H-sharp-an"\t\t# "Mellanox Technologies Aggregation Node"',
        f'[1]\t"S-{leaf.name}"[{sharp_port}]\t\t# lid 0 lmc 0 "{leaf.name}" lid 0 4xHDR',
    ]
    dump = discover(simulator, "\n".join(lines) + "\n", tmp_path, "sharp")
    assert "Aggregation Node" in dump.read_text() and "devid=0xcf09" in dump.read_text()
    code, report = verify_json(FT2, dump)
    assert code == 0, report["results"]
    assert len(report["excluded_sharp_nodes"]) == 1


@pytest.mark.parametrize("fabric", ["compute", "storage"])
def test_rehearse_gives_ftree_the_guid_files_sm_guids_writes(
    fabric: str, simulator: Callable[[str, str], Simulator], tmp_path: Path
) -> None:
    """A rehearsal runs OpenSM's ftree with root and compute-node GUID files made from its own discovery;
    they are the files `blueprint sm-guids` writes for the same dump, read from the build alone (roots:
    the top tier by the cabling plan's A-lower-tier ends; compute nodes: the inventory's role_gpu pools).
    Before, rehearse took every CA port, the UFM appliances' and the storage servers' too, as compute nodes."""
    from generator.rehearse.build_input import read_build
    from generator.rehearse.infiniband import fabric_switches, ftree_of, guid_files, pool_hosts
    from generator.verify import sm_guids

    plan = plan_of(SUPERPOD)
    net = render_netfile(plan, fabric, sim_speed=_sim_speed(plan))
    dump = discover(simulator, net, tmp_path, f"sp-{fabric}").read_text()
    assert main(["generate", SUPERPOD, "-o", str(tmp_path / "build"), "-q"]) == 0
    build = read_build(tmp_path / "build")

    ftree = ftree_of(build, fabric, fabric_switches(net), pool_hosts(build.root))
    (tmp_path / "r").mkdir()
    roots, cns, n_roots, n_cns = guid_files(dump, tmp_path / "r", ftree)
    files = sm_guids.guid_files(plan, fabric, dump, "dump")

    def guids(text: str) -> set[str]:
        return {line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")}

    assert guids(roots.read_text()) == {f"0x{g:016x}" for g, _ in files.roots} and n_roots == len(files.roots)
    assert guids(cns.read_text()) == {f"0x{g:016x}" for g, _ in files.cns} and n_cns == len(files.cns)
    dgx_ports = sum(
        1 for link in plan.links_of(fabric) for ep in (link.a, link.b) if ep.device.startswith("dgx")
    )
    assert n_roots > 0 and n_cns == dgx_ports  # the GPU pool's ports, no UFM or storage server
