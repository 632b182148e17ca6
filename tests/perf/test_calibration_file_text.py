"""A calibration file's text is foreign: a factor's `settings` holding a newline or an escape sequence is shown
on one line without the escape when an error names the factor (FactorEntry.label), and two overlapping factors
are refused at the line of the second (`$.factors[i]`), not at the file's first line."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from ruamel.yaml import YAML

from generator.foreign import ForeignInputError
from generator.perf.calibration import CalibrationFile, read_calibration

EVIL = "\x1b[31mRED\x1b[0m\nFORGED LINE: all good\r"
FACTOR = {
    "collective": "all_reduce",
    "regime": "network-all-rails",
    "nodes_min": 2,
    "nodes_max": 2,
    "factor": 0.8,
    "runs": 1,
    "spread": 0.0,
    "settings": EVIL,
}
DOC = {
    "version": 1,
    "blueprint": "site",
    "nccl_version": "2.26.2",
    "plateau_min_bytes": 1 << 30,
    "sources": [{"file": "all_reduce_perf.txt", "sha256": "0" * 64}],
    "factors": [dict(FACTOR, collective="all_gather"), FACTOR, dict(FACTOR, nodes_min=1, nodes_max=4)],
}


def test_overlapping_factors_are_refused_at_the_second_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "cal.yaml"
    with path.open("w") as fh:
        YAML().dump(DOC, fh)
    third = [i for i, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("- collective")][2]
    with pytest.raises(ForeignInputError) as info:
        read_calibration(path, "site")
    err = info.value
    assert err.message.startswith("$.factors[2]: two factors for all_reduce network-all-rails")
    assert err.where == f"{path}:{third}"  # the third factor's line, not the file's first
    assert "\n" not in str(err) and "\x1b" not in str(err) and "\r" not in str(err)


def test_a_calibration_built_whole_still_refuses_overlaps() -> None:
    """`--calibrate` validates what it writes without the reader's context: the overlap is still refused."""
    with pytest.raises(ValidationError, match=r"factors\[2\]: two factors"):
        CalibrationFile.model_validate(DOC)
