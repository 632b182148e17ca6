"""Pausing the cyclic garbage collector around large, cycle-free builds."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Set by the CLI when this process ends with the command it runs (generator/cli.py main): what a paused
# block allocated is then handed to the permanent generation rather than walked by the collection that
# re-enabling the collector sets off (~15 ms of `validate` of the 4,096-GPU example, benchmarks/startup.py).
_EXITS_AFTER_COMMAND = False


def exits_after_command() -> None:
    """Say that this process exits after its command (the CLI program, not a caller in a test process)."""
    global _EXITS_AFTER_COMMAND
    _EXITS_AFTER_COMMAND = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off (and back on after, if it was on).

    Building and rendering a 100k-GPU plan allocates millions of tuples and strings, none in reference
    cycles, so the collector finds nothing; but each of its full passes walks every live object, which
    cost ~30 % of plan building and ~40 % of cabling, and about a quarter of reading and comparing a
    100k-GPU discovery (verify-cabling, sm-guids). Reference counting still frees everything. In a
    process that exits after its command, what the block allocated is frozen (``gc.freeze()``) before the
    collector is back on: the collection that re-enabling it sets off would walk all of it once more, for
    nothing (generator/cli.py ``keep_until_exit``).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _EXITS_AFTER_COMMAND:
                gc.freeze()
            gc.enable()
