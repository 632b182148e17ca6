"""One rule for tests that need a real tool (ibsim/OpenSM, slurmctld, the chroot test root, ansible-playbook,
the Pulumi SDK, ruff): skip when it is missing on a developer's machine, FAIL when it is missing in CI.

CI is recognised by the ``CI`` environment variable (set by every CI service) or ``CB_REQUIRE_REAL_TOOLS=1``
(which ``.ci/run`` exports), so a green CI run always includes the real-tool tests.

Use ``needs(missing, hint)`` inside a test or fixture, or mark a module/test with
``pytest.mark.needs_tools(missing, hint=...)`` (tests/conftest.py applies the mark through ``needs``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

import pytest

STRICT_VARIABLES = ("CI", "CB_REQUIRE_REAL_TOOLS")


def required() -> bool:
    """True when a missing real tool is a failure (CI), not a reason to skip."""
    return any(os.environ.get(name, "").strip() not in ("", "0", "false") for name in STRICT_VARIABLES)


def missing_executables(names: Iterable[str], extra_dirs: Sequence[str] = ("/usr/sbin",)) -> list[str]:
    """The names found neither on PATH nor in ``extra_dirs`` (daemons live in /usr/sbin, often off PATH)."""
    return [n for n in names if shutil.which(n) is None and not any(Path(d, n).exists() for d in extra_dirs)]


def _refuse(message: str, *, allow_module_level: bool) -> NoReturn:
    if required():
        pytest.fail(
            f"{message}: required when CI or CB_REQUIRE_REAL_TOOLS is set, not skipped", pytrace=False
        )
    pytest.skip(message, allow_module_level=allow_module_level)


def needs(missing: Sequence[str], hint: str = "", *, allow_module_level: bool = False) -> None:
    """Nothing when ``missing`` is empty; otherwise skip (developer machine) or fail (CI)."""
    if missing:
        _refuse(
            f"not available: {', '.join(missing)}" + (f" ({hint})" if hint else ""),
            allow_module_level=allow_module_level,
        )


def needs_module(name: str, hint: str = "") -> None:
    """Module-level ``pytest.importorskip`` that fails instead of skipping in CI."""
    try:
        __import__(name)
    except ImportError:
        needs([f"Python package {name}"], hint, allow_module_level=True)
