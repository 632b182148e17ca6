"""The cyclic garbage collector held off while a discovered fabric is read and compared.

Reading a 100k-GPU dump makes millions of tuples, strings and records, none of them in a reference cycle;
each 700 of them set off a young collection, and the older generations' passes walk every object alive,
the plan's too. Off for the length of one command's comparison, the collector takes back what cycles
were left when it is on again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off inside the block (as it was, after)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
