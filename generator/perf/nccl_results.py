"""nccl-tests results as the acceptance run writes them: the standard text output and the JSON file.

Text: the ``# Using devices`` block names every rank's host (``#  Rank  0 Group  0 Pid 123 on host device 0
[...] NVIDIA H100``; older releases omit ``Group``), ``# Collective test starting: all_reduce_perf`` names
the test, and each result row ends with out-of-place ``time algbw busbw #wrong`` and in-place ``time algbw
busbw #wrong`` (nccl-tests src/util.cu ``writeBenchmarkLineBody``). A text file may hold several programs'
outputs one after another (a script running each test into one log): each is its own run, cut where the next
program's header starts (its version line or ``# Collective test starting:``) and named ``file:line``;
parts of a collective the model does not predict (sendrecv_perf) are left out. JSON (``-J``,
JSON_FILE_VERSION 2, same file): ``args`` (the program first), ``env``, ``config.devices[].hostname``,
``results[]`` with ``size`` and ``out_of_place``/``in_place`` objects holding ``time``, ``alg_bw``,
``bus_bw``, ``nwrong``.

A run covers one rail when the file name carries ``rail<N>`` (the acceptance role's one-rail runs: N is
the rail, the compute NIC index of the plan). Otherwise the ports it could use are its ``hca``: the
``NCCL_IB_HCA`` its output records (a -J file's ``env``; NCCL_DEBUG=INFO's ``NCCL_IB_HCA set to ...``, which
net_ib.cc ``ncclIbInit`` prints once a process), read as NCCL reads it (generator.perf.ib_hca), or else one
device ``mlx5_<N>`` its file name names. Which rails those ports serve is the plan's to say (on a DGX H100
rail 5 is mlx5_9), which generator.perf.acceptance looks up.

What the run changed, as `blueprint estimate` takes it, is read where the output records it, so the prediction
follows the run: ``NCCL_ALGO`` / ``NCCL_PROTO`` (``--algo`` / ``--proto``), ``NCCL_MAX_NCHANNELS``
(``--channels``), ``NCCL_MIN_NCHANNELS`` (``--min-channels``), ``NCCL_P2P_DISABLE`` (``--no-nvlink``),
``NCCL_PXN_DISABLE`` (``--no-pxn``), ``NCCL_NVLS_ENABLE=0`` (``--algo ^NVLS,NVLSTree``),
``NCCL_COLLNET_ENABLE`` (IB SHARP: CollNet, and NVLS across nodes, run only with it set to 1; NCCL's default
is 0, so a run that does not record it ran without) and the NCCL release (``--nccl-version``). Text output
records the environment only where NCCL_DEBUG=INFO echoes it (tuning.cc: ``NCCL_ALGO set by environment to
Ring``; param.cc: ``NCCL_MAX_NCHANNELS set by environment to 8.``) and the release in the nccl-tests header
(util.cu ``writeDeviceReport``: ``# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22602``) or
NCCL's own ``NCCL INFO NCCL version 2.26.2+cuda12.2``; the JSON file has the whole process environment
(``env``) and ``nccl_version`` (util.cu ``jsonOutputInit``: the library's version code). The network NCCL used
is read as generator.perf.nccl_network says (NCCL_DEBUG=INFO's ``Using network`` and channel connection lines;
the -J file's ``NCCL_NET``).

A run whose own data check failed is kept and marked ``failed`` where the output shows it, since its bandwidth
says nothing of a healthy fabric: a row's out-of-place ``#wrong`` above 0 (where the header names the column
``#wrong``; the old releases' ``error`` column is a largest error, not a count), the footer ``# Out of bounds
values : N FAILED`` (util.cu ``writeResultFooter``), nccl-tests' ``<host>: Test NCCL failure`` / ``Test CUDA
failure`` lines (common.h ``NCCLCHECK`` / ``CUDACHECK``: the program stopped), and in a -J file a result's
``nwrong`` above 0 or ``out_of_bounds.count`` above 0. The row columns are found from the column header
(``# size count type redop root time algbw busbw #wrong ...``, util.cu ``writeResultHeader``) where the output
has one, so columns nccl-tests appends after a row (the ``-Z`` timestamp) are not read as figures; without a
header, the last eight tokens are the two bodies. A row cut short (the job killed while nccl-tests wrote it,
the log cut mid-line) is refused at its line, last in the file or not: one ending before the #wrong the header
places, or, between a run's column header and its footer, one ending before its sixth column. Source:
NVIDIA/nccl-tests src/util.cu and src/common.h, commit cfa8a9674b467b8e200775a62b09ff11d4c363ac.

Every file is foreign input (generator/foreign.py): regular files only, at most ``MAX_FILE_BYTES`` each and
one byte budget for the whole command, parsed in one pass, and every value checked against
generator.perf.results_model; a value outside it is refused at ``file:line`` (text) or ``file: $.path``
(JSON).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import ValidationError

from blueprints.catalog.perf import perf_data
from generator.foreign import ByteBudget, ForeignInputError, host_name_problem, pydantic_refusal, read_foreign
from generator.foreign import parse_json as parse_json_document
from generator.perf.ib_hca import HcaFilter, parse_hca
from generator.perf.nccl_network import NetworkLines, NetworkUse, forced_network
from generator.perf.processes import DEFAULT_PROCESSES, ProcessSettings
from generator.perf.results_model import AVERAGE, MAX_RANKS, MAX_ROWS, NcclJson, ResultRow

PROGRAMS = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "alltoall",
    "broadcast_perf": "broadcast",
}
SUFFIXES = (".txt", ".log", ".out", ".json")
# One file: a 131,072-GPU run's -J file lists every rank (~200 bytes each in `config.devices`): ~26 MB.
MAX_FILE_BYTES = 64 << 20
# Files one command reads: above a 100k-GPU acceptance run's one-rail runs (12,800 nodes x 8 rails).
MAX_FILES = 1 << 17
# Result rows of all files together: a 100k-GPU acceptance run's one-rail runs are 204,800 rows (102,400
# runs of two sizes, 1G and 2G). Each row is predicted, kept and reported, so this bounds the command's time
# and memory (measured: 64 runs of 4,095 rows each, 7 s CPU and 470 MB for the whole command).
MAX_TOTAL_ROWS = 1 << 18
# Programs' outputs one text file may hold (a script's log runs each test into it: a handful; a loop over the
# node pairs of a cluster, more): a bound on the work one file asks for, refused where it is passed.
MAX_RUNS_PER_FILE = 4096
# Files and parts of files not compared that a report names one by one (the rest are counted): a folder of
# hostile logs could otherwise make the list as long as the byte budget allows.
MAX_NOT_COMPARED_NAMED = 1000
# a result row is size, count, type, op, root and two bodies of five: ~150 characters; a longer line is
# not read as one
MAX_ROW_CHARS = 4096
# the tag a launcher writes before each line of a rank's output: Slurm's `srun -l` ("0: ", the task id;
# srun(1) --label: "Prepend task number to lines of stdout/err") and Open MPI's `--tag-output`
# ("[1,0]<stdout>:", the job and rank; mpirun(1)); a log captured so was read as no results at all. Only
# blanks pad the task id: `\s*` crossed line ends, so each empty line rescanned all that followed (64 Ki
# empty lines took 20 s, benchmarks/hostile.py's 60 MiB of them hours)
_LAUNCHER_TAG = re.compile(r"^(?:[ \t]*\d+: |\[\d+,\d+\]<std(?:out|err)>: ?)", re.M)
# Entries (files and folders) looked at under --results, matching or not.
MAX_ENTRIES = 1 << 20
# A number column of nccl-tests is at most a few characters wide (getFloatStr, util.cu); a longer token is
# no number it wrote, and is not converted (int() of a long digit string costs quadratic time).
MAX_TOKEN = 32

_ASCII_DIGITS = re.compile(r"[0-9]+")
_RANK_RE = re.compile(
    r"^#\s+Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\b", re.ASCII
)
_TEST_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)", re.ASCII)
# RCCL's 0/1 settings, echoed as NCCL's are (its RCCL_PARAM loads "RCCL_" + name through ncclLoadParam)
_RCCL_SWITCHES = ("RCCL_MSCCL_ENABLE", "RCCL_MSCCL_ENABLE_SINGLE_PROCESS")
# NCCL_DEBUG=INFO echoes its environment: "... NCCL INFO NCCL_ALGO set by environment to Ring" (tuning.cc),
# "... NCCL INFO NCCL_MAX_NCHANNELS set by environment to 8." (param.cc ncclLoadParam: "%s set by environment
# to %lld."; NCCL_P2P_DISABLE is printed with or without the period, depending on the release)
SETTINGS = (
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS",
    "NCCL_P2P_DISABLE",
    "NCCL_PXN_DISABLE",
    "NCCL_NVLS_ENABLE",
    "NCCL_COLLNET_ENABLE",
    *_RCCL_SWITCHES,
)
# The whole value is taken and checked (_checked_setting): one the model cannot read is refused, never skipped
# (a skipped `allreduce:tree` or `-4` would predict the run with NCCL's defaults).
_ENV_RE = re.compile(rf"NCCL INFO ({'|'.join(SETTINGS)}) set by environment to (.*)$", re.ASCII)
# what a setting's value may hold to be shown and read: printable ASCII, no space, bounded
_VALUE_RE = re.compile(r"[!-~]{1,200}", re.ASCII)
# the release: nccl-tests' header (the loaded library's version code) or NCCL's own INFO line (init.cc)
_TESTS_VERSION_RE = re.compile(
    r"^#\s*nccl-tests version \S{1,64} (?:\(\w{1,40}\) )?"  # later ones add a git hash: `(b4d5bee)`
    r"nccl-headers=\d{1,7} nccl-library=(\d{1,7})\b",
    re.ASCII,
)
_NCCL_VERSION_RE = re.compile(r"NCCL INFO NCCL version (\d{1,3}\.\d{1,3}\.\d{1,3})\+", re.ASCII)
# the average as util.cu prints it ("%g"): a number, or NaN for a run without results, which glibc's printf
# writes `nan` or `-nan` (the NaN's sign bit); read as the -J reader reads jsonDouble's "nan": no average
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*((?:[+-]|[0-9.]|(?i:nan))\S*)", re.ASCII)
_NAN = ("nan", "+nan", "-nan")
# the footer of nccl-tests' own data check (util.cu writeResultFooter: "# %-20s : %d %s", OK or FAILED)
_OUT_OF_BOUNDS_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d{1,12})\s+(OK|FAILED)\b", re.ASCII)
# nccl-tests' NCCLCHECK / CUDACHECK (common.h): "<host>: Test NCCL failure common.cu:1005 '...'"; it stops
_FAILURE_RE = re.compile(r"Test (NCCL|CUDA) failure\b", re.ASCII)
# the GPUs each process drives: threads × GPUs a thread (common.cu ``# nThread %d nGpus %d minBytes ...``;
# rccl-tests prints ``# nThread: %d nGpus: %d minBytes: ...``, ROCm/rccl-tests src/common.cu, commit
# 043eef69996a825698c5679d8419ee12768740d0); the tokens are checked by _checked_process, never skipped
_PROCESS_RE = re.compile(r"^#\s*nThread\b(.*)$", re.ASCII)
_PROCESS_COUNTS_RE = re.compile(r":?\s+(\S+)\s+nGpus:?\s+(\S+)(?:\s.*)?", re.ASCII)
# the same in a -J file's ``args`` (common.cu getopt: ``-t``/``--nthreads``, ``-g``/``--ngpus``)
_ARG_OPTIONS = {"-t": "t", "--nthreads": "t", "-g": "g", "--ngpus": "g"}
# nccl-tests -J never replaces a file: it writes `<path>.0`, `<path>.1`, ... when `<path>` exists (util.cu
# jsonOutputInit), so a run repeated into one path leaves `out.json.0` beside `out.json`
_NUMBERED_JSON_RE = re.compile(r"\.json\.\d{1,9}$", re.IGNORECASE | re.ASCII)
_RAIL_NAME_RE = re.compile(r"rail(\d{1,4})(?!\d)", re.IGNORECASE | re.ASCII)
_HCA_NAME_RE = re.compile(r"(mlx5_\d{1,4})(?!\d)", re.IGNORECASE | re.ASCII)
# net_ib.cc ncclIbInit: `INFO(NCCL_NET|NCCL_ENV, "NCCL_IB_HCA set to %s", userIbEnv)`, once a process
_HCA_SET_RE = re.compile(r"NCCL INFO NCCL_IB_HCA set to (.*)$", re.ASCII)
# distinct NCCL_IB_HCA values one run's processes may print (one a local rank, where a wrapper gives each rank
# its own port): more is no launch of a server's GPUs, and the run is then taken as using them all
MAX_HCA_VALUES = 64
# text column -> the Row field it fills, for refusals that name the column as nccl-tests heads it
_COLUMNS = {"size_bytes": "size", "busbw_gbytes": "busbw", "time_us": "time", "wrong": "#wrong"}


class ResultsError(ValueError):
    """A results folder that cannot be used (no folder, no results); a bad file is a ForeignInputError."""


@dataclass(frozen=True, slots=True)
class Row:
    """One result row, as checked by results_model.ResultRow (kept small: a command may hold 500k)."""

    size_bytes: int
    busbw_gbytes: float  # out-of-place (in-place when the out-of-place column is absent)
    time_us: float
    wrong: float | None


@dataclass(frozen=True)
class RecordedSettings:
    """What a run changed, as its output records it, in NCCL's spelling (``^NVLS``, ``LL128``): what
    `blueprint estimate` takes as options. generator.perf.acceptance turns them into the model's
    predict.RunSettings."""

    algo: str | None = None  # NCCL_ALGO (--algo)
    proto: str | None = None  # NCCL_PROTO (--proto)
    channels: int | None = None  # NCCL_MAX_NCHANNELS (--channels)
    p2p_disabled: bool = False  # NCCL_P2P_DISABLE=1: NVLink off (--no-nvlink)
    nccl_version: str | None = None  # the NCCL release the run loaded, ``2.26.2`` (--nccl-version)
    pxn_disabled: bool = False  # NCCL_PXN_DISABLE=1: PXN off (--no-pxn)
    min_channels: int | None = None  # NCCL_MIN_NCHANNELS (--min-channels)
    nvls_disabled: bool = False  # NCCL_NVLS_ENABLE=0: no NVLS or NVLS-tree (--algo ^NVLS,NVLSTree)
    # NCCL_COLLNET_ENABLE as the run set it; None: not recorded, which is NCCL's default, 0 (NCCL's
    # environment variables reference: "Default is 0, define and set to 1 to use the CollNet plugin")
    collnet: bool | None = None
    # nccl-tests nThread × nGpus, RCCL_MSCCL_ENABLE, RCCL_MSCCL_ENABLE_SINGLE_PROCESS (--gpus-per-process,
    # --no-msccl, --msccl-single-process)
    process: ProcessSettings = DEFAULT_PROCESSES

    @property
    def gpus_per_process(self) -> int:
        return self.process.gpus_per_process

    @property
    def msccl_disabled(self) -> bool:
        return not self.process.msccl

    @property
    def msccl_single_process(self) -> bool | None:
        return self.process.msccl_single_process

    def text(self) -> str:
        """In NCCL's spelling; empty for a run of NCCL's own choices on the blueprint's release."""
        parts = [
            f"NCCL_ALGO={self.algo}" if self.algo else "",
            f"NCCL_PROTO={self.proto}" if self.proto else "",
            f"NCCL_MAX_NCHANNELS={self.channels}" if self.channels is not None else "",
            f"NCCL_MIN_NCHANNELS={self.min_channels}" if self.min_channels is not None else "",
            "NCCL_P2P_DISABLE=1" if self.p2p_disabled else "",
            "NCCL_PXN_DISABLE=1" if self.pxn_disabled else "",
            "NCCL_NVLS_ENABLE=0" if self.nvls_disabled else "",
            f"NCCL_COLLNET_ENABLE={int(self.collnet)}" if self.collnet is not None else "",
            f"NCCL {self.nccl_version}" if self.nccl_version else "",
            *self.process.describe(),
        ]
        return " ".join(p for p in parts if p)


