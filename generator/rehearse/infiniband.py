"""Rehearse an InfiniBand fabric: ibsim on the build's expected net file, discovery, OpenSM.

* simulation: ibsim runs ``cabling/ibnetdiscover/<fabric>.net`` (the plan's fabric in ibnetdiscover/ibsim
  form); Debian's ibsim 0.10 models link speeds only up to HDR, so NDR/XDR links are simulated at HDR
  (``SIM_SPEED``) and the report says so;
* discovery: ``ibnetdiscover`` from the master SM's host, every link compared with the net file from both
  ends by NodeDescription and port (the dump read by the parser ``verify-cabling`` uses);
* subnet manager: the generated master ``opensm.conf`` runs once (``opensm -F FILE -o``) with its paths
  moved into the rehearsal's directory, the ftree root and compute-node GUID files made from the
  discovery (top-tier switches: cores, else spines; every CA port); verdicts from its log: MASTER, SUBNET
  UP, the configured routing engine and no ``ERR`` line; the time it took is the time to converge;
* the same after each ``--fail`` device (removed from the simulated fabric, cumulatively).
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.emit.ibnetdiscover import ca_description
from generator.foreign import read_foreign_text
from generator.plan.attached import appliance_port_number
from generator.rehearse import partitions, sm_ha, tools
from generator.rehearse.build_input import MAX_FILE, Build, IbFabric
from generator.rehearse.cleanup import WORK_PREFIX, Reaper
from generator.rehearse.ibsim import SimulationFailed, Simulator, ca_of
from generator.rehearse.nvue import load_yaml
from generator.rehearse.verdict import FabricVerdict
from generator.verify.ibnetdiscover import parse_ibnetdiscover
from generator.verify.sm_guids import parse_nodes, render_guids

SIM_SPEED = "HDR"  # the fastest speed Debian's ibsim 0.10 parses (sim_net.c speed table)
_FAST = re.compile(r"\b(\d+x)(NDR|XDR)\b")
_PATH_KEYS = (
    "root_guid_file",
    "cn_guid_file",
    "partition_config_file",
    "log_file",
    "guid_routing_order_file",
)

Link = tuple[tuple[str, int], tuple[str, int]]


def simulated(text: str) -> tuple[str, str | None]:
    """The net file ibsim can run, and the note when speeds were lowered."""
    speeds = sorted({m.group(2) for m in _FAST.finditer(text)})
    if not speeds:
        return text, None
    note = f"{'/'.join(speeds)} links simulated at {SIM_SPEED} (ibsim 0.10 models nothing faster)"
    return _FAST.sub(rf"\g<1>{SIM_SPEED}", text), note


def without(text: str, devices: set[str]) -> str:
    """The net file with ``devices`` (NodeDescriptions) powered off: their records and every port to them."""
    ids = {m.group(1) for m in re.finditer(r'^\S+\s+\d+\s+"([^"]+)"\s*#\s*"([^"]*)"', text, re.M)
           if m.group(2) in devices}  # fmt: skip
    out, skipping = [], False
    for line in text.splitlines():
        if m := re.match(r'^\S+\s+\d+\s+"([^"]+)"', line):
            skipping = m.group(1) in ids
        elif not line.startswith("["):
            skipping = False
        if skipping or (line.startswith("[") and any(f'"{i}"[' in line for i in ids)):
            continue
        out.append(line)
    return _drop_unwired("\n".join(out) + "\n")


def _drop_unwired(text: str) -> str:
    """Records left without a single port line (CAs of a powered-off leaf) are dropped too."""
    blocks = re.split(r"\n(?=(?:Switch|Ca|Hca|Rt)\s)", text)
    keep = [b for b in blocks if not re.match(r"(?:Ca|Hca)\s", b) or re.search(r"^\[", b, re.M)]
    return "\n".join(keep)


def links(text: str, source: str) -> dict[Link, str | None]:
    """Each link by its two (NodeDescription, port) ends, sorted, with its rate (4xHDR)."""
    disc = parse_ibnetdiscover(text, source)
    desc = {k: n.desc for k, n in disc.nodes.items()}
    out: dict[Link, str | None] = {}
    for ln in disc.links:
        a, b = (desc.get(ln.a_node, ln.a_node), ln.a_port), (desc.get(ln.b_node, ln.b_node), ln.b_port)
        out[(min(a, b), max(a, b))] = ln.rate
    return out


def _end(device: str, port: str) -> tuple[str, int] | None:
    """A cabling-plan end as the net file (generator.emit.ibnetdiscover) names it: (switch, port), (``host
    mlx5_N``, HCA port) or (``appliance p<k>``, k), an appliance's k-th port (generator.plan.attached)."""
    if "/" in port:  # an HCA port, mlx5_0/1
        hca, _, number = port.rpartition("/")
        return (ca_description(device, hca), int(number)) if number.isdigit() else None
    if (k := appliance_port_number(port)) is not None:
        return ca_description(device, port), k
    return (device, int(port)) if port.isdigit() else None


