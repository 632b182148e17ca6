"""One home for the GPU a design starts from (blueprints/starter.py): a catalogue id, and no other module
of the generator names a default GPU of its own."""

from __future__ import annotations

import re
from pathlib import Path

from blueprints.catalog import default_catalog
from blueprints.starter import STARTER_GPU

ROOT = Path(__file__).resolve().parents[2]
# `= "<gpu id>"`, `default="<gpu id>"` or `or "<gpu id>"`: a default GPU chosen in place
DEFAULT_GPU = re.compile(r"""(?:=|\bor)\s*["']([a-z0-9]+-(?:sxm|pcie|nvl)[a-z0-9-]*)["']""")
# Modules that still carry their own copy, each with the edit that removes it (none left).
PENDING: dict[str, str] = {}


def test_the_starter_gpu_is_in_the_catalogue() -> None:
    assert STARTER_GPU in default_catalog().gpus


def test_no_module_chooses_a_default_gpu_of_its_own() -> None:
    found = {
        path.relative_to(ROOT).as_posix()
        for base in ("generator", "blueprints")
        for path in (ROOT / base).rglob("*.py")
        if DEFAULT_GPU.search(path.read_text(encoding="utf-8"))
    }
    assert found - set(PENDING) == {"blueprints/starter.py"}, "name blueprints.starter.STARTER_GPU instead"


def test_the_commands_offer_the_starter_gpu() -> None:
    from generator.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("advise", "init"):
        gpu = next(a for a in sub.choices[name]._actions if a.dest == "gpu")
        assert gpu.default == STARTER_GPU and STARTER_GPU in gpu.help, name