@dataclass(frozen=True)
class NcclRun:
    path: str
    collective: str
    ranks: int
    hosts: tuple[str, ...]  # in rank order, each once; each one RFC 1123 label (results_model.HostName)
    rail: int | None  # one rail (rail<N> in the file name, or resolved from ``hca``) or None: every rail
    rows: tuple[Row, ...]
    avg_busbw: float | None
    source_format: str  # text | json
    # the ports NCCL_IB_HCA (or a device the file name names) restricted the run to; None: any NCCL found
    hca: HcaFilter | None = None
    settings: RecordedSettings = RecordedSettings()  # what the run changed, as its output records it
    # the line a run starts at in a text file that holds several (one nccl-tests program after another, as a
    # script running each test into one log writes them); None when the file is one run
    line: int | None = None
    network: NetworkUse = field(default_factory=NetworkUse)  # the network NCCL used, as its output says
    # where the run's own data check failed or the program stopped on an error (file:line and what); None: not
    failed: str | None = None
    sha256: str = ""  # of the bytes of the file the run was read from, as they were read (read_runs)
    # communicators the ranks were split into (nccl-tests' `Group` column, NCCL_TESTS_SPLIT_MASK): each runs
    # the collective among its own ranks, which is not the run of all of them the model predicts
    communicators: int = 1
    # the ranks each host runs, in ``hosts`` order (`mpirun -np 12` on two 8-slot hosts: 8 and 4)
    host_ranks: tuple[int, ...] = ()

    @property
    def nodes(self) -> int:
        return len(self.hosts)

    @property
    def ranks_per_node(self) -> int:
        return max(1, -(-self.ranks // max(1, self.nodes)))

    @property
    def name(self) -> str:
        return Path(self.path).name + (f":{self.line}" if self.line is not None else "")


def release_from_code(code: int) -> str | None:
    """``22602`` → ``2.26.2``: NCCL's version code as nccl.h makes it (``NCCL_VERSION(X,Y,Z)``: X·1000 + Y·100
    + Z up to 2.8, X·10000 + Y·100 + Z from 2.9); None for a number no release has."""
    if 2000 <= code < 2900:
        major, rest = divmod(code, 1000)
    elif 20900 <= code < 100000:
        major, rest = divmod(code, 10000)
    else:
        return None
    minor, patch = divmod(rest, 100)
    return f"{major}.{minor}.{patch}"


# NCCL_PARAM(MaxNchannels, "MAX_NCHANNELS", -2): -2 is the parameter's "not set", which connect.cc reads as
# its default (MAXCHANNELS, no minimum)
CHANNELS_UNSET = -2
_C_INTEGER = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]{1,16}|0[0-7]{0,21}|[1-9][0-9]{0,18})")


