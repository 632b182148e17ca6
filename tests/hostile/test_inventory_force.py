"""`inventory -o FILE` replaces an existing file only with --force (review b181); without -o it refreshes the
build's own BUILD/ansible/inventory.stack.yml as before. The builds and valid outputs are
test_stack_outputs.py's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_cli
from test_stack_outputs import builds, case

__all__ = ["builds", "case"]  # the fixtures, found by pytest in this module's names

MINE = b"the user's own file\n"


def test_inventory_replaces_a_named_file_only_with_force(case: Any, tmp_path: Path) -> None:
    build, outputs, data = case("aws")
    outputs.write_text(json.dumps(data))
    mine = tmp_path / "mine" / "hosts.yml"
    mine.parent.mkdir()
    mine.write_bytes(MINE)
    argv = ("inventory", str(build), "--from-stack", str(outputs), "-o", str(mine))
    code, out, err = run_cli(*argv)
    assert code == 2 and "exists; add --force to replace it (nothing written)" in err, out + err
    assert mine.read_bytes() == MINE and [p.name for p in mine.parent.iterdir()] == ["hosts.yml"]
    code, out, err = run_cli(*argv, "--force")
    assert code == 0, out + err
    assert mine.read_bytes() != MINE and "pool_gpu" in mine.read_text()
    default = build / "ansible" / "inventory.stack.yml"  # the build's own file: refreshed, no --force
    for _ in range(2):
        code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
        assert code == 0 and default.is_file(), out + err
