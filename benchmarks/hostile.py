"""Benchmark: `validate` of hostile blueprints of at most 4 KB finishes in seconds and under 1 GB.

Run: python benchmarks/hostile.py [--max-seconds 30] [--max-mb 1024]
Each blueprint is validated in a fresh process (peak RSS = ru_maxrss of that child, under an
address-space cap so a runaway case ends in MemoryError instead of taking the machine). The cases are
the designs that cost the most per byte of YAML: topologies whose size grows exponentially or
multiplicatively in one number (hypercube dimension, torus dimensions, dragonfly groups), node counts,
the largest design inside the limits of docs/architecture.md, and YAML-level bombs. Exit status 1 if a
case misses a target, exits 3 or prints a traceback.

The second table (issue 31) does the same for every reader of a file this tool did not write: Pulumi
stack outputs (`inventory --from-stack`), ibnetdiscover dumps (`verify-cabling`, `sm-guids`), LLDP JSON,
nccl-tests results (`acceptance-report`, text and `-J` JSON), advice JSON (`init --from-advice`) and the
files of a build folder a user may have edited (manifest.json, pulumi/cluster.json, the Pulumi stack file, a
RoCE build's CSV files and startup.yaml, read back by generate, cabling, inventory and rehearse). Each
hostile input must end in exit 1 or 2 with the offending file named in the message, within the same time
and memory targets; a case whose input is valid however costly (``EXPECTED_EXITS``) must end in the exit it
names instead. `--case TEXT` runs only the cases whose name holds TEXT (both tables).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import fat_tree_blueprint

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

MAX_BYTES = 4096
AS_CAP = 3 << 30  # address-space cap of each child (Python maps more than it touches)
HEAD = "apiVersion: cluster-blueprint/v1\nname: hostile\n"
SITE = "site: {rows: 500, racks_per_row: 500, rack: {units: 48, power_kw: 200}}\n"

STAGE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from generator.cli import main
code = main(["validate", sys.argv[1], "--format", "json", "-o", sys.argv[2]])
print(json.dumps({"code": code, "seconds": time.perf_counter() - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def pools(count: int, server: str = "dgx-h100", n: int = 1) -> str:
    return "pools:\n" + "".join(
        f"- {{name: p{i}, role: gpu, count: {count}, server: {server}}}\n" for i in range(n)
    )


def cases() -> Iterator[tuple[str, str]]:
    for d in (12, 16, 20):
        yield (
            f"hypercube d={d}, 2 nodes on switches",
            HEAD + SITE + pools(2, "pcie-l40s-8") + "fabrics:\n  compute:\n    technology: infiniband-hdr\n"
            f"    topology: {{kind: hypercube, dimension: {d}, attach: switch, switch: qm8700, "
            "nodes_per_switch: 2}\n",
        )
    for dims in ("[1024, 1024, 1024]", "[1024, 1024, 1024, 1024, 1024, 1024]", "[128, 128]"):
        yield (
            f"torus {dims} of switches",
            HEAD + SITE + pools(4) + "fabrics:\n  compute:\n    technology: ethernet-100\n"
            f"    topology: {{kind: torus, dimensions: {dims}, attach: switch, switch: sn5600}}\n",
        )
    yield (
        "torus [1024, 1024] direct",
        HEAD + SITE + pools(4) + "fabrics:\n  compute:\n    technology: ethernet-100\n"
        "    topology: {kind: torus, dimensions: [1024, 1024], attach: direct}\n",
    )
    # a cube routes packed jobs over its cables (generator/perf/routes.py): at most a million edge visits each
    yield (
        "torus [16, 16, 16] of switches, 8,192 nodes",
        HEAD + SITE + pools(8192) + "fabrics:\n  compute:\n    technology: roce-v2-400\n"
        "    topology: {kind: torus, dimensions: [16, 16, 16], attach: switch, switch: sn5600, "
        "nodes_per_switch: 2}\n",
    )
    # was 89 s: ECMP hashing counted over the torus's multinomial shortest-path count, not a node's ports
    yield (
        "torus [32, 32] direct, 1,024 nodes",
        HEAD + SITE + pools(1024) + "fabrics:\n  compute:\n    technology: ethernet-100\n"
        "    topology: {kind: torus, dimensions: [32, 32], attach: direct}\n",
    )
    yield (
        "dragonfly 100,000 groups",
        HEAD + SITE + pools(16) + "fabrics:\n  compute:\n    technology: roce-v2-400\n"
        "    topology: {kind: dragonfly, switch: sn5600, p: 512, a: 512, h: 512, groups: 100000}\n",
    )
    yield ("64 pools x 200,000 nodes", HEAD + SITE + pools(200_000, n=64))
    yield ("131,072-GPU 3-tier fat-tree (largest inside the limits)", fat_tree_blueprint(131_072))
    yield (
        "alias bomb",
        HEAD
        + "x0: &a0 [1,1,1,1,1,1,1,1,1]\n"
        + "".join(f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
        + pools(1),
    )
    yield ("flow nesting 3,800 deep", HEAD + pools(1) + "workload: " + "[" * 1900 + "]" * 1900 + "\n")
    yield ("a 3,900-digit number", HEAD + pools(1) + "workload: {params: 1" + "0" * 3900 + "}\n")
    # issue 31: inside the absolute limits, 2 nodes asked for 16,384 routers (18 s to validate, generate
    # wrote 765 MB); refused by the size budget of generator/limits.py before anything is built
    yield (
        "dragonfly 16,384 routers for 2 nodes",
        HEAD + "site: {rows: 40, racks_per_row: 40}\n" + pools(2) + "fabrics:\n  compute:\n"
        "    technology: roce-v2-400\n"
        "    topology: {kind: dragonfly, switch: sn5600, p: 8, a: 32, h: 16, groups: 512}\n",
    )
    yield (COMMENTS, HEAD + pools(1) + "# c\n" * 800_000)  # was 34 s: ruamel's comment tokens


# issue 31: the one case larger than MAX_BYTES (a blueprint's own limit is 4 MiB, generator/load.py)
COMMENTS = "800,000 comment lines (3.2 MB)"


def _capped_child(args: list[str]) -> dict[str, float | int | str]:
    """Run one measuring stage in a fresh Python under the address-space cap; its last line is its JSON."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (AS_CAP, AS_CAP))

    proc = subprocess.run(
        [sys.executable, "-c", *args], capture_output=True, text=True, timeout=600, preexec_fn=cap
    )
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        return {"code": proc.returncode, "seconds": -1, "peak_mb": -1, "error": proc.stderr.strip()[-300:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(text: str, tmp: Path) -> dict[str, float | int | str]:
    path = tmp / "bp.yaml"
    path.write_text(text)
    return _capped_child([STAGE, str(path), str(tmp / "report.json")])


# ---- foreign inputs (issue 31) -------------------------------------------------------------------------
FOREIGN_STAGE = r"""
import io, json, resource, sys, time
from contextlib import redirect_stderr, redirect_stdout
t0 = time.perf_counter()
from generator.cli import main
out, err = io.StringIO(), io.StringIO()
with redirect_stdout(out), redirect_stderr(err):
    code = main(json.loads(sys.argv[1]))
print(json.dumps({"code": code, "seconds": time.perf_counter() - t0, "said": err.getvalue()[-400:],
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
IB_EXAMPLE = "hdr-fat-tree-a100.yaml"
GCP_EXAMPLE = "gcp-a3-ultra.yaml"
ROCE_EXAMPLE = "roce-rail-2tier.yaml"
GUID = "0x" + "1" * 16


def _gcp_outputs(**node: object) -> str:
    base = {"address": "10.0.0.2", "zone": "europe-west1-b", "project": "test-project-1"}
    return json.dumps({"blueprint": "gcp-a3-ultra", "nodes": {"a3u-001": {**base, **node}}})


def _dump_line(port: str = "1", guid: str = GUID) -> str:
    return (
        f"vendid=0x2c9\ndevid=0xcf08\nsysimgguid={guid}\nswitchguid={guid}({guid})\n"
        f'Switch\t40 "S-{guid[2:]}"\t\t# "c-leaf-su1-r0" enhanced port 0 lid 1 lmc 0\n'
        f'[{port}]\t"H-{"2" * 16}"[1](2222222222222222)\t\t# "dgx001 mlx5_0" lid 2 4xHDR\n'
    )


def _results_text(busbw: str) -> str:
    return (
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n"
        "#  Rank  0 Group  0 Pid 1 on dgx001 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong"
        "     time   algbw   busbw #wrong\n"
        f"           8             2     float     sum      -1    10.0    0.00    {busbw}      0"
        f"    10.0    0.00    {busbw}      0\n"
    )


# A valid nccl-tests run followed by blank lines is a valid log: nccl-tests' output holds blank lines and the
# reader skips them (generator.perf.nccl_results._lines), so the report compares the run and, its one row
# reaching the prediction, exits 0. The case measures the time blank lines cost (60 MiB: once past 600 s).
BLANK_TAIL = "nccl-tests: a run then 60 MiB of empty lines"
# the exits a case must end in, where it is not the refusal (1 or 2) every other hostile input must get
# A dump of one leaf followed by empty lines: sm-guids reads it whole and finds none of the plan's top tier,
# exit 1 with the dump named (its own reader's record-head pattern took the rest of an empty-line run at every
# line: 30,000 empty lines took 87 s)
SMG_BLANK_TAIL = "sm-guids: a dump then 8 MiB of empty lines"
# A node-name map of valid lines whose names hold 4,080 blanks, with a dump of one leaf: sm-guids reads the
# map (verify-cabling's reader) and finds none of the plan's top tier, exit 1 with the dump named (a lazy name
# pattern retried the blanks at each character of the name: 300 such lines took 56 s, 60 MiB ~50 min)
NNM_BLANKS = "node-name map: 60 MiB of names with 4,080 blanks in them"
EXPECTED_EXITS: dict[str, tuple[int, ...]] = {BLANK_TAIL: (0,), SMG_BLANK_TAIL: (1,), NNM_BLANKS: (1,)}
REFUSED = (1, 2)


def expected_exits(name: str) -> tuple[int, ...]:
    return EXPECTED_EXITS.get(name, REFUSED)


def missed(name: str, r: dict[str, float | int | str], tmp: str, max_seconds: float, max_mb: float) -> bool:
    """Whether a foreign case's result misses: another exit than the case's, over time or memory, or a
    refusal that does not name the file (under ``tmp``, or ``<stdin>``)."""
    expected = expected_exits(name)
    located = any(part in str(r.get("said", "")) for part in (tmp, "<stdin>"))
    return (
        "error" in r
        or r["code"] not in expected
        or (0 not in expected and not located)
        or float(r["seconds"]) > max_seconds
        or float(r["peak_mb"]) > max_mb
    )


def foreign_cases(root: Path, builds: dict[str, Path]) -> Iterator[tuple[str, list[str]]]:
    """(name, argv) with the hostile files written under ``root``."""

    def put(name: str, data: str | bytes) -> str:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        return str(path)

    def zero(name: str) -> str:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to("/dev/zero")
        return str(path)

    gcp, ib = str(builds["gcp"]), str(EXAMPLES / IB_EXAMPLE)
    inv = ["inventory", gcp, "-o", str(root / "inv.yml"), "--from-stack"]
    yield (
        "stack: lookup template in address",
        [*inv, put("s1.json", _gcp_outputs(address="{{ lookup('pipe','id') }}"))],
    )
    yield (
        "stack: $(...) in the GCP zone",
        [*inv, put("s2.json", _gcp_outputs(zone="europe-west1-b$(touch x)"))],
    )
    yield (
        "stack: 100,000-deep nesting",
        [*inv, put("s3.json", '{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}")],
    )
    yield (
        "stack: NaN and a 400-digit counter",
        [*inv, put("s4.json", _gcp_outputs(su=10**400).replace("10.0.0.2", "NaN"))],
    )
    yield "stack: symlink to /dev/zero", [*inv, zero("s5.json")]
    yield "stack: 17 MiB", [*inv, put("s6.json", " " * (17 << 20))]
    verify = ["verify-cabling", ib, "--discovered"]
    smg = ["sm-guids", ib, "-o", str(root / "smg"), "--discovered"]
    yield "ibnetdiscover: 164-bit GUID", [*verify, put("d1.net", _dump_line(guid="0x" + "f" * 41))]
    yield "ibnetdiscover: 5,000-digit port", [*smg, put("d2.net", _dump_line(port="9" * 5000))]
    yield "ibnetdiscover: 67 MiB", [*verify, put("d3.net", _dump_line() * ((67 << 20) // len(_dump_line())))]
    yield "ibnetdiscover: symlink to /dev/zero", [*smg, zero("d4.net")]
    # each empty line made the record-head pattern take the rest of the run before failing: 40,000 took 45 s
    yield "ibnetdiscover: 8 MiB of empty lines", [*verify, put("d5.net", "\n" * (8 << 20) + "x\n")]
    yield SMG_BLANK_TAIL, [*smg, put("d7.net", _dump_line() + "\n" * (8 << 20))]
    blanks = "0x1111 a" + " " * 4080 + "b\n"
    nnm = ["--node-name-map", put("m1.txt", blanks * ((60 << 20) // len(blanks)))]
    yield NNM_BLANKS, [*smg, put("d8.net", _dump_line()), *nnm]
    # an unanchored search for an over-long line restarted at every character (64 MiB of such lines: 40 s)
    long_lines = ("x" * 4096 + "\n") * 8000
    yield "ibnetdiscover: 32 MiB of 4,096-character lines", [*verify, put("d6.net", long_lines)]
    lldp = root / "lldp"
    yield "lldp: NaN and deep nesting", [*verify, str(lldp), "--fabric", "management"]
    put("lldp/sw1.json", '{"lldp": {"interface": ' + "[" * 5000 + "]" * 5000 + "}}")
    put("lldp/sw2.json", '{"lldp": NaN}')
    acc = ["acceptance-report", ib, "--results"]
    put("r1/all_reduce.txt", _results_text("nan"))
    yield "nccl-tests text: busbw nan", [*acc, str(root / "r1")]
    put("r2/all_reduce.json", json.dumps({"config": {"devices": [{"rank": "abc", "hostname": "dgx001"}]}}))
    yield "nccl-tests JSON: rank 'abc'", [*acc, str(root / "r2")]
    for i in range(6):
        put(f"r3/run{i}.txt", _results_text("1.0") * ((16 << 20) // len(_results_text("1.0")) - 1))
    yield "nccl-tests: 6 x 16 MiB", [*acc, str(root / "r3")]
    program = "# Collective test starting: all_reduce_perf\n" + _results_text("1.0")
    put("r5/log.txt", program * ((16 << 20) // len(program)))
    yield "nccl-tests: 16 MiB of one-row programs in one log", [*acc, str(root / "r5")]
    heads = "# Collective test starting: all_reduce_perf\n"
    put("r6/log.txt", heads * ((16 << 20) // len(heads)))
    yield "nccl-tests: 16 MiB of program headers, no rows", [*acc, str(root / "r6")]
    put("r7/all_reduce.txt", _results_text("1.0") + "\n" * (60 << 20))
    yield BLANK_TAIL, [*acc, str(root / "r7")]
    # a lazy pattern over NCCL's IB port list restarted at every repeated prefix: 60 MB on one line took 40 s
    prefix = " h:1:1 [0] NCCL INFO NET/IB : Using"
    put("r8/all_reduce.txt", _results_text("1.0") + prefix * ((60 << 20) // len(prefix)) + "\n")
    yield "nccl-tests: a run then a 60 MiB line of NET/IB prefixes", [*acc, str(root / "r8")]
    (root / "r4").mkdir()
    (root / "r4" / "all_reduce.txt").symlink_to("/dev/zero")
    yield "nccl-tests: symlink to /dev/zero", [*acc, str(root / "r4")]
    yield from _build_folder_cases(root, builds, put)
    adv = ["init", "-o", str(root / "starter.yaml"), "--from-advice"]
    yield "advice: params nan", [*adv, put("a1.json", '{"request": {"params": "nan", "mode": "pretrain"}}')]
    yield "advice: gpus 1e300", [*adv, put("a2.json", '{"request": {"params": 7e10, "gpus": 1e300}}')]
    yield "advice: symlink to /dev/zero", [*adv, zero("a3.json")]


DEEP_JSON = "[" * 100_000 + "]" * 100_000
# 780 bytes: nine-way lists of aliases to the list before, 9**9 ones when copied out (37 s and 1.2 GB)
STACK_BOMB = "x0: &a0 [1,1,1,1,1,1,1,1,1]\n" + "".join(
    f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 8)
)


def _build_folder_cases(
    root: Path, builds: dict[str, Path], put: Callable[[str, str | bytes], str]
) -> Iterator[tuple[str, list[str]]]:
    """(review h180) The files of a build folder the user may have edited, read back by generate, cabling,
    inventory and rehearse: each hostile edit in a copy of a build."""

    def copy(build: str, name: str) -> Path:
        shutil.copytree(builds[build], root / name)
        return root / name

    gcp_generate = ["generate", str(EXAMPLES / GCP_EXAMPLE), "-q", "--only", "pulumi,ansible", "-o"]
    g2 = copy("gcp", "g2")
    stack = g2 / "pulumi" / "Pulumi.prod.yaml"
    stack.write_text(STACK_BOMB + stack.read_text().replace('gcp:zone: "europe-west1-b"', "gcp:zone: *a7"))
    yield "generate: alias bomb in the Pulumi stack file", [*gcp_generate, str(g2)]
    g5 = copy("gcp", "g5")
    (g5 / "manifest.json").write_text('{"files": ' + DEEP_JSON + "}")
    yield "generate: manifest.json 100,000 deep", [*gcp_generate, str(g5)]
    put("ibm/manifest.json", '{"files": ' + DEEP_JSON + "}")
    (root / "ibm" / "cabling").mkdir()
    cabling = ["cabling", str(EXAMPLES / IB_EXAMPLE), "-o", str(root / "ibm" / "cabling"), "--force"]
    yield "cabling: the build's manifest.json 100,000 deep", cabling
    deep = copy("gcp", "gcp-deep")
    (deep / "pulumi" / "cluster.json").write_text('{"blueprint": ' + DEEP_JSON + "}")
    stack_outputs = put("s7.json", _gcp_outputs())
    yield (
        "inventory: cluster.json 100,000 deep",
        ["inventory", str(deep), "--from-stack", stack_outputs, "-o", "-"],
    )
    field = "x" * (200 * 1024)  # over csv.field_size_limit(), 128 KiB
    for rel, row in (
        ("cabling/cables.csv", f"999,{field},compute\n"),
        ("switches/asn-plan.csv", f"compute,c-leaf-x,leaf,sn5600,4200000099,{field},32,32\n"),
    ):
        roce = copy("roce", f"roce-{Path(rel).stem}")
        with (roce / rel).open("a") as fh:
            fh.write(row)
        yield f"rehearse: a 200 KiB field in {Path(rel).name}", ["rehearse", str(roce)]
    roce = copy("roce", "roce-deep")
    with (roce / "switches" / "compute" / "c-leaf-su1-r0" / "startup.yaml").open("a") as fh:
        fh.write(
            "- set:\n" + "".join("  " * (i + 2) + f"k{i}:\n" for i in range(349)) + "  " * 351 + "k: 1\n"
        )
    yield "rehearse: 350 nested keys in a startup.yaml", ["rehearse", str(roce)]


def run_foreign(argv: list[str]) -> dict[str, float | int | str]:
    return _capped_child([FOREIGN_STAGE, json.dumps(argv)])


def _generate(example: str, out: Path, outputs: str) -> Path:
    argv = ["generate", str(EXAMPLES / example), "-o", str(out), "-q", "--only", outputs]
    subprocess.run([sys.executable, "-m", "generator.cli", *argv], check=True)
    return out


def foreign_table(max_seconds: float, max_mb: float, only: str = "") -> bool:
    """Every hostile foreign input (whose name holds ``only``): exit 1 or 2, the file named, or the exit
    ``EXPECTED_EXITS`` names, in time and memory. True when one missed."""
    failed = False
    print(f"\n{'foreign input (command)':55} {'exit':>4} {'seconds':>8} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gcp = _generate(GCP_EXAMPLE, root / "gcp-build", "pulumi,ansible")
        # a RoCE build with its switch configurations and cabling plan, for `rehearse`
        roce = _generate(ROCE_EXAMPLE, root / "roce-build", "switches,cabling")
        for name, argv in list(foreign_cases(root, {"gcp": gcp, "roce": roce})):
            if only not in name:
                continue
            r = run_foreign(argv)
            refusal = 0 not in expected_exits(name)
            located = any(part in str(r.get("said", "")) for part in (root.name, "<stdin>"))
            bad = missed(name, r, root.name, max_seconds, max_mb)
            failed |= bad
            print(
                f"{name:55} {r['code']:>4} {float(r['seconds']):8.2f} {float(r['peak_mb']):8.0f}"
                + ("  MISSED" if bad else "")
                + ("" if located or not refusal or "error" in r else "  (file not named)")
                + (f"  {r['error']}" if "error" in r else ""),
                flush=True,
            )
    return failed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--max-mb", type=float, default=1024.0)
    ap.add_argument("--case", default="", help="run only the cases whose name holds this text")
    args = ap.parse_args()
    failed = False
    print(f"{'case':55} {'bytes':>5} {'exit':>4} {'seconds':>8} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in cases():
            if args.case not in name:
                continue
            size = len(text.encode())
            assert size <= MAX_BYTES or name == COMMENTS, f"{name}: {size} bytes"
            r = run(text, Path(tmp))
            bad = (
                "error" in r
                or r["code"] not in (0, 1, 2)
                or float(r["seconds"]) > args.max_seconds
                or float(r["peak_mb"]) > args.max_mb
            )
            failed |= bad
            print(
                f"{name:55} {size:5} {r['code']:>4} {float(r['seconds']):8.2f} {float(r['peak_mb']):8.0f}"
                + ("  MISSED" if bad else "")
                + (f"  {r['error']}" if "error" in r else ""),
                flush=True,
            )
    failed |= foreign_table(args.max_seconds, args.max_mb, args.case)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