def _channel_count(name: str, value: str, where: str) -> int:
    """A channel count as NCCL takes it: the number read with ``strtoll(str, NULL, 0)`` (param.cc
    ncclLoadParam: 0x hex, a leading 0 octal, else decimal; a log prints it in decimal), then clamped as
    connect.cc does: ncclMinNchannels limits a minimum to MAXCHANNELS and a negative one to 0 (NCCL's
    default: no minimum), ncclMaxNchannels a maximum to MAXCHANNELS and one below 1 to 1."""
    match = _C_INTEGER.fullmatch(value)
    if match is None:
        raise ForeignInputError(where, f"{name} `{value}`: no number NCCL reads")
    sign, digits = match.groups()
    base = 16 if digits[:2].lower() == "0x" else 8 if len(digits) > 1 and digits[0] == "0" else 10
    number = int(digits, base) * (-1 if sign == "-" else 1)
    if number == CHANNELS_UNSET:
        return number
    most = perf_data().nccl.most_channels()  # NCCL's MAXCHANNELS
    least = 0 if name == "NCCL_MIN_NCHANNELS" else 1
    return max(least, min(number, most))


def _checked_setting(name: str, raw: str, where: str) -> str:
    """A setting the prediction follows (``raw`` as printed: param.cc ends a number with a period), refused
    where it stands when it is no value NCCL prints or the model cannot follow it. Names the model does not
    know (``NCCL_ALGO=Bogus``, a per-collective list with an unknown collective) pass here and make the run an
    ERROR row that says so (acceptance.run_settings), as `estimate --algo` refuses them."""
    value = raw.strip().removesuffix(".")
    if not _VALUE_RE.fullmatch(value):
        shown = f"`{value}`" if value.isascii() and value.isprintable() and len(value) <= 200 else "its value"
        raise ForeignInputError(
            where, f"{name}: {shown} is no setting NCCL prints (printable ASCII, no space, at most 200)"
        )
    if name in ("NCCL_MAX_NCHANNELS", "NCCL_MIN_NCHANNELS"):
        return str(_channel_count(name, value, where))
    switches = ("NCCL_P2P_DISABLE", "NCCL_PXN_DISABLE", "NCCL_COLLNET_ENABLE", *_RCCL_SWITCHES)
    if name in switches and value not in ("0", "1"):
        raise ForeignInputError(where, f"{name} `{value}`: the model follows 0 or 1")
    # NVLS_ENABLE: 0 off, 1 on, 2 on where the GPUs support it (src/transport/nvls.cc, its default)
    if name == "NCCL_NVLS_ENABLE" and value not in ("0", "1", "2"):
        raise ForeignInputError(where, f"{name} `{value}`: NCCL takes 0, 1 or 2")
    return value


