"""Benchmark: how fast `verify-cabling` reads LLDP input (generator/verify/lldp.py `read_lldp`), in CPU time.

Run: python benchmarks/lldp_reader.py [--entries 100000] [--repeat 3] [--root DIR]

Three folders of generated `lldpcli show neighbors` output, one file per switch of 2,000 entries each:
``json`` (what lldpd prints with `-f json`, shaped as tests/verify/fixtures/lldp-sn5600/clean), ``json0``
(the same entries as `-f json0` prints them, every value wrapped) and ``junk`` (the smallest entries that
still name a chassis and a port). Each case runs ``read_lldp`` over its folder in a fresh process, garbage
collection paused as `verify-cabling` pauses it (generator/gcpause.py); its CPU time is the best of
--repeat runs, shown per entry. Targets: at most the µs per entry of ``TARGET_US`` (the reader took
39 / 64 / 13 µs per entry before the reading of JSON's nesting and keys, and of the entries, was moved into C
calls; 16 / 22 / 6.5 after, on the idle 2-core machine). Exit 1 when a target is missed.

--root measures another source tree (e.g. a checkout of an older commit) with this interpreter, for
before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PER_FILE = 2000
TARGET_US = {"json": 24.0, "json0": 34.0, "junk": 10.0}

CHILD = """
import gc, sys, time
from generator.verify.lldp import read_lldp
gc.disable()
best, count = float("inf"), 0
for _ in range(int(sys.argv[2])):
    start = time.process_time()
    count = len(read_lldp(sys.argv[1]))
    best = min(best, time.process_time() - start)
print(count, best)
"""


def _entry(i: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(interface, chassis, port) of entry ``i``, as lldpd's `-f json` shows a host's port."""
    chassis = {
        "id": {"type": "mac", "value": f"52:59:98:87:{i >> 8 & 255:02x}:{i & 255:02x}"},
        "descr": "Debian GNU/Linux 12 (bookworm) Linux 6.18.44-fc-v1300 #1 SMP PREEMPT_DYNAMIC @0 x86_64",
        "mgmt-ip": "fe80::5059:98ff:fe87:bc17",
        "mgmt-iface": "2",
        "capability": [
            {"type": kind, "enabled": kind == "Station"} for kind in ("Bridge", "Router", "Wlan", "Station")
        ],
    }
    port = {"id": {"type": "ifname", "value": "ens0np0"}, "descr": "ens0np0", "ttl": "4"}
    return f"swp{i % 64 + 1}s{i % 2}", {f"gpu{i:06d}": chassis}, port


def _wrapped(x: Any) -> Any:
    """A value as `-f json0` prints it: scalars in ``[{"value": ...}]``, objects in a list."""
    if isinstance(x, dict):
        return [{k: v if k in ("type", "value", "enabled") else _wrapped(v) for k, v in x.items()}]
    if isinstance(x, list):
        return [_wrapped(v)[0] for v in x]
    return [{"value": x}]


def _document(kind: str, first: int, last: int) -> dict[str, Any]:
    if kind == "junk":
        interfaces: list[Any] = [
            {f"swp{i % 64 + 1}": {"chassis": {f"h{i}": {}}, "port": {"id": {"value": f"eth{i}"}}}}
            for i in range(first, last)
        ]
        return {"lldp": {"interface": interfaces}}
    entries = [_entry(i) for i in range(first, last)]
    if kind == "json":
        return {
            "lldp": {
                "interface": [{name: {"via": "LLDP", "chassis": c, "port": p}} for name, c, p in entries]
            }
        }
    json0 = []
    for name, chassis, port in entries:
        ((sysname, body),) = chassis.items()
        json0.append(
            {"name": name, "via": "LLDP", **_wrapped({"chassis": dict(body, name=sysname), "port": port})[0]}
        )
    return {"lldp": [{"interface": json0}]}


def write_case(folder: Path, kind: str, entries: int) -> None:
    folder.mkdir(parents=True)
    for n, first in enumerate(range(0, entries, PER_FILE)):
        doc = _document(kind, first, min(entries, first + PER_FILE))
        (folder / f"leaf{n:04d}.json").write_text(json.dumps(doc))


def measure(root: Path, folder: Path, repeat: int) -> tuple[int, float]:
    env = dict(os.environ, PYTHONPATH=str(root))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), str(repeat)],
        env=env,
        cwd=root,  # `python -c` puts the working directory first on sys.path
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"read_lldp failed on {folder}: {proc.stderr[-500:]}")
    count, seconds = proc.stdout.split()
    return int(count), float(seconds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--root", type=Path, default=ROOT, help="source tree to measure (default: this one)")
    args = ap.parse_args()
    missed = 0
    with tempfile.TemporaryDirectory(prefix="lldp-bench-") as tmp:
        for kind, target in TARGET_US.items():
            folder = Path(tmp) / kind
            write_case(folder, kind, args.entries)
            count, seconds = measure(args.root.resolve(), folder, args.repeat)
            per = seconds / max(count, 1) * 1e6
            ok = count == args.entries and per <= target
            missed += not ok
            said = f"{kind:6s} {count:>9,} entries  {seconds:6.2f} s CPU  {per:6.1f} µs/entry"
            print(f"{said}  (target {target} µs)" + ("" if ok else "  MISSED"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