def planned_links(build: Build, fabric: str, down: set[str]) -> set[Link]:
    """The fabric's cables of ``cabling/cables.csv`` (the sheet technicians cable from)."""
    out: set[Link] = set()
    for c in build.cables_of(fabric):
        a, b = _end(c.a, c.a_port), _end(c.b, c.b_port)
        if a and b and c.a not in down and c.b not in down:
            out.add((min(a, b), max(a, b)))
    return out


def compare(expected: dict[Link, str | None], found: dict[Link, str | None], plan: set[Link]) -> list[str]:
    """The discovery against the simulated net file, and both against the cabling plan."""
    out = [f"missing: {a[0]} port {a[1]} - {b[0]} port {b[1]}" for a, b in sorted(expected.keys() - found)]
    out += [f"not in the net file: {a[0]} port {a[1]} - {b[0]} port {b[1]} (cabling/cables.csv has it)"
            for a, b in sorted(plan - found.keys())]  # fmt: skip
    out += [f"not in cabling/cables.csv: {a[0]} port {a[1]} - {b[0]} port {b[1]}"
            for a, b in sorted(found.keys() - plan)]  # fmt: skip
    out += [f"unplanned: {a[0]} port {a[1]} - {b[0]} port {b[1]}" for a, b in sorted(found.keys() - expected)]
    for key in sorted(expected.keys() & found.keys()):
        if expected[key] != found[key]:
            (a, b), want, got = key, expected[key], found[key]
            out.append(f"{a[0]} port {a[1]} - {b[0]} port {b[1]}: {got}, planned {want}")
    return out


@dataclass(frozen=True)
class Ftree:
    """What ftree's GUID files hold: root switches by name, compute hosts (None: every host)."""

    roots: set[str]
    compute_hosts: set[str] | None


def ftree_of(build: Build, fabric: str, switches: set[str], pools: dict[str, str]) -> Ftree:
    """``pools``: host -> pool, as pool_hosts read it."""
    gpu = gpu_pools(build.root)
    hosts = {h for h, pool in pools.items() if pool in gpu}
    return Ftree(top_tier(build, fabric, switches), hosts if gpu else None)


def fabric_switches(netfile: str) -> set[str]:
    """The switch names (NodeDescriptions) of a net file."""
    return {m.group(1) for m in re.finditer(r'^Switch\s+\d+\s+"[^"]+"\s*#\s*"([^"]*)"', netfile, re.M)}


def top_tier(build: Build, fabric: str, switches: set[str]) -> set[str]:
    """The switches ftree must take as roots, as ``blueprint sm-guids`` does (generator.verify.sm_guids
    ``top_tier``: cores, else spines): the B ends of the cabling plan's spine-core cables, else of its
    leaf-spine cables (the A end is the lower tier, docs/cabling.md). A fabric without tiers (a torus,
    a hypercube) has none."""
    for layer in ("spine_core", "leaf_spine"):
        top = {c.b for c in build.cables_of(fabric) if c.layer == layer and c.b in switches}
        if top:
            return top
    return set()


def guid_files(dump: str, where: Path, ftree: Ftree) -> tuple[Path, Path, int, int]:
    """root_guids.conf (the top tier) and cn_guids.conf (the GPU pools' HCA ports, every HCA port when the
    build has no inventory to tell them), as sm-guids writes them (generator.verify.sm_guids)."""
    nodes = parse_nodes(dump, "ibnetdiscover")
    roots = [(n.guid, n.desc) for n in nodes if n.kind == "switch" and n.desc in ftree.roots]
    cns = [(g, f"{n.desc} {p}") for n in nodes
           if n.kind == "ca" and (ftree.compute_hosts is None or n.desc.split(" ")[0] in ftree.compute_hosts)
           for p, g in sorted(n.ports.items())]  # fmt: skip
    roots_file, cn = where / "root_guids.conf", where / "cn_guids.conf"
    roots_file.write_text(render_guids(tuple(roots)))
    cn.write_text(render_guids(tuple(cns)))
    return roots_file, cn, len(roots), len(cns)