def _checked_process(threads: str, gpus: str, where: str) -> int:
    """The GPUs one process drives (nThread × nGpus), refused where it stands unless both are counts (ASCII
    digits, at most 7) whose product a run can have."""
    for name, token in (("nThread", threads), ("nGpus", gpus)):
        if not (token.isascii() and token.isdigit() and len(token) <= 7):
            shown = f"`{token[:40]}`" if token.isascii() and token.isprintable() else "its value"
            raise ForeignInputError(where, f"{name} {shown}: a count of 1 or more")
    count = int(threads) * int(gpus)
    if not 1 <= count < MAX_RANKS:
        most = f"{MAX_RANKS - 1:,}"
        raise ForeignInputError(where, f"nThread {threads} × nGpus {gpus}: a process drives 1 to {most} GPUs")
    return count


def _check_process_fits(hosts: dict[int, str], gpus_per_process: int, where: str) -> None:
    """A process drives GPUs of its own host: a host listing fewer ranks than one process drives is an output
    no run writes (with no rank listed there is nothing to compare, and the header is taken as it stands)."""
    if gpus_per_process <= 1 or not hosts:
        return
    per_host: dict[str, int] = {}
    for host in hosts.values():
        per_host[host] = per_host.get(host, 0) + 1
    host, ranks = min(per_host.items(), key=lambda kv: kv[1])
    if ranks < gpus_per_process:
        raise ForeignInputError(
            where, f"{gpus_per_process} GPUs a process, but host {host} lists {ranks} rank(s)"
        )


def _switch(value: str | None) -> bool | None:
    """A checked 0/1 setting as the run set it; None when it did not."""
    return None if value is None else value == "1"


def _settings(env: dict[str, str], version: str | None, gpus_per_process: int = 1) -> RecordedSettings:
    """The run's settings from its (checked) environment, its release and the GPUs a process drives."""
    channels, least = (
        None if v is None or int(v) == CHANNELS_UNSET else v
        for v in (env.get("NCCL_MAX_NCHANNELS"), env.get("NCCL_MIN_NCHANNELS"))
    )
    return RecordedSettings(
        algo=env.get("NCCL_ALGO"),
        proto=env.get("NCCL_PROTO"),
        channels=int(channels) if channels is not None else None,
        p2p_disabled=env.get("NCCL_P2P_DISABLE") == "1",
        nccl_version=version,
        pxn_disabled=env.get("NCCL_PXN_DISABLE") == "1",
        min_channels=int(least) if least is not None and int(least) > 0 else None,  # 0: NCCL's default
        nvls_disabled=env.get("NCCL_NVLS_ENABLE") == "0",
        collnet=_switch(env.get("NCCL_COLLNET_ENABLE")),
        process=ProcessSettings(
            gpus_per_process,
            env.get("RCCL_MSCCL_ENABLE") != "0",
            _switch(env.get("RCCL_MSCCL_ENABLE_SINGLE_PROCESS")),
        ),
    )


def _host_ranks(hosts: dict[int, str], ordered: tuple[str, ...]) -> tuple[int, ...]:
    """The ranks each host of ``ordered`` runs (rank -> host ``hosts``)."""
    counts = Counter(hosts.values())
    return tuple(counts[h] for h in ordered)


def _collective(program: str | None, path: Path) -> str | None:
    """The collective of the program the output names (None: one the model does not predict, such as
    alltoallv_perf or sendrecv_perf, whatever the file is called); the file name's where none is named."""
    if program:
        name = Path(program).name
        return next((coll for prog, coll in PROGRAMS.items() if name.startswith(prog)), None)
    for prog, coll in PROGRAMS.items():
        if prog in path.name or coll in path.name:
            return coll
    return None


def _rail_from_name(path: Path) -> int | None:
    m = _RAIL_NAME_RE.search(path.stem)
    return int(m.group(1)) if m else None


def _hca_from_name(path: Path) -> HcaFilter | None:
    """The one device a file name such as ``all_reduce_perf_mlx5_9.log`` names, as NCCL_IB_HCA=``=mlx5_9``."""
    if _rail_from_name(path) is not None:
        return None
    m = _HCA_NAME_RE.search(path.stem)
    return parse_hca("=" + m.group(1).lower(), str(path)) if m else None


