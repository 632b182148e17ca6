"""sm-guids' dump reader steps over a run of empty lines at once: its record-head pattern began with an
unbounded ``\\n*`` that took the rest of the run at every line before failing, so a valid dump followed by
30,000 empty lines took 87 s (50,000 here: minutes on that code, milliseconds now). The records and their
line numbers are read as before."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from generator.verify.sm_guids import parse_nodes

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY = str(FIXTURES / "tiny-ndr.yaml")
SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
BLANKS = 50_000


def _where(text: str) -> list[tuple[str, int, int]]:
    return [(n.kind, n.guid, n.line) for n in parse_nodes(text, "d")]


def test_runs_of_empty_and_blank_lines_are_read_in_one_step() -> None:
    records = SIM.read_text().split("\n\n")
    half = len(records) // 2
    text = "\n\n".join(records)
    # a gap then a line no record starts with (a record head right after the gap was read in one match)
    gap = "\n" * BLANKS + "# next\n\n"
    spaced = "\n\n".join(records[:half]) + gap + "\n\n".join(records[half:])
    cut = text.count("\n", 0, len("\n\n".join(records[:half])))  # the line the gap follows
    before, after = _where(text), _where(spaced)
    assert len(after) == len(before) > 1 and 0 < sum(line > cut for _, _, line in before) < len(before)
    # every record after the gap keeps its place, further down by the gap's lines
    assert after == [(k, g, line + BLANKS * (line > cut)) for k, g, line in before]
    # at the end of the dump, empty or blank with spaces, tabs and CRs (a CRLF dump)
    assert _where(text + "\n" * BLANKS) == _where(text + " \t\r\n" * BLANKS) == before


def test_a_dump_then_empty_lines_is_read_as_the_dump(tmp_path: Path) -> None:
    dump, out = tmp_path / "trailing.net", tmp_path / "out"
    dump.write_text(SIM.read_text() + "\n" * BLANKS)
    code, stdout, err = run_cli("sm-guids", TINY, "--discovered", str(dump), "-o", str(out))
    assert code == 0, stdout + err
    assert len((out / "cn_guids.conf").read_text().splitlines()) == 32
