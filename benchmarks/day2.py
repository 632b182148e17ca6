"""The day-2 commands at the scale where they matter, each as a ratio to a floor measured in the same run.

Run: python benchmarks/day2.py [--fabric-sizes 16384,65536,102400] [--diff-sizes 16384,102400]
     [--cases verify-cabling,sm-guids,diff,acceptance-report] [--repeat 3]

Every case runs the real command (``generator.cli.main``, as the program runs it: its argv) in a fresh
process, so its CPU and its peak memory (ru_maxrss) are its own, counted until the command returns; a
wrapper around the functions the command calls splits its CPU into the plan build and what comes after
it. The floors run in fresh processes too, in the same run:

* verify-cabling, sm-guids: a discovered fabric of the synthetic 3-tier fat-tree of
  benchmarks/synthetic.py, made from the plan's expected ibnetdiscover file (generator/emit/
  ibnetdiscover.py) rewritten as ibnetdiscover prints a fabric (GUID lines, ``S-<guid>``/``H-<guid>``
  ids, CA port GUIDs, as in tests/verify/fixtures/tiny-ndr-compute-sim-hdr.ibnetdiscover), with faults
  injected: two host cables swapped on a leaf, one host port not cabled (its HCA absent), one
  leaf-spine link trained a generation slower (HDR on NDR, NDR on XDR). Floor: reading and splitting
  the dump (``read_bytes``, ``decode``, ``split``), as the issue names it. Beside it, the scan floor:
  reading the dump and finding every port line with one compiled regex over the text (SCAN_FLOOR), the
  least a parser must do to see each cable (about 5x the first, so 3x the first is out of any parser's
  reach). The case's figure is the command's CPU after the plan is built (reading, parsing,
  identifying, comparing, reporting); the plan build is shown beside it (benchmarks/run.py measures
  it). sm-guids runs with a node-name map of every node's GUID, as a site records them (without one
  the two swapped HCAs are not trusted and nothing is written); the faults are on host ports, so every
  root is found. Up to 65,536 GPUs the fabric is NDR on QM9700; the 102,400-GPU one is XDR on
  Quantum-X800 Q3400 at its native 144 ports (benchmarks/synthetic.py), so every port number fits the
  dump's 8 bits. The dump is synthesised from the plan: no ibsim is needed.
* diff: two plans of the same fat-tree, the new one a scalable unit larger (growth). Floor: a process
  that loads the blueprint and builds its plan, as `diff` does for each side. Case: `blueprint diff`.
  Both as whole processes (CPU from their rusage, start-up and exit included, as `time` shows them: the
  floor frees its plan at exit, diff its two before it returns); the in-process figures are shown beside.
  Three runs of each, interleaved; medians.
* acceptance-report: 1,000 nccl-tests outputs (standard text output, src/util.cu's format as
  tests/nccl_text.py writes it) of one-rail runs between ring neighbours of a 1,024-GPU fat-tree,
  one cable trained at HDR. Floor: reading and splitting the 1,000 files. Case: reading and checking
  them, modelling the system and comparing (the plan of 1,024 GPUs is shown beside).

Targets (issue 32, a benchmark, not a timed test): verify-cabling of a 100k-GPU discovery within 3x its
floor and 1 GB (checked at 102,400 GPUs); diff of two 100k-GPU plans within 2x building one plan
(the floor includes Python's start-up and imports once, the case once for two plans). The load average
is printed before and after: on a shared machine the figures are only comparable under similar load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(ROOT / "tests"))

from synthetic import fat_tree_blueprint  # noqa: E402

VERIFY_RATIO = 3.0  # verify-cabling of a 100k-GPU discovery: at most 3x its parse floor (issue 32)
VERIFY_PEAK_MB = 1024.0  # ... and at most 1 GB
DIFF_RATIO = 2.0  # diff of two 100k-GPU plans: at most 2x building one plan
TARGET_GPUS = 102_400
# The discovered fabric the 100k-GPU target is checked on: the 3-tier Q3400 (144 XDR ports) fat-tree of
# benchmarks/synthetic.py, whose port numbers all fit an InfiniBand dump's 8 bits.
FABRIC_TARGET_GPUS = TARGET_GPUS
FABRIC_CASES = {"verify-cabling", "sm-guids"}
RESULT_FILES = 1000
# what acceptance-report does with the results: read and check them, model the system, compare
ACCEPTANCE_PHASES = (
    "generator.perf.nccl_results:read_results",
    "generator.perf.system:system_for",
    "generator.perf.acceptance:compare",
)

# --- child processes -----------------------------------------------------------------------------

# Runs `blueprint ARGS` in this process; prints CPU seconds (all; in the plan build; after it; in each
# function named in argv[2], "module:function", wrapped where the command imports it from), peak RSS and
# the exit code as one JSON line.
COMMAND = r"""
import importlib, json, resource, sys, time
t0 = time.process_time()
import generator.plan.build as pb
marks = {}
def wrap(module, name, key):
    real = getattr(module, name)
    def timed(*a, **kw):
        start = time.process_time()
        try:
            return real(*a, **kw)
        finally:
            marks[key] = marks.get(key, 0.0) + time.process_time() - start
            marks["after_" + key] = time.process_time()
    setattr(module, name, timed)