# ---- text ---------------------------------------------------------------------------------------


def _number(token: str) -> float | str:
    """The float a number column holds, or the token itself when it is none (the refusal shows it)."""
    if len(token) > MAX_TOKEN:
        return token[:MAX_TOKEN] + "..."
    try:
        return float(token)
    except ValueError:
        return token


def _checked_row(values: dict[str, object], where: str) -> Row:
    try:
        r = ResultRow.model_validate(values)
        return Row(r.size_bytes, r.busbw_gbytes, r.time_us, r.wrong)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else ""
        column = _COLUMNS.get(name, name)
        shown = values.get(name)
        raise ForeignInputError(
            where, f"result row: {column} `{shown}` is not a measurement ({first['msg']})"
        ) from None


def _truncated(tokens: list[str], where: str, columns: tuple[int, int, int] | None) -> ForeignInputError:
    """A row cut short (a job killed while nccl-tests wrote it, or the log cut mid-line), at its line: its
    last figures are not where the header puts them, and a tail read without a header took the root column
    for a bandwidth."""
    if columns is None:
        layout = "a row holds size, count, type, redop and root, then its out-of-place and in-place figures"
    else:
        layout = (
            f"the column header puts the out-of-place busbw and #wrong in columns {columns[1] + 1} and "
            f"{columns[2] + 1}"
        )
    return ForeignInputError(
        where, f"truncated result row: {len(tokens)} columns, where {layout} (a run stopped writing it?)"
    )


def _row(
    tokens: list[str],
    where: str,
    columns: tuple[int, int, int] | None = None,
    counts_wrong: bool = False,
    in_table: bool = False,
) -> Row | None:
    """A result row: size and count first, then (oop time algbw busbw wrong)(ip time algbw busbw wrong).
    ``columns``: where the header puts the out-of-place time, busbw and #wrong; a row with fewer tokens
    (nccl-tests left its out-of-place body blank) has its in-place body there, and one that ends before the
    out-of-place #wrong is refused as truncated. Without them, the last eight tokens are the two bodies (the
    last four: one body). ``in_table``: the line stands between a run's column header (or first row) and its
    footer, where a line starting as a row does and ending before its sixth column is one cut short."""
    if not tokens or not all(_ASCII_DIGITS.fullmatch(t) for t in tokens[:2]):
        return None
    if len(tokens) < 6:
        # nccl-tests writes size, count, type, redop and root before it measures the size (util.cu
        # writeBenchmarkLinePreamble): a log that stops there ends in such a fragment. Outside a table a
        # lone number is no row (a script's `echo $?`)
        if in_table:
            raise _truncated(tokens, where, columns)
        return None
    if columns is not None and len(tokens) <= max(columns):
        raise _truncated(tokens, where, columns)
    if columns is not None:
        time_at, busbw_at, wrong_at = (tokens[i] for i in columns)
        # the in-place body follows: its #wrong (a count where the header says `#wrong`) ends the row
        in_place_wrong = tokens[-1] if counts_wrong and len(tokens) >= columns[2] + 5 else None
    else:
        tail = tokens[-8:] if len(tokens) >= 10 else tokens[-4:]
        time_at, busbw_at, wrong_at = tail[0], tail[2], tail[3]
        in_place_wrong = None  # without a header, which body a last figure belongs to is a guess
    size: int | str = int(tokens[0]) if len(tokens[0]) <= MAX_TOKEN else tokens[0][:MAX_TOKEN] + "..."
    # a wrong result in either body fails the row (the JSON reader counts both: in_place.nwrong)
    counts = [w for w in (_number(wrong_at), _number(in_place_wrong or "")) if isinstance(w, float)]
    wrong: object = max(counts) if counts else None
    values: dict[str, object] = {
        "size_bytes": size,
        "time_us": _number(time_at),
        "busbw_gbytes": _number(busbw_at),
        # `N/A` without validation (-c 0); anything else that is no number says nothing either
        "wrong": wrong,
    }
    return _checked_row(values, where)


