"""An input is never an output, even with --force (review h170): `validate bp.yaml -o cat.yaml`, `estimate`,
`verify-cabling`, `sm-guids`, `acceptance-report` and `migrate` replaced the catalogue file the blueprint's
`catalog:` names with their report (exit 0), where `plan`, `topology` and `diff` refused it. Every command
that reads a blueprint and writes -o refuses it, exit 2, and leaves the catalogue as it was."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from small_ib_site import switch_catalog, write

RESULTS = Path(__file__).resolve().parent.parent / "perf" / "data" / "nccl_tests"
FIXTURES = Path(__file__).resolve().parent.parent / "verify" / "fixtures"
SIM = str(FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover")  # an ibsim dump of the tiny-ndr compute fabric
CATALOG = b"# the site's own catalogue\ngpus: {}\n"
Args = Callable[[Path, Path], list[str]]  # (blueprint, folder) -> the command line


def _tiny(folder: Path) -> Path:
    """tiny-ndr (its dump exists, so verify-cabling and sm-guids would write) naming a catalogue file."""
    folder.mkdir()
    text = (FIXTURES / "tiny-ndr.yaml").read_text(encoding="utf-8")
    bp = folder / "bp.yaml"
    bp.write_text(
        text.replace("name: tiny-ndr\n", "name: tiny-ndr\ncatalog: cat.yaml\n", 1), encoding="utf-8"
    )
    (folder / "cat.yaml").write_bytes(CATALOG)
    return bp


def _results(folder: Path) -> str:
    out = folder / "results"
    out.mkdir()
    name = "xxrjun-cnode3-003-five-programs.log"
    (out / name).write_bytes((RESULTS / name).read_bytes())
    return str(out)


def _sm_guids_dir(bp: Path, folder: Path) -> list[str]:
    # -o DIR: the catalogue is one of the files it writes (a hard link: the same file under that name)
    out = folder / "guids"
    out.mkdir()
    os.link(bp.parent / "cat.yaml", out / "node-name-map")
    return ["sm-guids", str(bp), "--discovered", SIM, "-o", str(out), "--force"]


def _cat(bp: Path) -> str:
    return str(bp.parent / "cat.yaml")


COMMANDS: dict[str, Args] = {
    "plan": lambda bp, _: ["plan", str(bp), "-o", _cat(bp)],
    "topology": lambda bp, _: ["topology", str(bp), "-o", _cat(bp)],
    "diff": lambda bp, _: ["diff", str(bp), str(bp), "-o", _cat(bp)],
    "validate": lambda bp, _: ["validate", str(bp), "-o", _cat(bp)],
    "estimate": lambda bp, _: ["estimate", str(bp), "-o", _cat(bp)],
    "verify-cabling": lambda bp, _: [
        *("verify-cabling", str(bp), "--discovered", SIM, "--sim-speed", "HDR", "-o", _cat(bp)),
    ],
    "sm-guids": _sm_guids_dir,
    "acceptance-report": lambda bp, f: [
        *("acceptance-report", str(bp), "--results", _results(f), "-o", _cat(bp)),
    ],
    "migrate": lambda bp, _: ["migrate", str(bp), "-o", _cat(bp)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_writes_over_the_catalogue(tmp_path: Path, command: str) -> None:
    """Even with --force; without it the existing file is refused before the blueprint is read (which
    names the catalogue): tests/cli/test_outputs_refused_before_reading.py."""
    bp = _tiny(tmp_path / "site")  # the catalogue is found from the blueprint's folder, not the working one
    argv = COMMANDS[command](bp, tmp_path)
    code, out, err = run_cli(*argv, *([] if "--force" in argv else ["--force"]))
    assert code == 2 and "is also the catalogue file" in err and "nothing written" in err, out + err
    assert (tmp_path / "site" / "cat.yaml").read_bytes() == CATALOG
    code, out, err = run_cli(*[a for a in argv if a != "--force"])
    assert code == 2 and "nothing written" in err, out + err
    assert (tmp_path / "site" / "cat.yaml").read_bytes() == CATALOG


def test_validate_spares_the_catalogue_of_any_blueprint_even_one_that_does_not_resolve(
    tmp_path: Path,
) -> None:
    """The report of a blueprint that loads but does not resolve (an unknown server) names its catalogue
    file too: the loaded blueprint tells where it is before the rules run."""
    good = write(tmp_path / "a", None)
    bp = write(tmp_path / "site", switch_catalog())
    bp.write_text(bp.read_text().replace("server: dgx-h100", "server: no-such-server"), encoding="utf-8")
    cat = tmp_path / "site" / "cat.yaml"
    before = cat.read_bytes()
    code, out, err = run_cli("validate", str(good), str(bp), "-o", str(cat), "--force")
    assert code == 2 and f"the catalogue file the blueprint {bp} names" in err, out + err
    assert cat.read_bytes() == before
    code, out, err = run_cli("validate", str(good), str(bp), "-o", str(tmp_path / "report"))
    assert code == 2 and "no-such-server" in (tmp_path / "report").read_text(), out + err


def test_validate_from_standard_input_spares_the_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A blueprint on standard input finds its catalogue from the working folder, as resolve() does."""
    bp = write(tmp_path, switch_catalog())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bp.read_bytes())))
    before = (tmp_path / "cat.yaml").read_bytes()
    code, out, err = run_cli("validate", "-", "-o", "cat.yaml", "--force")
    assert code == 2 and "the blueprint on standard input names (catalog: cat.yaml)" in err, out + err
    assert (tmp_path / "cat.yaml").read_bytes() == before


@pytest.mark.parametrize("command", ["validate", "estimate", "migrate"])
def test_another_output_file_is_still_written(tmp_path: Path, command: str) -> None:
    bp = _tiny(tmp_path / "site")
    report = tmp_path / "report"
    code, out, err = run_cli(command, str(bp), "-o", str(report))
    assert code == 0 and report.stat().st_size > 0, out + err