def relocated_conf(conf: Path, files: dict[str, Path], out: Path) -> Path:
    """The generated opensm.conf with its file paths moved into the rehearsal's directory. The log and the
    partition file are set even where the file does not name them: OpenSM's defaults are the host's
    /var/log/opensm.log and /etc/opensm/partitions.conf (an SM host's production file), which the rehearsal
    must neither read nor write. The GUID files stay as the file has them: naming them changes routing."""
    lines, seen = [], set()
    for line in read_foreign_text(conf, MAX_FILE).splitlines():
        key = line.split()[0] if line.split() else ""
        relocated = key in _PATH_KEYS and key in files
        seen |= {key} if relocated else set()
        lines.append(f"{key} {files[key]}" if relocated else line)
    lines += [f"{key} {files[key]}" for key in _FORCED_KEYS if key in files and key not in seen]
    out.write_text("\n".join(lines) + "\n")
    return out


_FORCED_KEYS = ("log_file", "partition_config_file")


def engine_of(conf: Path) -> str:
    for line in read_foreign_text(conf, MAX_FILE).splitlines():
        if line.startswith("routing_engine "):
            return line.split()[1]
    return "minhop"  # OpenSM's default routing engine (opensm(8))


def sm_problems(log: str, engine: str, code: int | None) -> list[str]:
    out = []
    if "Entering MASTER state" not in log:
        out.append("OpenSM never entered MASTER state")
    if "SUBNET UP" not in log:
        out.append("OpenSM never reported SUBNET UP")
    first = engine.split(",")[0].strip()
    # OpenSM logs "<engine> tables configured on all switches" for the engine that routed
    # (osm_ucast_mgr_process); one that could not be set up or run falls back to minhop, with
    # "Failed to setup routing engine '<engine>'" when it could not even start
    configured = re.findall(r"(\S+) tables configured on all switches", log)
    if re.search(r"Failed to setup routing engine|cannot find or setup routing engine", log):
        out.append(f"OpenSM could not set up the {first} routing engine")
    if first not in configured:
        routed = f"{configured[-1]} configured the switches" if configured else "no engine configured them"
        out.append(f"the {first} routing engine did not configure every switch ({routed})")
    out += [f"OpenSM: {m.strip()}" for m in re.findall(r"ERR [0-9A-F]{4}:[^\n]*", log)[:10]]
    if code not in (0, None):
        out.append(f"opensm exited with {code}")
    return out


def _step(
    sim_text: str, fab: IbFabric, reaper: Reaper, work: Path, timeout_s: float, plan: set[Link],
    pools: dict[str, str], ftree: Ftree,
) -> tuple[dict[str, list[str]], float, dict[str, str]]:  # fmt: skip
    """One simulated fabric: (problems by check, OpenSM seconds, facts for the detail lines). ibsim failing,
    or a client of it not done in ``timeout_s``, fails the check it was running for."""
    netfile = work / f"{fab.name}.net"
    netfile.write_text(sim_text)
    sim = Simulator(reaper, netfile, work)
    found: dict[str, list[str]] = {}
    facts: dict[str, str] = {}
    stage, seconds = "simulation", 0.0
    try:
        sim.start()
        host_id = ca_of(sim_text, fab.members[0][0] if fab.members else "") or ca_of(sim_text, "")
        if host_id is None:
            return {"simulation": ["no CA with port 1 cabled to run the clients from"]}, 0.0, {}
        stage = "discovery"
        dump = sim.client(host_id, [tools.must("ibnetdiscover")], timeout_s)
        if dump.returncode != 0:
            return {"discovery": [f"ibnetdiscover failed: {dump.stderr.strip()[-300:]}"]}, 0.0, {}
        found["discovery"] = compare(links(sim_text, str(netfile)), links(dump.stdout, "ibnetdiscover"), plan)
        if not fab.members:
            return found, 0.0, {"sm": "no subnet manager configured"}
        roots, cns, n_roots, n_cns = guid_files(dump.stdout, work, ftree)
        files = {"root_guid_file": roots, "cn_guid_file": cns, "log_file": work / "opensm.log"}
        # without the build's partitions.conf, a path in the work directory that does not exist: OpenSM
        # then runs without a partition file rather than reading the host's /etc/opensm/partitions.conf
        files["partition_config_file"] = (
            run_partitions(fab.partitions, dump.stdout, pools, work)
            if fab.partitions is not None
            else work / "no-partitions.conf"
        )
        conf = relocated_conf(fab.members[0][1], files, work / "opensm.conf")
        (work / "opensm.log").unlink(missing_ok=True)
        stage = "subnet manager"
        t0 = time.monotonic()
        proc = sim.client(host_id, [tools.must("opensm"), "-F", str(conf), "-o"], timeout_s)
        seconds = time.monotonic() - t0
        log = (work / "opensm.log").read_text(errors="replace") if (work / "opensm.log").exists() else ""
        engine = engine_of(fab.members[0][1])
        found["subnet manager"] = sm_problems(log, engine, proc.returncode)
        facts["sm"] = (f"{fab.members[0][0]}'s opensm.conf: MASTER, SUBNET UP, {engine} "
                       f"({n_roots} roots, {n_cns} compute ports)")  # fmt: skip
        if not found["subnet manager"]:  # every step: after --fail too (issue 27)
            stage = "partitions"
            _pair(sim, fab, (host_id, sim_text, dump.stdout), files, pools, found, facts, seconds)
        return found, seconds, facts
    except SimulationFailed as exc:
        found[stage] = [*found.get(stage, []), str(exc)]
        return found, seconds, facts
    finally:
        # this step's OpenSM daemons go with its ibsim: the next step's clients take any child that exits as
        # the simulation gone
        for label in [label for label in reaper.procs if label.startswith(sm_ha.LABEL_PREFIX)]:
            reaper.stop(label)
        sim.stop()


