"""What an advice JSON (`blueprint advise --format json`) may hold when `init --from-advice` reads it back.

The file is foreign input: it may have been edited, or written by someone else. It is read as a regular file
of bounded size (generator/foreign.py), parsed as standard JSON (no NaN/Infinity), and its ``request``
checked against :class:`AdviceRequest`: finite numbers in range, the advisor's own choices for the words,
and a GPU count whose nodes fit the largest design this tool builds (generator/limits.py). A value outside
it is refused at its JSON path (``advice.json: $.request.gpus``) with exit 2, never passed on to the
advisor, where ``params: "nan"`` or ``gpus: 1e300`` used to end in an internal error.
"""

from __future__ import annotations

import re
import typing
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from blueprints.models.base import upper_bound
from blueprints.models.workload import Workload
from blueprints.starter import STARTER_GPU
from generator.foreign import ByteBudget, ForeignInputError, parse_json, pydantic_refusal, read_foreign_text
from generator.limits import MAX_NODES
from generator.perf.advice import BUDGETS, MODES, PREFERENCES, AdviceError, Request
from generator.perf.advisor import server_for

# An advice file is ~3 kB (one request, a few designs); 1 MiB leaves room for a hand-edited one.
MAX_ADVICE_BYTES = 1 << 20
# The blueprint schema's own bounds (blueprints/models/workload.py): the starter blueprint an advice writes
# must load, so a size its schema refuses is refused here, with exit 2, not by a traceback later.
MAX_PARAMS = upper_bound(Workload, "params")
MAX_TOKENS = upper_bound(Workload, "tokens")
MAX_TARGET_DAYS = upper_bound(Workload, "target_days")
# A GPU count above this cannot fill whole nodes of any catalogue server within generator/limits.py; the
# bound per server is checked by :func:`scale_problem`.
MAX_GPUS = MAX_NODES * 72
# Catalogue ids are lower-case words joined by `-`, `_` or `.` (blueprints/catalog/data/gpus.yaml).
_CATALOG_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def _one_of(choices: tuple[str, ...]) -> AfterValidator:
    def check(value: str) -> str:
        if value not in choices:
            raise ValueError(f"one of {', '.join(choices)}")
        return value

    return AfterValidator(check)


def _catalog_id(value: str) -> str:
    if not _CATALOG_ID.fullmatch(value):
        raise ValueError("a GPU catalogue id (lower-case letters, digits, `-`, `_`, `.`), e.g. h100-sxm")
    return value


Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
# what a blueprint's workload takes (blueprints/models/workload.py): the advice's starter must load
PRECISIONS: tuple[str, ...] = typing.get_args(Workload.model_fields["precision"].annotation)
_SEQUENCE = Workload.model_fields["sequence_length"]


class AdviceRequest(BaseModel):
    """The answers an advice was made for (``Advice.as_dict()["request"]``)."""

    # strict: "nan", "70e9" (a string) or true is not a number; ints are numbers
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    params: Annotated[Positive, Field(le=MAX_PARAMS)]
    mode: Annotated[StrictStr, _one_of(MODES)]
    gpus: Annotated[StrictInt, Field(ge=1, le=MAX_GPUS)] | None = None
    gpu: Annotated[StrictStr, AfterValidator(_catalog_id)] | None = None
    budget: Annotated[StrictStr, _one_of(BUDGETS)] | None = None
    prefer: Annotated[StrictStr, _one_of(PREFERENCES)] | None = None
    tokens: Annotated[Positive, Field(le=MAX_TOKENS)] | None = None
    target_days: Annotated[Positive, Field(le=MAX_TARGET_DAYS)] | None = None
    # were left out of the file: `init --from-advice` of an fp8, 32k-token advice built bf16 at 4,096
    precision: Annotated[StrictStr, _one_of(PRECISIONS)] | None = None
    sequence_length: Annotated[StrictInt, *_SEQUENCE.metadata] = _SEQUENCE.default


class AdviceDocument(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)

    request: AdviceRequest


def scale_problem(gpus: int | None, gpu: str) -> str | None:
    """Why ``gpus`` GPUs cannot be built as whole nodes of ``gpu``'s server within generator/limits.py."""
    if gpus is None:
        return None
    from blueprints.catalog import default_catalog

    try:
        server_id, server = server_for(default_catalog(), gpu)
    except AdviceError:
        return None  # the advisor names the unknown GPU itself
    per_node = max(1, server.gpus)
    if -(-gpus // per_node) > MAX_NODES:
        return (
            f"{gpus:,} GPUs are more than {MAX_NODES:,} nodes of {server_id} ({per_node} GPUs each), the "
            "largest design this tool builds"
        )
    return None


def read_advice(path: str, name: str, budget: ByteBudget | None = None) -> Request:
    """The advisor request an advice JSON file (or `-`) was made for; located refusals."""
    where = "<stdin>" if path == "-" else path
    text = read_foreign_text(path, MAX_ADVICE_BYTES, budget)
    raw = parse_json(text, where)
    try:
        req = AdviceDocument.model_validate(raw).request
    except ValidationError as exc:
        raise pydantic_refusal(where, exc.errors()) from None
    gpu = req.gpu or STARTER_GPU
    problem = scale_problem(req.gpus, gpu)
    if problem is not None:
        raise ForeignInputError(f"{where}: $.request.gpus", problem)
    return Request(
        params=req.params,
        mode=req.mode,
        gpus=req.gpus,
        gpu=gpu,
        budget=req.budget,
        prefer=req.prefer or "cost",
        tokens=req.tokens,
        target_days=req.target_days,
        precision=req.precision,
        sequence_length=req.sequence_length,
        name=name,
    )
