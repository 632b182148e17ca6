"""What a command says about the user's files is plain text: a file name is never Rich markup (`[/]` was a
MarkupError, exit 3, after the files were written; `[red]` vanished from the name shown), never an escape
sequence, and a name's bytes that are not UTF-8 are shown as \\xNN."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import EXAMPLES, run_cli


def _copy(to: Path, example: str = "single-dgx-h100") -> Path:
    to.parent.mkdir(parents=True, exist_ok=True)
    to.write_bytes((EXAMPLES / f"{example}.yaml").read_bytes())
    return to


def test_migrate_names_a_file_with_brackets_as_it_is(tmp_path: Path) -> None:
    bp = _copy(tmp_path / "d[" / "x].yaml")
    code, _, err = run_cli("migrate", str(bp))
    assert code == 0 and "internal error" not in err, err
    assert f"{bp}: already" in err


def test_a_work_order_folder_with_markup_is_named_verbatim(tmp_path: Path) -> None:
    old = _copy(tmp_path / "old.yaml", "roce-rail-2tier")
    new = tmp_path / "new.yaml"
    new.write_text(old.read_text().replace("    count: 64\n", "    count: 65\n", 1))
    for name in ("wo[/]", "wo[red]z"):
        code, _, err = run_cli("diff", str(old), str(new), "--work-order", str(tmp_path / name))
        assert code == 1 and "internal error" not in err, err
        assert f"work order: {tmp_path / name}/" in err
        assert (tmp_path / name / "work-order.csv").is_file()


def test_configure_names_a_missing_build_with_brackets(tmp_path: Path) -> None:
    code, _, err = run_cli("configure", str(tmp_path / "b[/]"))
    assert code == 2 and f"{tmp_path / 'b[/]'} has no ansible/site.yml" in err, err


def test_a_note_shows_escape_sequences_and_undecodable_bytes(tmp_path: Path) -> None:
    bp = _copy(Path(os.fsdecode(bytes(tmp_path / "e") + b"\x1b[31m\xff.yaml")))
    code, _, err = run_cli("migrate", str(bp))
    assert code == 0 and "\x1b" not in err, err
    assert "\\xff.yaml: already" in err


def test_catalogue_text_is_listed_as_written(tmp_path: Path) -> None:
    """A name holding `[/]` in a side catalogue was a MarkupError (exit 3); `[bold red]` was rendered."""
    side = tmp_path / "side.yaml"
    side.write_text(
        'gpus:\n  my-gpu:\n    name: "My [/] GPU [bold red]X"\n    vendor: nvidia\n    memory_gb: 64\n'
        "    tdp_w: 500\n    bf16_tflops: 500\n    form_factor: sxm\n    sm_arch: 90\n"
    )
    code, out, err = run_cli("catalog", "gpus", "--catalog", str(side))
    assert code == 0 and "internal error" not in err, err
    assert "My [/] GPU [bold red]X" in out


def test_explain_shows_an_escape_sequence_it_was_given() -> None:
    code, out, err = run_cli("explain", "\x1b]0;pwned\x07A")
    assert code != 0 and "\x1b" not in out + err and "unknown rule" in err
