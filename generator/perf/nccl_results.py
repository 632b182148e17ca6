"""nccl-tests results as the acceptance run writes them: the standard text output and the JSON file.

Text: the ``# Using devices`` block names every rank's host (``#  Rank  0 Group  0 Pid 123 on host device 0
[...] NVIDIA H100``; older releases omit ``Group``), ``# Collective test starting: all_reduce_perf`` names
the test, and each result row ends with out-of-place ``time algbw busbw #wrong`` and in-place ``time algbw
busbw #wrong`` (nccl-tests src/util.cu ``writeBenchmarkLineBody``). JSON (``-J``, JSON_FILE_VERSION 2, same
file): ``args`` (the program first), ``env``, ``config.devices[].hostname``, ``results[]`` with ``size`` and
``out_of_place``/``in_place`` objects holding ``time``, ``alg_bw``, ``bus_bw``, ``nwrong``.

A run covers one rail when the file name carries ``rail<N>`` (the acceptance role's one-rail runs: N is
the rail, the compute NIC index of the plan), or when its ``NCCL_IB_HCA`` (JSON env) or file name names one
device ``mlx5_<N>``: that device is the run's ``hca``, and the rail it serves is the plan's to say (on a
DGX H100 rail 5 is mlx5_9), which generator.perf.acceptance looks up. Text output records no environment.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

PROGRAMS = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "alltoall",
    "broadcast_perf": "broadcast",
}
SUFFIXES = (".txt", ".log", ".out", ".json")
MAX_FILE_BYTES = 64 << 20

_RANK_RE = re.compile(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\b")
_TEST_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+)")
_RAIL_NAME_RE = re.compile(r"rail(\d+)", re.IGNORECASE)
_HCA_NAME_RE = re.compile(r"(mlx5_\d+)", re.IGNORECASE)
_HCA_RE = re.compile(r"^=?\s*(mlx5_\d+)(?::\d+)?$")


class ResultsError(ValueError):
    """An nccl-tests output that cannot be read; the message starts with ``file:line:col``."""


@dataclass(frozen=True)
class Row:
    size_bytes: int
    busbw_gbytes: float  # out-of-place (in-place when the out-of-place column is absent)
    time_us: float
    wrong: float | None


@dataclass(frozen=True)
class NcclRun:
    path: str
    collective: str
    ranks: int
    hosts: tuple[str, ...]  # in rank order, each once
    rail: int | None  # one rail (rail<N> in the file name, or resolved from ``hca``) or None: every rail
    rows: tuple[Row, ...]
    avg_busbw: float | None
    source_format: str  # text | json
    hca: str | None = None  # the one device NCCL_IB_HCA (or the file name) restricted the run to

    @property
    def nodes(self) -> int:
        return len(self.hosts)

    @property
    def ranks_per_node(self) -> int:
        return max(1, -(-self.ranks // max(1, self.nodes)))

    @property
    def name(self) -> str:
        return Path(self.path).name


def _collective(program: str | None, path: Path) -> str | None:
    for prog, coll in PROGRAMS.items():
        if program and Path(program).name.startswith(prog):
            return coll
    for prog, coll in PROGRAMS.items():
        if prog in path.name or coll in path.name:
            return coll
    return None


def _rail_from_name(path: Path) -> int | None:
    m = _RAIL_NAME_RE.search(path.stem)
    return int(m.group(1)) if m else None


def _hca_from_name(path: Path) -> str | None:
    if _rail_from_name(path) is not None:
        return None
    m = _HCA_NAME_RE.search(path.stem)
    return m.group(1).lower() if m else None


def _number(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _row(tokens: list[str]) -> Row | None:
    """A result row: size and count first, then (oop time algbw busbw wrong)(ip time algbw busbw wrong)."""
    if len(tokens) < 6 or not tokens[0].isdigit() or not tokens[1].isdigit():
        return None
    tail = tokens[-8:] if len(tokens) >= 10 else tokens[-4:]
    oop = [_number(t) for t in tail[:4]]
    if oop[0] is None or oop[2] is None:
        return None
    return Row(int(tokens[0]), float(oop[2]), float(oop[0]), oop[3])


def parse_text(text: str, path: Path) -> NcclRun | None:
    hosts: dict[int, str] = {}
    program = None
    avg = None
    rows: list[Row] = []
    for line in text.splitlines():
        if line.startswith("#"):
            if m := _RANK_RE.match(line):
                hosts[int(m.group(1))] = m.group(2)
            elif m := _TEST_RE.match(line):
                program = m.group(1)
            elif m := _AVG_RE.match(line):
                avg = _number(m.group(1))
            continue
        row = _row(line.split())
        if row is not None:
            rows.append(row)
    coll = _collective(program, path)
    if not rows or coll is None:
        return None
    ordered = tuple(dict.fromkeys(hosts[r] for r in sorted(hosts)))
    rail, hca = _rail_from_name(path), _hca_from_name(path)
    return NcclRun(str(path), coll, len(hosts), ordered, rail, tuple(rows), avg, "text", hca)


def _json_hca(env: list[object], path: Path) -> str | None:
    """The one device NCCL_IB_HCA names (``mlx5_9``, ``=mlx5_9:1``); None for several, an exclusion
    (``^...``) or none at all (then the file name's ``mlx5_<N>``, if any)."""
    for item in env:
        if isinstance(item, str) and item.startswith("NCCL_IB_HCA="):
            value = item.split("=", 1)[1].strip()
            devices = [d.strip() for d in value.removeprefix("=").split(",") if d.strip()]
            if len(devices) == 1 and (m := _HCA_RE.match(devices[0])):
                return m.group(1).lower()
            return None
    return _hca_from_name(path)


def _json_rows(results: object, where: str) -> list[Row]:
    if not isinstance(results, list):
        raise ResultsError(f"{where}: `results` is not a list")
    rows = []
    for i, rec in enumerate(results):
        if not isinstance(rec, dict) or not isinstance(rec.get("size"), int):
            raise ResultsError(f"{where}: results[{i}] has no integer `size`")
        body = rec.get("out_of_place") or rec.get("in_place")
        if not isinstance(body, dict) or not isinstance(body.get("bus_bw"), int | float):
            continue  # a size nccl-tests skipped (null body)
        wrong = body.get("nwrong")
        rows.append(
            Row(
                rec["size"],
                float(body["bus_bw"]),
                float(body.get("time") or body.get("cpu_time") or 0.0),
                float(wrong) if isinstance(wrong, int | float) else None,
            )
        )
    return rows


def parse_json(text: str, path: Path) -> NcclRun | None:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from exc
    if not isinstance(doc, dict) or "results" not in doc:
        return None
    where = f"{path}:1:1"
    args = doc.get("args") or []
    program = args[0] if args and isinstance(args[0], str) else None
    coll = _collective(program, path)
    config = doc.get("config") or {}
    devices = config.get("devices") if isinstance(config, dict) else None
    if not isinstance(devices, list) or not devices:
        raise ResultsError(f"{where}: `config.devices` lists no ranks")
    hosts = {
        int(d.get("rank", i)): str(d.get("hostname", ""))
        for i, d in enumerate(devices)
        if isinstance(d, dict)
    }
    rows = _json_rows(doc["results"], where)
    if not rows or coll is None:
        return None
    avg = doc.get("average_bus_bandwidth")
    avg_bw = avg.get("bandwidth") if isinstance(avg, dict) else None
    env_raw = doc.get("env")
    env: list[object] = env_raw if isinstance(env_raw, list) else []
    rail = _rail_from_name(path)
    return NcclRun(
        str(path),
        coll,
        len(hosts),
        tuple(dict.fromkeys(hosts[r] for r in sorted(hosts))),
        rail,
        tuple(rows),
        float(avg_bw) if isinstance(avg_bw, int | float) else None,
        "json",
        None if rail is not None else _json_hca(env, path),
    )


def read_run(path: Path) -> NcclRun | None:
    """One file; None when it holds no nccl-tests result of a collective the model knows."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ResultsError(f"{path}:1:1: larger than {MAX_FILE_BYTES >> 20} MiB")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ResultsError(f"{path}:1:1: cannot read: {exc.strerror}") from exc
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        return parse_json(text, path)
    return parse_text(text, path)


def read_results(directory: str | Path) -> tuple[list[NcclRun], list[str]]:
    """Every run under ``directory`` (sorted by path) and the files that held none."""
    root = Path(directory)
    if not root.is_dir():
        raise ResultsError(f"{root}: not a directory of nccl-tests outputs")
    runs: list[NcclRun] = []
    ignored: list[str] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES):
        run = read_run(path)
        if run is None:
            ignored.append(str(path))
        else:
            runs.append(run)
    if not runs:
        raise ResultsError(f"{root}: no nccl-tests results ({', '.join(SUFFIXES)} files) found")
    return runs, ignored
