"""How long `blueprint rehearse` takes per shipped example with a fabric it can bring up (root, Debian's frr,
ibsim-utils, opensm, infiniband-diags installed).

    sudo .venv/bin/python benchmarks/rehearse.py [EXAMPLE ...] [--fail DEVICE]

For each example: `generate` into a temporary directory, then `rehearse --format json`; prints the exit
code, wall time, the time to converge per step and the sampling note. No targets here: the numbers are
what this machine measured (docs/rehearse.md quotes them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# every shipped example with a switch; the others (single nodes, clouds, the direct-attach torus) print
# "nothing to rehearse" and exit 0 (tests/rehearse/test_rehearse_refusals.py)
DEFAULT = [
    "roce-rail-2tier",
    "roce-dragonfly",
    "hdr-fat-tree-a100",
    "hypercube-research",
    "superpod-h100-4su",
    "maas-onprem-h100",
    "ndr-3tier-4096gpu",
]


def _cli(*args: str, timeout_s: float = 3600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          timeout=timeout_s, check=False, cwd=REPO / "tests")  # fmt: skip


def measure(example: str, extra: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="cb-bench-") as tmp:
        build = Path(tmp) / "build"
        gen = _cli("generate", str(REPO / "examples" / f"{example}.yaml"), "-o", str(build), "-q")
        if gen.returncode != 0:
            return {"example": example, "error": gen.stderr.strip()[-300:]}
        t0 = time.monotonic()
        proc = _cli("rehearse", str(build), "--format", "json", *extra)
        seconds = time.monotonic() - t0
    if proc.returncode == 2:
        return {"example": example, "exit": 2, "error": proc.stderr.strip()[-300:]}
    report = json.loads(proc.stdout)
    return {
        "example": example,
        "exit": proc.returncode,
        "seconds": round(seconds, 1),
        "fabrics": {
            f["fabric"]: {
                "size": f["size"],
                "ok": f["ok"],
                "converge": f["converge_seconds"],
                "notes": f["notes"],
            }
            for f in report["fabrics"]
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("examples", nargs="*", default=DEFAULT)
    parser.add_argument("--fail", action="append", default=[], help="passed on to rehearse")
    args = parser.parse_args()
    extra = [a for d in args.fail for a in ("--fail", d)]
    for example in args.examples:
        print(json.dumps(measure(example, extra)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
