"""Benchmark: `validate` of hostile blueprints of at most 4 KB finishes in seconds and under 1 GB.

Run: python benchmarks/hostile.py [--max-seconds 30] [--max-mb 1024]
Each blueprint is validated in a fresh process (peak RSS = ru_maxrss of that child, under an
address-space cap so a runaway case ends in MemoryError instead of taking the machine). The cases are
the designs that cost the most per byte of YAML: topologies whose size grows exponentially or
multiplicatively in one number (hypercube dimension, torus dimensions, dragonfly groups), node counts,
the largest design inside the limits of docs/architecture.md, and YAML-level bombs. Exit status 1 if a
case misses a target, exits 3 or prints a traceback.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import fat_tree_blueprint

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


def run(text: str, tmp: Path) -> dict[str, float | int | str]:
    path = tmp / "bp.yaml"
    path.write_text(text)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (AS_CAP, AS_CAP))

    proc = subprocess.run(
        [sys.executable, "-c", STAGE, str(path), str(tmp / "report.json")],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=cap,
    )
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        return {"code": proc.returncode, "seconds": -1, "peak_mb": -1, "error": proc.stderr.strip()[-300:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-seconds", type=float, default=30.0)
    ap.add_argument("--max-mb", type=float, default=1024.0)
    args = ap.parse_args()
    failed = False
    print(f"{'case':55} {'bytes':>5} {'exit':>4} {'seconds':>8} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in cases():
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
