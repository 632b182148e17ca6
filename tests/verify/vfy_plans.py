"""Plans the verifier unit tests run against (built once per session)."""

from __future__ import annotations

import functools
from pathlib import Path

from generator.plan.model import Plan

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
TINY = FIXTURES / "tiny-ndr.yaml"
SUPERPOD = HERE.parents[1] / "examples" / "superpod-h100-4su.yaml"


@functools.cache
def plan_of(path: str | Path) -> Plan:
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(path)[1])


def run_cli(*args: str) -> tuple[int, str, str]:
    """`blueprint ARGS` in-process → (exit code, stdout, stderr).

    Same as tests/conftest.py's helper, kept here because `from conftest import` breaks as soon as
    another test directory has its own conftest.py (whichever loads first owns the name).
    """
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from generator.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()
