"""`-o NAME/` names a folder (review b180): Path() drops the trailing slash, so `schema -o reports/` wrote a
file named `reports` (exit 0) where the user meant a folder, and a later `-o reports/x.json` was refused
because `reports` was not a folder. A file output ending in / is refused, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli


@pytest.mark.parametrize(
    "argv",
    [
        ["schema"],
        ["plan", str(EXAMPLES / "single-dgx-h100.yaml")],
        ["estimate", str(EXAMPLES / "single-dgx-h100.yaml")],
    ],
)
def test_an_output_file_ending_in_a_slash_is_refused(tmp_path: Path, argv: list[str]) -> None:
    code, out, err = run_cli(*argv, "-o", f"{tmp_path}/reports/")
    assert code == 2 and "names a folder (it ends in /)" in err and "nothing written" in err, out + err
    assert list(tmp_path.iterdir()) == []