@dataclass
class _TextRun:
    """What one pass over a text output has found so far."""

    path: Path
    line: int = 1  # where this run's lines start
    hosts: dict[int, str] = field(default_factory=dict)
    program: str | None = None
    avg: float | None = None
    rows: list[Row] = field(default_factory=list)
    env: dict[str, tuple[str, str]] = field(default_factory=dict)  # setting -> (value, where first printed)
    version: str | None = None
    gpus_per_process: int = 1
    process_at: str | None = None  # where the nThread / nGpus header line was read
    network: NetworkLines = field(default_factory=NetworkLines)
    columns: tuple[int, int, int] | None = None  # out-of-place time, busbw and #wrong, from the header
    counts_wrong: bool = False  # the header names the column `#wrong` (a count), not `error` (old releases)
    failed: str | None = None  # where the run's data check failed or the program stopped (file:line: what)
    groups: set[int] = field(default_factory=set)  # the ranks' `Group` numbers (communicators)
    hca_values: set[str] = field(default_factory=set)  # the NCCL_IB_HCA values its processes printed
    ended: bool = False  # its footer (`# Out of bounds values`, `# Avg bus bandwidth`) was read

    @property
    def in_table(self) -> bool:
        """Between the column header (or, without one, the first row) and the footer: where every line that
        starts with a size and a count is a result row (util.cu writes nothing else there)."""
        return (self.columns is not None or bool(self.rows)) and not self.ended

    def fail(self, where: str, what: str) -> None:
        self.failed = self.failed or f"{where}: {what}"

    def column_header(self, names: list[str]) -> None:
        """``# size count type redop root time algbw busbw #wrong time ...`` (util.cu writeResultHeader;
        ``cputime`` with -C 1, ``error`` for ``#wrong`` and no ``root`` in old releases), split."""
        if len(names) > 64:
            return
        time_at = next((i for i, n in enumerate(names) if n in ("time", "cputime")), None)
        busbw_at = names.index("busbw") if "busbw" in names else None
        if time_at is None or busbw_at is None or busbw_at + 1 >= len(names):
            return
        wrong_at = busbw_at + 1
        if names[wrong_at] in ("#wrong", "error"):
            self.columns = (time_at, busbw_at, wrong_at)
            self.counts_wrong = names[wrong_at] == "#wrong"

    def ib_hca(self, raw: str, where: str) -> None:
        """One process's ``NCCL_IB_HCA set to`` line: checked where it stands, kept while few."""
        parse_hca(raw, where)
        if len(self.hca_values) <= MAX_HCA_VALUES:
            self.hca_values.add(raw.rstrip("\r\n"))

    def hca(self) -> HcaFilter | None:
        """The ports the run's processes were given: their one NCCL_IB_HCA value; None when they were given
        several (one port a local rank: together the server's ports) or the output shows none (then the
        device the file name names, if any)."""
        if not self.hca_values:
            return _hca_from_name(self.path)
        if len(self.hca_values) > 1:
            return None
        return parse_hca(next(iter(self.hca_values)), str(self.path))

    def setting(self, name: str, raw: str, where: str) -> None:
        """A setting NCCL printed (once per rank): ranks that ran with different values make one run the
        model cannot predict as a whole, so the second value is refused where it stands."""
        value = _checked_setting(name, raw, where)
        first, first_at = self.env.setdefault(name, (value, where))
        if value != first:
            raise ForeignInputError(
                where, f"{name} `{value}` here but `{first}` at {first_at}: ranks ran with different settings"
            )

    def header(self, line: str, where: str) -> None:
        if m := _RANK_RE.match(line):
            self.rank(m.group(1), m.group(3), where)
            color = m.group(2)  # printed %2d by nccl-tests; a longer token counts as one group all the same
            if color is not None:
                self.groups.add(int(color) if len(color) <= 9 else -1)
        elif m := _TEST_RE.match(line):
            self.program = m.group(1)
        elif m := _TESTS_VERSION_RE.match(line):
            self.version = self.version or release_from_code(int(m.group(1)))
        elif m := _PROCESS_RE.match(line):
            counts = _PROCESS_COUNTS_RE.fullmatch(m.group(1))
            if counts is None:
                raise ForeignInputError(where, "the `# nThread N nGpus M` header holds no two counts")
            count = _checked_process(counts.group(1), counts.group(2), where)
            if self.process_at is not None and count != self.gpus_per_process:
                raise ForeignInputError(
                    where, f"{count} GPUs a process here but {self.gpus_per_process} at {self.process_at}"
                )
            self.gpus_per_process, self.process_at = count, self.process_at or where
        elif m := _OUT_OF_BOUNDS_RE.match(line):
            self.ended = True
            if m.group(2) == "FAILED" or int(m.group(1)) > 0:
                self.fail(where, f"nccl-tests' data check failed ({m.group(1)} values out of bounds)")
        elif (names := line.lstrip("#").split())[:2] == ["size", "count"]:
            self.column_header(names)
        elif m := _AVG_RE.match(line):
            self.average(m.group(1), where)

    def average(self, token: str, where: str) -> None:
        """The footer's ``# Avg bus bandwidth`` (util.cu writeResultFooter), which ends the table."""
        self.ended = True
        if token.lower() not in _NAN:
            value = _number(token)
            try:
                self.avg = AVERAGE.validate_python(value)
            except ValidationError as exc:
                raise ForeignInputError(
                    where, f"average bus bandwidth `{value}`: {exc.errors()[0]['msg']}"
                ) from None

    def rank(self, number: str, host: str, where: str) -> None:
        rank = int(number) if len(number) <= 7 else MAX_RANKS
        if rank >= MAX_RANKS:
            raise ForeignInputError(where, f"rank {number[:MAX_TOKEN]}: ranks are below {MAX_RANKS:,}")
        problem = host_name_problem(host)
        if problem is not None:
            raise ForeignInputError(where, f"rank {rank} host `{host[:80]}`: {problem}")
        if self.hosts.setdefault(rank, host) != host:
            raise ForeignInputError(
                where, f"rank {rank} is listed on two hosts: {self.hosts[rank]} and {host}"
            )

    def row(self, row: Row, where: str) -> None:
        if len(self.rows) >= MAX_ROWS:
            raise ForeignInputError(where, f"more than {MAX_ROWS:,} result rows in one run")
        self.rows.append(row)
        # a count where the header says so; without a header only a whole number of at least one can be one
        # (the old `error` column holds largest errors such as 4e-07)
        wrong = row.wrong or 0.0
        if wrong > 0 and (self.counts_wrong or (self.columns is None and wrong >= 1 and wrong.is_integer())):
            self.fail(where, f"{wrong:g} wrong elements at {row.size_bytes} B (nccl-tests' data check)")


def _starts_run(line: str) -> bool:
    """A header line nccl-tests prints once at the start of each program's output, the version line then
    ``# Collective test starting:`` (src/util.cu ``writeDeviceReport``; older releases print the second
    only). A file holding several programs' outputs is cut at the first of them that follows a program's
    name or rows, so each program's rows are its own run (an all_gather sweep is never read as an all_reduce
    one)."""
    return bool(_TESTS_VERSION_RE.match(line) or _TEST_RE.match(line))


