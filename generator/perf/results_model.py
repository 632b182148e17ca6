"""What an nccl-tests result may hold: finite numbers in physical ranges, ranks, and host names.

Both formats `acceptance-report` reads (the standard text output and the ``-J`` JSON file) are checked
against these models, so a value outside them is a located refusal (``file:line`` for text, ``file: $.path``
for JSON) and never reaches the comparison: `nan` or `Infinity` cannot pass as "ok", a size of 10^400 or a
bandwidth of -1e308 cannot overflow the averages, and a host name with a terminal escape or a newline
cannot reach the report.

The JSON layout is nccl-tests src/util.cu (JSON_FILE_VERSION 2): ``config.devices[]`` from
``jsonRankInfo`` (``rank``, ``hostname``), ``results[]`` from ``writeBenchmarkLinePreamble`` (``size``)
and ``writeBenchmarkLineBody`` (``time`` or ``cpu_time``, ``alg_bw``, ``bus_bw``, ``nwrong`` — a double,
or null without validation). Its ``jsonDouble`` writes NaN as the string ``"nan"``: a result measured as
NaN is refused like any other non-number, never compared.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr, TypeAdapter

from generator.foreign import host_name_problem
from generator.limits import MAX_NODES
from generator.perf.sizes import MAX_BYTES, MAX_SIZES

# Result rows one run may hold: the most sizes `estimate` predicts (generator/perf/sizes.py); an
# nccl-tests sweep from 8 B to 16 GiB by factors of 2 is 32 rows.
MAX_ROWS = MAX_SIZES
# Ranks one run may list: 8 x the GPUs of the largest design generator/limits.py allows (8 per node).
MAX_RANKS = MAX_NODES * 8 * 8
# Not a hardware figure but a bound on arithmetic (sums of these stay finite): 55 x the fastest GPU link in
# the catalogue, NVLink 5 at 1,800 GB/s per GPU, both directions (blueprints/catalog/data/interconnects.yaml).
MAX_BUSBW_GBYTES = 100_000.0
# A bound on arithmetic as well: one collective of 10^12 microseconds is eleven and a half days.
MAX_TIME_US = 1e12
# nccl-tests' sanitizeJson copies at most 2,047 characters of a string into its JSON file (util.cu).
MAX_JSON_STRING = 2048
# What the environment list of a run may hold (nccl-tests writes the whole process environment).
MAX_ENV = 65_536


def _host_name(name: str) -> str:
    problem = host_name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


SizeBytes = Annotated[StrictInt, Field(ge=0, le=MAX_BYTES)]
Bandwidth = Annotated[float, Field(ge=0, le=MAX_BUSBW_GBYTES, allow_inf_nan=False)]
Micros = Annotated[float, Field(ge=0, le=MAX_TIME_US, allow_inf_nan=False)]
# Wrong elements (or the old releases' max error, e.g. 4e-07): a count of at most one per byte.
Wrong = Annotated[float, Field(ge=0, le=MAX_BYTES, allow_inf_nan=False)]
Rank = Annotated[StrictInt, Field(ge=0, lt=MAX_RANKS)]
# nccl-tests' getHostName cuts the host name at its first dot (src/common.h): one RFC 1123 label.
HostName = Annotated[StrictStr, Field(max_length=63), AfterValidator(_host_name)]
# the text output's `# Avg bus bandwidth` line
AVERAGE: TypeAdapter[float] = TypeAdapter(Bandwidth, config=ConfigDict(strict=True))
JsonString = Annotated[StrictStr, Field(max_length=MAX_JSON_STRING)]


class _Foreign(BaseModel):
    # strict: a number written as a string ("1.5", "nan") or a boolean is not a number
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class ResultRow(_Foreign):
    """One result row (out-of-place figures; in-place when nccl-tests wrote no out-of-place ones)."""

    size_bytes: SizeBytes
    busbw_gbytes: Bandwidth
    time_us: Micros
    wrong: Wrong | None = None


class JsonBody(_Foreign):
    time: Micros | None = None
    cpu_time: Micros | None = None  # the key nccl-tests writes instead of `time` with -C 1
    alg_bw: Bandwidth | None = None
    bus_bw: Bandwidth
    nwrong: Wrong | None = None


class JsonResult(_Foreign):
    size: SizeBytes
    out_of_place: JsonBody | None = None  # null: nccl-tests skipped it (writeBenchMarkLineNullBody)
    in_place: JsonBody | None = None


class JsonDevice(_Foreign):
    rank: Rank | None = None
    group: Rank | None = None  # the communicator (nccl-tests' color, NCCL_TESTS_SPLIT_MASK)
    hostname: HostName


class JsonConfig(_Foreign):
    devices: list[JsonDevice] = Field(min_length=1, max_length=MAX_RANKS)


class JsonAverage(_Foreign):
    # informational only; "nan" is how jsonDouble writes the average of a run without results
    bandwidth: Bandwidth | Literal["nan"] | None = None


class JsonOutOfBounds(_Foreign):
    # util.cu writeResultFooter: {"count": errors, "okay": errors == 0}; the count says it all
    count: Annotated[StrictInt, Field(ge=0, le=MAX_BYTES)]


class NcclJson(_Foreign):
    """The parts of an nccl-tests ``-J`` file the report uses; anything else in it is ignored."""

    args: list[JsonString] = Field(default_factory=list, max_length=MAX_ENV)
    env: list[JsonString] = Field(default_factory=list, max_length=MAX_ENV)
    # the loaded library's version code (util.cu jsonOutputInit: ``nccl_version``, test_ncclVersion)
    nccl_version: StrictInt | None = Field(default=None, ge=0, le=99_999)
    config: JsonConfig
    results: list[JsonResult] = Field(max_length=MAX_ROWS)
    average_bus_bandwidth: JsonAverage | None = None
    out_of_bounds: JsonOutOfBounds | None = None
