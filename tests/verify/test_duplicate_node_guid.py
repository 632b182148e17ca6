"""A node GUID two records give (two `Switch` records of one switch GUID) is refused by `sm-guids` and
`verify-cabling` alike, at the second record's line, exit 2: verify-cabling merged the two switches into one
and went on, and sm-guids said only that two switches claimed one plan name."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from conftest import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY = str(FIXTURES / "tiny-ndr.yaml")
SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
R7 = 'sysimgguid=0x200007\nswitchguid=0x200007(200007)\nSwitch\t64 "S-0000000000200007"'
R6 = 'sysimgguid=0x200006\nswitchguid=0x200006(200006)\nSwitch\t64 "S-0000000000200006"'


def _run(tmp_path: Path, text: str) -> list[tuple[int, str, Path]]:
    """(exit code, what it said, its output folder) of sm-guids, then verify-cabling, on ``text``."""
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # a run of its own: sm-guids never replaces its output
    dump = tmp_path / "dump.ibnetdiscover"
    dump.write_text(text)
    out = tmp_path / "out"
    said = []
    for args in (("sm-guids", "-o", str(out)), ("verify-cabling", "--sim-speed", "HDR")):
        code, stdout, err = run_cli(args[0], TINY, "--discovered", str(dump), *args[1:])
        said.append((code, stdout + err, out))
    return said


def _lines(text: str, record: str) -> tuple[int, int]:
    """The lines of ``record``'s first and second occurrence in ``text`` (its `Switch` line)."""
    first = text.index(record)
    second = text.index(record, first + 1)
    return text[:first].count("\n") + 1, text[:second].count("\n") + 1


@pytest.mark.parametrize("slow", [False, True], ids=["as-printed", "line-by-line"])
def test_a_second_switch_record_of_one_node_guid_is_refused_at_its_line(tmp_path: Path, slow: bool) -> None:
    text = SIM.read_text()
    assert all(code == 0 for code, _, _ in _run(tmp_path, text))  # the fixture as it is
    dup = text.replace(R6, R7)  # c-leaf-su1-r6 printed with c-leaf-su1-r7's node GUID
    if slow:  # the record heads as no fast pattern reads them
        dup = dup.replace("vendid=0x0\ndevid=0x0\nsysimgguid=0x200007\n", "devid=0x0\n\n")
    first, at = _lines(dup, 'Switch\t64 "S-0000000000200007"')
    says = (
        f"dump.ibnetdiscover:{at}: record {{}}0000000000200007 has node GUID 0x0000000000200007, which the "
        f"record at line {first} has too"
    )
    (sm_code, sm_said, out), (vc_code, vc_said, _) = _run(tmp_path, dup)
    assert sm_code == 2 and says.format("S-") in sm_said, sm_said
    assert not out.exists()
    assert vc_code == 2 and says.format("") in vc_said, vc_said


def test_a_switch_record_printed_twice_whole_is_refused(tmp_path: Path) -> None:
    """The same record again, ports and all: nothing conflicts but the record itself (verify-cabling said
    MATCHES THE PLAN)."""
    text = SIM.read_text()
    record = next(r for r in text.split("\n\n") if 'Switch\t64 "S-0000000000200007"' in r)
    twice = text.rstrip("\n") + "\n\n" + record.strip("\n") + "\n"
    _, at = _lines(twice, 'Switch\t64 "S-0000000000200007"')
    for code, said, _ in _run(tmp_path, twice):
        assert code == 2 and f"dump.ibnetdiscover:{at}: record " in said and "names one node" in said, said