def _text_run(run: _TextRun, several: bool) -> NcclRun | None:
    """The run one program's lines make; None without a result of a collective the model knows (a
    sendrecv_perf part of a file, say)."""
    coll = _collective(run.program, run.path)
    if not run.rows or coll is None:
        return None
    _check_process_fits(run.hosts, run.gpus_per_process, run.process_at or str(run.path))
    ordered = tuple(dict.fromkeys(run.hosts[r] for r in sorted(run.hosts)))
    rail = _rail_from_name(run.path)
    hca = None if rail is not None else run.hca()
    return NcclRun(
        str(run.path),
        coll,
        len(run.hosts),
        ordered,
        rail,
        tuple(run.rows),
        run.avg,
        "text",
        hca,
        _settings({name: value for name, (value, _) in run.env.items()}, run.version, run.gpus_per_process),
        run.line if several else None,
        run.network.use(),
        run.failed,
        communicators=max(1, len(run.groups)),
        host_ranks=_host_ranks(run.hosts, ordered),
    )


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines with their numbers, without a launcher's tag (``_LAUNCHER_TAG``): one
    regex search over the text decides whether any line has one, so untagged files pay nothing a line."""
    tagged = _LAUNCHER_TAG.search(text) is not None
    for number, line in enumerate(text.split("\n"), 1):
        if not line or line.isspace():  # no setting, row or header is blank
            continue
        yield number, (_LAUNCHER_TAG.sub("", line, count=1) if tagged else line)


def parse_text(text: str, path: Path, left_out: list[str] | None = None) -> list[NcclRun]:
    """One pass over the lines (linear in the text): the runs of every collective the model knows, one per
    program whose output the file holds (none for a file without one). Where the file holds several, the
    parts with rows of a program the model does not predict are named in ``left_out`` (``file:line
    (program)``), so a report can say what it did not compare."""
    parts = [_TextRun(path)]
    rows = 0
    at = f"{path}:"  # the path formatted once: a line's place is at + its number (a file of empty lines
    for number, line in _lines(text):  # spent ~2 µs a line on this alone)
        where = at + str(number)
        if line.startswith("#"):
            run = parts[-1]
            # the next program's header; releases without a version or "starting" line (old ones, rccl-tests)
            # open each program with its `# nThread` line, which follows rows only as the next program's
            if ((run.rows or run.program) and _starts_run(line)) or (run.rows and _PROCESS_RE.match(line)):
                if not run.rows:  # a program that stopped before its rows makes no run: its place is reused
                    parts.pop()
                elif len(parts) >= MAX_RUNS_PER_FILE:
                    raise ForeignInputError(
                        where, f"more than {MAX_RUNS_PER_FILE:,} nccl-tests programs' outputs in one file"
                    )
                parts.append(_TextRun(path, number))
            parts[-1].header(line, where)
            continue
        if " set by environment to " in line and (m := _ENV_RE.search(line)):
            parts[-1].setting(m.group(1), m.group(2), where)
            continue
        if "NCCL_IB_HCA set to " in line and (m := _HCA_SET_RE.search(line)):
            parts[-1].ib_hca(m.group(1), where)
            continue
        if "NCCL INFO NCCL version" in line and (m := _NCCL_VERSION_RE.search(line)):
            parts[-1].version = parts[-1].version or m.group(1)
            continue
        if parts[-1].network.read(line, where):
            continue
        if "failure" in line and (m := _FAILURE_RE.search(line)):
            parts[-1].fail(where, f"nccl-tests stopped on a {m.group(1)} failure")
            continue
        if len(line) > MAX_ROW_CHARS:  # no result row: split into words, one 63 MB line took 1.8 GB
            continue
        run = parts[-1]
        row = _row(line.split(), where, run.columns, run.counts_wrong, run.in_table)
        if row is not None:
            rows += 1
            if rows > MAX_TOTAL_ROWS:
                raise ForeignInputError(where, f"more than {MAX_TOTAL_ROWS:,} result rows in one file")
            parts[-1].row(row, where)
    several = sum(1 for run in parts if run.rows) > 1
    runs = []
    for run in parts:
        made = _text_run(run, several)
        if made is not None:
            runs.append(made)
        elif several and run.rows and left_out is not None:
            program = Path(run.program).name[:MAX_TOKEN] if run.program else "no program named"
            left_out.append(f"{path}:{run.line} ({program})")
    return runs


# ---- JSON ---------------------------------------------------------------------------------------


def _json_hca(env: list[str], path: Path) -> HcaFilter | None:
    """The run's NCCL_IB_HCA, read as NCCL reads it; without one, the device the file name names (if any)."""
    value = _json_env(env, "NCCL_IB_HCA")
    return _hca_from_name(path) if value is None else parse_hca(value, f"{path}: $.env")


def _json_env(env: list[str], name: str) -> str | None:
    """``Ring`` of ``NCCL_ALGO=Ring`` in the -J file's environment list (None when absent); checked by
    _checked_setting like a printed one."""
    for item in env:
        if item.startswith(name + "="):
            return item.split("=", 1)[1]
    return None


def _json_settings(doc: NcclJson, path: Path) -> RecordedSettings:
    """The settings of the -J file's environment, checked at ``$.env``, and its NCCL release."""
    env = {}
    for name in SETTINGS:
        value = _json_env(doc.env, name)
        if value is not None:
            env[name] = _checked_setting(name, value, f"{path}: $.env")
    release = release_from_code(doc.nccl_version) if doc.nccl_version is not None else None
    return _settings(env, release, _json_gpus_per_process(doc.args, path))


def _json_gpus_per_process(args: list[str], path: Path) -> int:
    """nThread × nGpus from the -J file's ``args`` (``-g 8``, ``-g8``, ``--ngpus=8``; 1 when not given),
    checked at ``$.args``."""
    given = {"t": "1", "g": "1"}
    for i, arg in enumerate(args[1:], 1):
        name, eq, value = arg.partition("=")
        if name in _ARG_OPTIONS:
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
        elif arg[:2] in ("-t", "-g") and len(arg) > 2:
            name, value = arg[:2], arg[2:]
        else:
            continue
        given[_ARG_OPTIONS[name]] = value
    return _checked_process(given["t"], given["g"], f"{path}: $.args")


def _json_failed(doc: NcclJson, path: Path) -> str | None:
    """Where the -J file shows nccl-tests' data check failed: a result's ``nwrong`` above 0, or the footer's
    ``out_of_bounds.count`` (util.cu writeBenchmarkLineBody, writeResultFooter)."""
    for i, rec in enumerate(doc.results):
        for key, body in (("out_of_place", rec.out_of_place), ("in_place", rec.in_place)):
            if body is not None and (body.nwrong or 0) > 0:
                at = f"{path}: $.results[{i}].{key}.nwrong"
                return f"{at}: {body.nwrong:g} wrong elements at {rec.size} B (nccl-tests' data check)"
    bounds = doc.out_of_bounds
    if bounds is not None and bounds.count > 0:
        return f"{path}: $.out_of_bounds: nccl-tests' data check failed ({bounds.count} values out of bounds)"
    return None


def _json_rows(doc: NcclJson) -> list[Row]:
    rows = []
    for rec in doc.results:
        body = rec.out_of_place or rec.in_place
        if body is None:
            continue  # a size nccl-tests skipped (null body)
        time = body.time if body.time is not None else (body.cpu_time or 0.0)
        rows.append(Row(rec.size, body.bus_bw, time, body.nwrong))
    return rows


def _json_hosts(doc: NcclJson, where: str, gpus_per_process: int = 1) -> dict[int, str]:
    """Rank -> host. nccl-tests lists one device a *process* in ``config.devices`` (util.cu writeDeviceReport:
    parseRankInfo reads the first ``# Rank`` line of each process's block, whose rank is process x GPUs a
    process): each entry stands for the ``gpus_per_process`` ranks from its own, unless the entries list
    ranks of their own between those (a file written one entry a rank)."""
    devices = doc.config.devices
    entries = [(i if dev.rank is None else dev.rank, dev.hostname) for i, dev in enumerate(devices)]
    spread = gpus_per_process if all(rank % gpus_per_process == 0 for rank, _ in entries) else 1
    if len(entries) * spread > MAX_RANKS:
        raise ForeignInputError(
            f"{where}: $.config.devices",
            f"{len(entries):,} processes of {spread} GPUs: ranks are below {MAX_RANKS:,}",
        )
    hosts: dict[int, str] = {}
    for i, (first, host) in enumerate(entries):
        for rank in range(first, first + spread):
            if hosts.setdefault(rank, host) != host:
                raise ForeignInputError(
                    f"{where}: $.config.devices[{i}].rank",
                    f"rank {rank} is listed on two hosts: {hosts[rank]} and {host}",
                )
    return hosts


