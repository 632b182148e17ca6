"""`blueprint` run as the program leaves its objects to the process exit (generator/cli.py keep_until_exit):
frozen, so the collector's passes at exit skip them; a caller of main() in its own process (a test, a
script) keeps its collector as it was, and `validate` turns the collector back on after its check."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from generator.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "single-dgx-a100.yaml")

AS_PROGRAM = f"""
import gc, sys
from generator.cli import main
sys.argv = ["blueprint", "validate", "-q", {EXAMPLE!r}]
code = main()
sys.stderr.write(f"{{code}} {{gc.get_freeze_count()}} {{gc.isenabled()}}")
"""


def test_the_program_freezes_what_is_left_for_its_exit() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", AS_PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    code, frozen, enabled = proc.stderr.split()
    assert (code, enabled) == ("0", "True")
    assert int(frozen) > 10_000  # the model, catalogue and rules: handed to the exit


def test_a_caller_of_main_keeps_its_collector() -> None:
    frozen = gc.get_freeze_count()
    assert main(["validate", "-q", EXAMPLE]) == 0
    assert gc.get_freeze_count() == frozen
    assert gc.isenabled()


ORDER_AS_PROGRAM = f"""
import gc, sys
from generator.cli import main
events = []
freeze, enable = gc.freeze, gc.enable
gc.freeze = lambda: (events.append("freeze"), freeze())[1]
gc.enable = lambda: (events.append("enable"), enable())[1]
sys.argv = ["blueprint", "validate", "-q", {EXAMPLE!r}]
code = main()
sys.stderr.write(f"{{code}} {{' '.join(events)}}")
"""


def test_the_program_freezes_the_check_before_the_collector_is_back() -> None:
    """validate checks with the collector paused (generator/gcpause.py); as the program, what the check
    allocated is frozen before the collector is turned back on, so no collection walks it (then what the
    report allocated, at the end)."""
    proc = subprocess.run(
        [sys.executable, "-c", ORDER_AS_PROGRAM], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    code, *events = proc.stderr.split()
    assert code == "0", proc.stderr
    assert events == ["freeze", "enable", "freeze"]