def rehearse_infiniband(
    build: Build, fabric: str, reaper: Reaper, fail: list[str], timeout_s: float, verdict: FabricVerdict,
    text: str,
    outside: set[str],
) -> None:  # fmt: skip
    """Run the fabric (without the devices in ``outside`` when sampled) and record its checks."""
    fab = build.infiniband[fabric]
    sim_text, note = simulated(without(text, outside) if outside else text)
    if note:
        verdict.notes.append(note)
    work = reaper.directory(Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{reaper.tag[3:]}-")))
    down: set[str] = set(outside)
    pools = pool_hosts(build.root)
    ftree = ftree_of(build, fabric, fabric_switches(text), pools)
    for step in ["all up", *fail]:
        if step != "all up":
            down.add(step)
        suffix = "" if step == "all up" else f" (after --fail {step})"
        found, seconds, facts = _step(
            without(sim_text, down), fab, reaper, work, timeout_s, planned_links(build, fabric, down),
            pools, ftree,
        )  # fmt: skip
        if seconds:  # the one-shot OpenSM ran to its end: how long it took to bring the subnet up
            verdict.converge_s[step if step == "all up" else f"after --fail {step}"] = seconds
        if "takeover" in facts:
            verdict.converge_s["standby takeover" + suffix] = float(facts.pop("takeover"))
        details = {
            "simulation": "ibsim runs the planned fabric",
            "discovery": "ibnetdiscover finds every link of cables.csv and the net file, nothing else, "
            "at the planned rate",
            "subnet manager": facts.get("sm", ""),
            "partitions": facts.get("partitions", ""),
            "standby and takeover": facts.get("standby", ""),
        }
        for name, reasons in found.items():
            verdict.add(name + suffix, reasons, details[name])


def _inventory_groups(root: Path) -> dict[str, Any]:
    """The generated Ansible inventory's groups under ``all.children`` (empty without an inventory)."""
    path = root / "ansible" / "inventory.yml"
    if not path.is_file():
        return {}
    doc = load_yaml(read_foreign_text(path, MAX_FILE), str(path))
    children = (doc.get("all") or {}).get("children") or {} if isinstance(doc, dict) else {}
    return children if isinstance(children, dict) else {}


def pool_hosts(root: Path) -> dict[str, str]:
    """host -> pool, from the generated Ansible inventory's ``pool_<name>`` groups (empty without one)."""
    out: dict[str, str] = {}
    for group, body in _inventory_groups(root).items():
        hosts = body.get("hosts") if isinstance(body, dict) else None
        if str(group).startswith("pool_") and isinstance(hosts, dict):
            out.update({str(h): str(group)[len("pool_") :] for h in hosts})
    return out


def gpu_pools(root: Path) -> set[str]:
    """The pools of the inventory's ``role_gpu`` group: whose ports ftree takes as compute nodes."""
    body = _inventory_groups(root).get("role_gpu")
    children = body.get("children") if isinstance(body, dict) else None
    if not isinstance(children, dict):
        return set()
    return {str(g)[len("pool_") :] for g in children if str(g).startswith("pool_")}


def ca_ports(dump: str) -> dict[int, tuple[str, int]]:
    """Port GUID -> ('<host> <hca>/<port>', port number) for every HCA port of a discovery."""
    return {g: (f"{n.desc}/{p}", p) for n in parse_nodes(dump, "ibnetdiscover") if n.kind == "ca"
            for p, g in n.ports.items()}  # fmt: skip


def _pool_of(ports: dict[int, tuple[str, int]], pools: dict[str, str]) -> dict[int, str]:
    return {g: pools[d.split(" ")[0]] for g, (d, _) in ports.items() if d.split(" ")[0] in pools}


def run_partitions(conf: Path, dump: str, pools: dict[str, str], work: Path) -> Path:
    """The generated partitions.conf with its pool partitions' port GUIDs filled in (as sm-guids does)."""
    ports = ca_ports(dump)
    by_pool: dict[str, list[int]] = {}
    for g, pool in _pool_of(ports, pools).items():
        by_pool.setdefault(pool, []).append(g)
    out = work / "partitions.conf"
    out.write_text(partitions.filled(read_foreign_text(conf, MAX_FILE), by_pool))
    return out


def _pair(
    sim: Simulator, fab: IbFabric, where: tuple[str, str, str], files: dict[str, Path], pools: dict[str, str],
    found: dict[str, list[str]], facts: dict[str, str], sweep_s: float,
) -> None:  # fmt: skip
    """The master as a daemon: partitions per port; then the standby and the takeover. ``sweep_s``: what the
    one-shot OpenSM took on this fabric and machine, which the daemons' waits allow for (sm_ha.waits)."""
    host_id, sim_text, dump = where
    work = sim.workdir
    members = []
    for n, (host, conf) in enumerate(fab.members[:2]):
        log = work / f"opensm-{n}-{host}.log"
        relocated = relocated_conf(conf, {**files, "log_file": log}, work / f"opensm-{n}-{host}.conf")
        with relocated.open("a") as f:
            f.write("force_log_flush TRUE\n")  # opensm.conf: flush after each message (followed here)
        members.append(sm_ha.Sm(host, relocated, log, f"{sm_ha.LABEL_PREFIX}{host}"))
    master = members[0]
    sm_ha.start(sim, master, host_id)
    waits = sm_ha.waits(sweep_s)
    if sm_ha.wait_log(sim, master, ("Entering MASTER state", "SUBNET UP"), waits.subnet_up_s) is None:
        found["subnet manager"].append(f"{master.host}'s OpenSM daemon never reached SUBNET UP")
        return
    if files["partition_config_file"].is_file():  # the build's partitions, not the stand-in of none
        ports = ca_ports(dump)
        sm_port = next((g for g, (d, p) in ports.items() if p == 1 and _node_is(sim_text, host_id, d)), None)
        ports.pop(sm_port, None)  # type: ignore[arg-type]
        text = files["partition_config_file"].read_text()
        found["partitions"], facts["partitions"] = sm_ha.port_tables(sim, host_id, ports,
                                                                    _pool_of(ports, pools), text)  # fmt: skip
    if len(members) < 2:
        return
    # members that are no host of the fabric (SM appliances named `master`/`standby`) run from another CA,
    # as the master does from the first one
    standby_id = ca_of(sim_text, members[1].host) or _other_ca(sim_text, host_id)
    if standby_id is None:
        found["standby and takeover"] = [f"{members[1].host} (standby): no second cabled HCA port to run on"]
        return
    problems, facts["standby"], seconds = sm_ha.takeover(
        sim, (master, host_id), (members[1], standby_id), waits
    )
    found["standby and takeover"] = problems
    facts["takeover"] = str(seconds)


def _other_ca(net: str, taken: str) -> str | None:
    """The first CA record other than ``taken`` whose port 1 is cabled."""
    for m in re.finditer(r'^(?:Ca|Hca)\s+\d+\s+"([^"]+)"[^\n]*\n\[1\]', net, re.M):
        if m.group(1) != taken:
            return m.group(1)
    return None


def _node_is(net: str, node_id: str, desc: str) -> bool:
    """Whether the CA record ``node_id`` of the net file has NodeDescription ``desc`` (minus the port)."""
    m = re.search(rf'^(?:Ca|Hca)\s+\d+\s+"{re.escape(node_id)}"\s*#\s*"([^"]*)"', net, re.M)
    return m is not None and desc.rsplit("/", 1)[0] == m.group(1)