def _json_document(text: str, path: Path) -> NcclJson | None:
    raw = parse_json_document(text, str(path))
    if not isinstance(raw, dict) or "results" not in raw:
        return None
    try:
        return NcclJson.model_validate(raw)
    except ValidationError as exc:
        raise pydantic_refusal(str(path), exc.errors()) from None


def parse_json(text: str, path: Path) -> list[NcclRun]:
    """An nccl-tests -J file's run; none when it is JSON of something else or holds no known collective."""
    doc = _json_document(text, path)
    if doc is None:
        return []
    program = doc.args[0] if doc.args else None
    coll = _collective(program, path)
    rows = _json_rows(doc)
    if not rows or coll is None:
        return []
    settings = _json_settings(doc, path)
    hosts = _json_hosts(doc, str(path), settings.gpus_per_process)
    _check_process_fits(hosts, settings.gpus_per_process, f"{path}: $.args")
    avg = doc.average_bus_bandwidth.bandwidth if doc.average_bus_bandwidth else None
    rail = _rail_from_name(path)
    ordered = tuple(dict.fromkeys(hosts[r] for r in sorted(hosts)))
    run = NcclRun(
        str(path),
        coll,
        len(hosts),
        ordered,
        rail,
        tuple(rows),
        avg if isinstance(avg, float) else None,
        "json",
        None if rail is not None else _json_hca(doc.env, path),
        settings,
        network=forced_network(_json_env(doc.env, "NCCL_NET"), f"{path}: $.env"),
        failed=_json_failed(doc, path),
        communicators=max(1, len({d.group for d in doc.config.devices if d.group is not None})),
        host_ranks=_host_ranks(hosts, ordered),
    )
    return [run]


# ---- files --------------------------------------------------------------------------------------


def read_runs(
    path: Path, budget: ByteBudget | None = None, left_out: list[str] | None = None
) -> list[NcclRun]:
    """One file's runs (one per nccl-tests program it holds the output of); none when it holds no result of a
    collective the model knows. Parts of a text file left out are named in ``left_out`` (parse_text)."""
    raw = read_foreign(path, MAX_FILE_BYTES, budget)
    # nccl-tests writes ASCII (its JSON writer refuses anything else); a stray byte in a log is no reason
    # to refuse a text output, and every value taken from it is checked against results_model. A log saved
    # through an editor or a Windows tool may start with a BOM (U+FEFF), which the anchored `^#` patterns
    # and json.loads ("Unexpected UTF-8 BOM") do not take: dropped, as the utf-8-sig codec does (Python
    # codecs docs), or the file's first line (its release or `# nThread 1 nGpus 8`) was silently lost
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    digest = hashlib.sha256(raw).hexdigest()
    if path.suffix.lower() == ".json" or _NUMBERED_JSON_RE.search(path.name) or text.lstrip().startswith("{"):
        runs = parse_json(text, path)
    else:
        runs = parse_text(text, path, left_out)
    return [replace(run, sha256=digest) for run in runs]


def _is_result_name(name: str) -> bool:
    return Path(name).suffix.lower() in SUFFIXES or _NUMBERED_JSON_RE.search(name) is not None


def _candidates(root: Path) -> list[Path]:
    """The result files under ``root``, sorted; folders reached through a symlink are not entered."""
    found: list[Path] = []
    seen = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            raise ForeignInputError(
                str(root), f"more than {MAX_ENTRIES:,} files and folders: not a results folder"
            )
        found.extend(Path(folder, f) for f in files if _is_result_name(f))
        if len(found) > MAX_FILES:
            raise ForeignInputError(str(root), f"more than {MAX_FILES:,} result files; give fewer")
    return sorted(found)


def _check_sizes(paths: list[Path], budget: ByteBudget) -> None:
    """Refuse before reading anything when the files' sizes alone pass a limit (the reads are charged to
    ``budget`` again, so a file that grows in between is refused too)."""
    ahead = ByteBudget(budget.left)
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            continue  # read_foreign says why
        if not stat.S_ISREG(st.st_mode):
            continue
        if st.st_size > MAX_FILE_BYTES:
            raise ForeignInputError(
                str(path), f"larger than {MAX_FILE_BYTES:,} bytes: not a file this command reads"
            )
        ahead.charge(str(path), st.st_size)


def result_files(directory: str | Path) -> list[Path]:
    """The files ``read_results`` reads under ``directory`` (none when it is not a folder): what a command
    writing beside them must not replace."""
    root = Path(directory)
    return _candidates(root) if root.is_dir() else []


def read_results(directory: str | Path, budget: ByteBudget | None = None) -> tuple[list[NcclRun], list[str]]:
    """Every run under ``directory`` (sorted by path) and what was not compared: the files that held none
    and the parts of a file, ``file:line (program)``, whose program the model does not predict (a log's
    sendrecv_perf); all files together are charged to ``budget`` (one per command)."""
    root = Path(directory)
    if not root.is_dir():
        raise ResultsError(f"{root}: not a directory of nccl-tests outputs")
    budget = budget if budget is not None else ByteBudget()
    paths = _candidates(root)
    _check_sizes(paths, budget)
    runs: list[NcclRun] = []
    ignored: list[str] = []
    unnamed = 0
    rows = 0
    for path in paths:
        parts: list[str] = []
        found = read_runs(path, budget, parts)
        for item in parts if found else [str(path)]:
            if len(ignored) < MAX_NOT_COMPARED_NAMED:
                ignored.append(item)
            else:
                unnamed += 1
        if not found:
            continue
        rows += sum(len(run.rows) for run in found)
        if rows > MAX_TOTAL_ROWS:
            raise ForeignInputError(
                str(path), f"the results hold more than {MAX_TOTAL_ROWS:,} rows in all; give fewer"
            )
        runs.extend(found)
    if not runs:
        raise ResultsError(f"{root}: no nccl-tests results ({', '.join(SUFFIXES)} files) found")
    if unnamed:
        ignored.append(f"{unnamed:,} more")
    return runs, ignored
