"""What `rehearse` reads from a build folder that may have been edited, bounded (review h180, finding 5):
a CSV field over Python's field limit (128 KiB) in cables.csv or asn-plan.csv was an internal error (exit 3);
it is now refused at its file and line, exit 2, before any namespace exists (no real tool is needed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from rehearse_fixtures import SMALL_ROCE, generate

FIELD = "x" * (200 * 1024)  # over csv.field_size_limit(), 131,072 characters


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(SMALL_ROCE, tmp_path_factory.mktemp("roce") / "build")


def _refused(built: Path, tmp_path: Path, rel: str, edit: str, *needles: str) -> None:
    """``edit`` appended to the build's file ``rel``: `rehearse` exits 2 naming the file and line."""
    root = tmp_path / "build"
    shutil.copytree(built, root)
    with (root / rel).open("a") as f:
        f.write(edit)
    code, out, err = run_cli("rehearse", str(root))
    assert code == 2 and "internal error" not in err, (code, out, err)
    assert all(n in err for n in needles), err


@pytest.mark.parametrize(
    ("rel", "row"),
    [
        ("cabling/cables.csv", f"999,{FIELD},compute\n"),
        ("switches/asn-plan.csv", f"compute,c-leaf-x,leaf,sn5600,4200000099,{FIELD},32,32\n"),
    ],
)
def test_a_csv_field_over_the_limit_is_refused_at_its_line(
    built: Path, tmp_path: Path, rel: str, row: str
) -> None:
    line = (built / rel).read_text().count("\n") + 1
    _refused(built, tmp_path, rel, row, f"{Path(rel).name}:{line}: ", "field larger than field limit")