wrap(pb, "plan_or_raise", "plan")
for spec in json.loads(sys.argv[2]):
    module, name = spec.split(":")
    wrap(importlib.import_module(module), name, name)
from generator.cli import main
sys.argv = ["blueprint", *json.loads(sys.argv[1])]
code = main()  # as the program runs it (its argv): what it hands to the exit is part of its run
end = time.process_time()
out = {"code": code, "cpu": end - t0, "after_plan": end - marks.get("after_plan", t0),
       "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
out.update({k: v for k, v in marks.items() if not k.startswith("after_")})
out.setdefault("plan", 0.0)
sys.stdout.write("\n" + json.dumps(out) + "\n")
"""

# The floor of the parsers: read the files and split them into lines, nothing else.
READ_FLOOR = r"""
import json, sys, time
paths = json.loads(sys.argv[1])
t0 = time.process_time()
lines = 0
for p in paths:
    with open(p, "rb") as fh:
        lines += len(fh.read().decode("utf-8", errors="replace").split("\n"))
print(json.dumps({"cpu": time.process_time() - t0, "lines": lines}))
"""

# A second, stricter reference for the dump readers: read the files and find every port line with one
# compiled regex over the whole text, its fields (ports, remote id, width and speed) made Python strings.
# What any parser must do at least to see each cable; reading and splitting alone (READ_FLOOR, the issue's
# floor) hands over lines with nothing read from them.
SCAN_FLOOR = r"""
import json, re, sys, time
paths = json.loads(sys.argv[1])
port = re.compile(r'^\[(\d+)\][^"\n]*"([^"\n]*)"\[(\d+)\][^\n]*? (\d+x)(\w+)$', re.M)
t0 = time.process_time()
ports = 0
for p in paths:
    with open(p, "rb") as fh:
        ports += len(port.findall(fh.read().decode("utf-8", errors="replace")))
print(json.dumps({"cpu": time.process_time() - t0, "ports": ports}))
"""

# The floor of diff: load the blueprint and build its plan, as diff does for each side.
PLAN_FLOOR = r"""
import json, resource, sys, time
t0 = time.process_time()
from generator.pipeline import load_and_resolve
from generator.plan.build import plan_or_raise
loaded, cluster = load_and_resolve(sys.argv[1])
plan = plan_or_raise(cluster, loaded.locate)
print(json.dumps({"cpu": time.process_time() - t0, "cables": len(plan.links),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# The expected ibnetdiscover file of a blueprint's compute fabric, and its node descriptions' GUIDs.
NETFILE = r"""
import sys
from generator.emit.ibnetdiscover import render_netfile
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan
plan = build_plan(load_and_resolve(sys.argv[1])[1])
with open(sys.argv[2], "w", encoding="utf-8") as fh:
    fh.write(render_netfile(plan, fabric="compute"))
print('{"cables": %d}' % len(plan.links_of("compute")))
"""


def child(code: str, *args: str, timeout_s: float = 3600) -> dict:
    """The child's JSON line, plus ``process_cpu``: the CPU of the whole process (user + system, from its
    rusage: start-up and exit included, what `time` shows a user)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout_s, env=env
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"child failed ({proc.returncode}): {(proc.stderr or proc.stdout)[-1500:]}")
    spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {**json.loads(lines[-1]), "process_cpu": spent}


def command(*argv: str, timed: tuple[str, ...] = ()) -> dict:
    return child(COMMAND, json.dumps(list(argv)), json.dumps(list(timed)))


def read_floor(paths: list[Path], repeat: int = 3, code: str = READ_FLOOR) -> float:
    return statistics.median(child(code, json.dumps([str(p) for p in paths]))["cpu"] for _ in range(repeat))


# --- a discovered fabric from the expected one -----------------------------------------------------

_HEADER = re.compile(r'^(Switch|Ca)\t(\d+) "([SH])-([^"]+)"(.*)$')
_PORT = re.compile(r'^\[(\d+)\]\t"([SH])-([^"]+)"\[(\d+)\](.*)$')
CA_BASE = 0x0010_0000_0000  # GUIDs of the synthetic fabric: CA n is CA_BASE + 2n, its port 1 that + 1
SWITCH_BASE = 0x0020_0000_0000
SLOWER = {"NDR": "HDR", "XDR": "NDR"}  # the rate fault: a link trained one InfiniBand generation down


def records(netfile: str) -> list[list[str]]:
    """The net file's records (a header line and its port lines); comment lines dropped."""
    out: list[list[str]] = []
    for block in netfile.split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln and not ln.startswith("#")]
        if lines:
            out.append(lines)
    return out


def _by_id(recs: list[list[str]]) -> dict[str, list[str]]:
    table = {}
    for rec in recs:
        m = _HEADER.match(rec[0])
        assert m, rec[0]
        table[f"{m.group(3)}-{m.group(4)}"] = rec
    return table


def _line_of(rec: list[str], port: int) -> int:
    return next(i for i, ln in enumerate(rec) if ln.startswith(f"[{port}]\t"))


def inject_faults(recs: list[list[str]]) -> tuple[list[list[str]], dict[str, int]]:
    """Two host cables swapped on a leaf, one host port not cabled, one leaf-spine link a generation slower
    (HDR on the NDR fabrics, NDR on the XDR one)."""
    table = _by_id(recs)
    leaf = next(r for r in recs if r[0].startswith("Switch") and sum('\t"H-' in ln for ln in r) >= 3)
    hosts = [i for i, ln in enumerate(leaf) if '\t"H-' in ln]
    # swap the far ends of the leaf's first two host ports, and the port each HCA names
    (i, j) = hosts[:2]
    mi, mj = _PORT.match(leaf[i]), _PORT.match(leaf[j])
    assert mi and mj
    leaf[i] = f'[{mi.group(1)}]\t"H-{mj.group(3)}"[{mj.group(4)}]{mj.group(5)}'
    leaf[j] = f'[{mj.group(1)}]\t"H-{mi.group(3)}"[{mi.group(4)}]{mi.group(5)}'
    for host, port in ((mi, mj.group(1)), (mj, mi.group(1))):
        ca = table[f"H-{host.group(3)}"]
        k = _line_of(ca, int(host.group(4)))
        ca[k] = re.sub(r'"\[(\d+)\]', f'"[{port}]', ca[k], count=1)
    # the third host port: its HCA absent from the dump (the cable is not plugged)
    gone = _PORT.match(leaf[hosts[2]])
    assert gone
    recs = [r for r in recs if r is not table[f"H-{gone.group(3)}"]]
    del leaf[hosts[2]]
    # a leaf-spine link trained a generation slower, as both ends report it
    up = next(k for k, ln in enumerate(leaf) if '\t"S-' in ln)
    mu = _PORT.match(leaf[up])
    assert mu
    planned = re.search(r"4x([A-Z]+)$", leaf[up])
    assert planned and planned.group(1) in SLOWER, leaf[up]
    rate, slower = f"4x{planned.group(1)}", f"4x{SLOWER[planned.group(1)]}"
    leaf[up] = leaf[up].replace(rate, slower)
    spine = table[f"S-{mu.group(3)}"]
    k = _line_of(spine, int(mu.group(4)))
    spine[k] = spine[k].replace(rate, slower)
    return recs, {"miswired": 2, "missing": 1, "rate": 1}


def discovered_dump(recs: list[list[str]]) -> tuple[str, str]:
    """The records as ibnetdiscover prints a fabric (GUID lines, GUID ids, CA port GUIDs, lids), and the
    node-name map of every node's GUID (``0x<guid> "description"``, as a site records them)."""
    guids: dict[str, int] = {}
    counts = {"Ca": 0, "Switch": 0}
    for rec in recs:
        m = _HEADER.match(rec[0])
        assert m
        base = CA_BASE + 2 * counts["Ca"] if m.group(1) == "Ca" else SWITCH_BASE + counts["Switch"]
        guids[f"{m.group(3)}-{m.group(4)}"] = base
        counts[m.group(1)] += 1
    lids = {key: n + 1 for n, key in enumerate(guids)}
    out: list[str] = ["#", "# Topology file: synthetic (benchmarks/day2.py)", "#", ""]
    names: list[str] = []
    for rec in recs:
        m = _HEADER.match(rec[0])
        assert m
        key = f"{m.group(3)}-{m.group(4)}"
        guid, ca = guids[key], m.group(1) == "Ca"
        desc = re.search(r'#\s*"([^"]*)"', rec[0])
        names.append(f'0x{guid:016x} "{desc.group(1) if desc else key}"')
        id_line = f"caguid=0x{guid:x}" if ca else f"switchguid=0x{guid:x}({guid:x})"
        out += ["vendid=0x0", "devid=0x0", f"sysimgguid=0x{guid:x}", id_line]
        tail = m.group(5).replace("lid 0", f"lid {lids[key]}", 1)
        out.append(f'{m.group(1)}\t{m.group(2)} "{m.group(3)}-{guid:016x}"{tail}')
        out += [_port_line(line, guid, ca, guids, lids) for line in rec[1:]]
        out.append("")
    return "\n".join(out), "\n".join(names) + "\n"


def _port_line(line: str, guid: int, ca: bool, guids: dict[str, int], lids: dict[str, int]) -> str:
    p = _PORT.match(line)
    assert p, line
    remote = f"{p.group(2)}-{p.group(3)}"
    rguid = guids[remote]
    tail = p.group(5)
    if ca:  # `[1](portguid) "S-<switch>"[port] # lid L lmc 0 "<switch>" lid L' rate`
        tail = tail.replace("lid 0 lmc", "lid 1 lmc", 1).replace("lid 0", f"lid {lids[remote]}", 1)
        return f'[{p.group(1)}]({guid + int(p.group(1)):x})\t"{p.group(2)}-{rguid:016x}"[{p.group(4)}]{tail}'
    far = f"({rguid + int(p.group(4)):x})" if p.group(2) == "H" else ""
    tail = tail.replace("lid 0", f"lid {lids[remote]}", 1)
    return f'[{p.group(1)}]\t"{p.group(2)}-{rguid:016x}"[{p.group(4)}]{far}{tail}'


# --- cases ---------------------------------------------------------------------------------------


class Row:
    """One printed line: a case, its floor, its CPU and peak, and the verdict on its target if any."""

    def __init__(self, case: str, size: str, floor: float, cpu: float, extra: str, target: str = "") -> None:
        self.case, self.size, self.floor, self.cpu, self.extra, self.target = (
            case,
            size,
            floor,
            cpu,
            extra,
            target,
        )

    @property
    def ratio(self) -> float:
        return self.cpu / self.floor if self.floor > 0 else float("inf")

    def line(self) -> str:
        return (
            f"{self.case:<18} {self.size:>8} {self.floor:8.2f} {self.cpu:8.2f} {self.ratio:7.1f}  "
            f"{self.extra}{'; ' + self.target if self.target else ''}"
        )


def _verdict(ok: bool, what: str) -> str:
    return f"target {what} {'met' if ok else 'MISSED'}"


def discovered_fabric(tmp: Path, gpus: int) -> tuple[Path, Path, Path, dict[str, int]]:
    """The blueprint, its discovered dump with faults and the site's node-name map."""
    bp = tmp / f"ft-{gpus}.yaml"
    bp.write_text(fat_tree_blueprint(gpus), encoding="utf-8")
    net = tmp / f"ft-{gpus}.net"
    child(NETFILE, str(bp), str(net))
    recs, faults = inject_faults(records(net.read_text(encoding="utf-8")))
    dump_text, names = discovered_dump(recs)
    dump, name_map = tmp / f"ft-{gpus}.ibnetdiscover", tmp / f"ft-{gpus}.node-name-map"
    dump.write_text(dump_text, encoding="utf-8")
    name_map.write_text(names, encoding="utf-8")
    net.unlink()
    return bp, dump, name_map, faults


def fabric_cases(tmp: Path, gpus: int, cases: set[str]) -> list[Row]:
    bp, dump, name_map, faults = discovered_fabric(tmp, gpus)
    floor = read_floor([dump])
    scan = read_floor([dump], code=SCAN_FLOOR)
    size = f"{gpus:,}"
    mb = dump.stat().st_size / 1e6
    rows = []
    if "verify-cabling" in cases:
        r = command("verify-cabling", str(bp), "--discovered", str(dump), "-q", "-o", str(tmp / "verify.txt"))
        assert r["code"] == 1, r  # the injected faults are found
        found = (tmp / "verify.txt").read_text(encoding="utf-8").strip().splitlines()[-1]
        target = ""
        if gpus >= FABRIC_TARGET_GPUS:
            ok = r["after_plan"] <= VERIFY_RATIO * floor and r["peak_mb"] <= VERIFY_PEAK_MB
            target = _verdict(ok, f"<= {VERIFY_RATIO:g}x floor, <= {VERIFY_PEAK_MB:g} MB")
        rows.append(
            Row(
                "verify-cabling",
                size,
                floor,
                r["after_plan"],
                f"dump {mb:.0f} MB; scan floor {scan:.2f} s ({r['after_plan'] / scan:.1f}x); "
                f"plan {r['plan']:.2f} s, all {r['cpu']:.2f} s, peak {r['peak_mb']:.0f} MB; "
                f"faults {faults} -> {found.split(' — ')[0]}",
                target,
            )
        )
    if "sm-guids" in cases:
        out = tmp / f"sm-{gpus}"
        r = command(
            "sm-guids",
            str(bp),
            "--discovered",
            str(dump),
            "--node-name-map",
            str(name_map),
            "-q",
            "-o",
            str(out),
            "--force",
        )
        assert r["code"] == 0, r
        cns = len((out / "cn_guids.conf").read_text(encoding="utf-8").splitlines())
        rows.append(
            Row(
                "sm-guids",
                size,
                floor,
                r["after_plan"],
                f"scan floor {scan:.2f} s ({r['after_plan'] / scan:.1f}x); plan {r['plan']:.2f} s, "
                f"all {r['cpu']:.2f} s, peak {r['peak_mb']:.0f} MB; {cns} cn lines",
            )
        )
    return rows


def _scalable_unit_nodes(gpus: int) -> int:
    return 32 if gpus <= 65536 else 128  # benchmarks/synthetic.py: the SU of QM9700 / Q3400 designs


def diff_case(tmp: Path, gpus: int, repeat: int = 3) -> Row:
    """Growth by one scalable unit: `diff` of the smaller and the full design vs building one plan. The
    floor and the case run ``repeat`` times, interleaved (a busy machine slows both alike); medians."""
    new = tmp / f"diff-new-{gpus}.yaml"
    old = tmp / f"diff-old-{gpus}.yaml"
    text = fat_tree_blueprint(gpus)
    nodes = gpus // 8
    new.write_text(text, encoding="utf-8")
    old.write_text(text.replace(f"count: {nodes},", f"count: {nodes - _scalable_unit_nodes(gpus)},"), "utf-8")
    floors, runs = [], []
    for _ in range(repeat):
        floors.append(child(PLAN_FLOOR, str(new)))
        runs.append(command("diff", str(old), str(new), "-q", "-o", str(tmp / "diff.txt")))
        assert runs[-1]["code"] == 1, runs[-1]
    keys = ("cpu", "process_cpu")
    floor = {**floors[0], **{k: statistics.median(f[k] for f in floors) for k in keys}}
    r = {k: statistics.median(x[k] for x in runs) for k in (*keys, "plan", "peak_mb")}
    # Whole processes, as `time` shows them: each process pays its start-up and frees its plans; counted
    # in-process, the floor stops when its plan is built while diff frees its two plans before it returns.
    ratio = r["process_cpu"] / floor["process_cpu"]
    target = _verdict(ratio <= DIFF_RATIO, f"<= {DIFF_RATIO:g}x") if gpus >= TARGET_GPUS else ""
    compare = r["cpu"] - r["plan"]
    return Row(
        "diff",
        f"{gpus:,}",
        floor["process_cpu"],
        r["process_cpu"],
        f"whole processes; floor: load + plan of one side ({floor['cables']:,} cables); two plans "
        f"{r['plan']:.2f} s, the rest (start-up, load, compare, report, freeing the plans) {compare:.2f} s; "
        f"in-process (floor until its plan is built, diff until it returns) {floor['cpu']:.2f} / "
        f"{r['cpu']:.2f} s = {r['cpu'] / floor['cpu']:.1f}x; peak {r['peak_mb']:.0f} MB",
        target,
    )


def acceptance_case(tmp: Path) -> Row:
    """1,000 one-rail runs between ring neighbours of a 1,024-GPU fat-tree (text output); the rail-5
    cable of dgx003 trained at HDR, so its runs reach half the bandwidth. Its CPU: reading and checking
    the results, modelling the system, comparing."""
    from nccl_text import nccl_text

    bp = tmp / "acceptance.yaml"
    bp.write_text(fat_tree_blueprint(1024), encoding="utf-8")
    results = tmp / "results"
    results.mkdir()
    hosts = [f"dgx{i:03d}" for i in range(1, 129)]
    sizes = [1 << k for k in range(20, 31)]  # 1 MiB .. 1 GiB, nccl-tests -b 1M -e 1G -f 2
    paths = []
    for n in range(RESULT_FILES):
        rail, i = divmod(n, len(hosts))
        pair = [hosts[i], hosts[(i + 1) % len(hosts)]]
        plateau = 24.0 if (rail == 5 and "dgx003" in pair) else 47.0
        rows = [(s, round(plateau * s / (s + (8 << 20)), 2)) for s in sizes]
        path = results / f"all_reduce_perf-rail{rail}-{pair[0]}-{pair[1]}.txt"
        path.write_text(nccl_text(pair, 1, rows), encoding="utf-8")
        paths.append(path)
    floor = read_floor(paths)
    r = command(
        "acceptance-report",
        str(bp),
        "--results",
        str(results),
        "-q",
        "-o",
        str(tmp / "acc.txt"),
        timed=ACCEPTANCE_PHASES,
    )
    assert r["code"] == 1, r
    cpu = sum(r[spec.split(":")[1]] for spec in ACCEPTANCE_PHASES)
    return Row(
        "acceptance-report",
        f"{RESULT_FILES:,} files",
        floor,
        cpu,
        f"read {r['read_results']:.2f} s, model {r['system_for']:.2f} s, compare {r['compare']:.2f} s; "
        f"plan {r['plan']:.2f} s, all {r['cpu']:.2f} s, peak {r['peak_mb']:.0f} MB",
    )


def _load() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--fabric-sizes", default=f"16384,65536,{FABRIC_TARGET_GPUS}", help="GPUs of the discovered fabrics"
    )
    ap.add_argument("--diff-sizes", default=f"16384,{TARGET_GPUS}", help="GPUs of the diffed designs")
    ap.add_argument("--cases", default="verify-cabling,sm-guids,diff,acceptance-report")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the diff case and its floor (medians)")
    args = ap.parse_args()
    cases = set(args.cases.split(","))
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}; {_load()}"
    )
    print(f"{'case':<18} {'size':>8} {'floor s':>8} {'CPU s':>8} {'x floor':>7}  notes", flush=True)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="cb-day2-") as tmp:
        if "acceptance-report" in cases:
            rows.append(acceptance_case(Path(tmp)))
            print(rows[-1].line(), flush=True)
        for gpus in [int(s) for s in args.fabric_sizes.split(",") if s] if cases & FABRIC_CASES else []:
            for row in fabric_cases(Path(tmp), gpus, cases):
                rows.append(row)
                print(row.line(), flush=True)
        for gpus in [int(s) for s in args.diff_sizes.split(",") if s] if "diff" in cases else []:
            rows.append(diff_case(Path(tmp), gpus, args.repeat))
            print(rows[-1].line(), flush=True)
    print(f"done; {_load()}")
    return 1 if any("MISSED" in r.target for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
