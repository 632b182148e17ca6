"""`validate` parses each blueprint once; only a file the loader refuses is read again to tell a
`catalog:` side file (skipped, with a note) from a broken blueprint (issue 32)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import generator.load
from generator.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "single-dgx-h100.yaml"
CATALOG = "gpus:\n  my-gpu:\n    name: My GPU\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = generator.load.parse_yaml

    def counting(text: str, file: str) -> generator.load.SourceMap:
        seen.append(Path(file).name)
        return real(text, file)

    monkeypatch.setattr(generator.load, "parse_yaml", counting)
    return seen


def test_a_blueprint_is_parsed_once(parses: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-q", str(EXAMPLE)]) == 0
    assert parses == [EXAMPLE.name]


def test_catalogue_side_file_is_still_skipped(
    tmp_path: Path, parses: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLE, tmp_path / "a.yaml")
    (tmp_path / "b-catalog.yaml").write_text(CATALOG, encoding="utf-8")
    (tmp_path / "c-broken.yaml").write_text("apiVersion: cluster-blueprint/v1\nname: x\n", encoding="utf-8")
    assert main(["validate", "--format", "json", str(tmp_path)]) == 2  # c-broken is unusable
    out, err = capsys.readouterr()
    assert "b-catalog.yaml: skipped, a hardware catalogue file" in err
    assert "b-catalog.yaml" not in out and '"file": "' + str(tmp_path / "c-broken.yaml") in out
    # the blueprint once; each refused file again to tell a catalogue from a broken blueprint
    assert parses == ["a.yaml", "b-catalog.yaml", "b-catalog.yaml", "c-broken.yaml", "c-broken.yaml"]


def test_only_catalogue_files_is_not_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cat.yaml").write_text(CATALOG, encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 0
    assert "skipped" in capsys.readouterr().err
