"""A node GUID two records give is refused by every reader of the dump, at the second record's line and
naming the first's, exit 2: also when the second record is keyed by a name (`S-leaf6`, as ibsim net files
key nodes) and its GUID comes from its `switchguid=` line (verify-cabling keyed the check by the record's id
and read the dump, exit 0, where sm-guids refused it), and when sm-guids reads the dump to check a root
file (`--check-roots`: exit 1, which is the root file's finding, not an unusable dump)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from conftest import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY = str(FIXTURES / "tiny-ndr.yaml")
SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
R7 = 'sysimgguid=0x200007\nswitchguid=0x200007(200007)\nSwitch\t64 "S-0000000000200007"'
R6 = 'sysimgguid=0x200006\nswitchguid=0x200006(200006)\nSwitch\t64 "S-0000000000200006"'


def _dump(tmp_path: Path, text: str) -> Path:
    dump = Path(tempfile.mkdtemp(dir=tmp_path)) / "dump.ibnetdiscover"
    dump.write_text(text)
    return dump


def _second(text: str, first: str, second: str) -> tuple[int, int]:
    """The lines of the `Switch` lines of ``first`` and of the later ``second`` in ``text``."""
    a = text.index(first)
    b = text.index(second, a + 1)
    return text[:a].count("\n") + 1, text[:b].count("\n") + 1


def test_a_named_record_with_another_records_guid_is_refused_by_both_readers(tmp_path: Path) -> None:
    text = SIM.read_text()
    named = 'sysimgguid=0x200007\nswitchguid=0x200007(200007)\nSwitch\t64 "S-leaf6"'
    dup = text.replace(R6, named)  # c-leaf-su1-r6, keyed by a name, printed with r7's node GUID
    first, at = _second(dup, 'Switch\t64 "S-0000000000200007"', 'Switch\t64 "S-leaf6"')
    says = f"dump.ibnetdiscover:{at}: record {{}}leaf6 has node GUID 0x0000000000200007, which the record at line {first}"
    dump = _dump(tmp_path, dup)
    code, out, err = run_cli("verify-cabling", TINY, "--discovered", str(dump), "--sim-speed", "HDR")
    assert code == 2 and says.format("") in err, out + err
    folder = tmp_path / "guids"
    code, out, err = run_cli("sm-guids", TINY, "--discovered", str(dump), "-o", str(folder))
    assert code == 2 and says.format("S-") in err and not folder.exists(), out + err


def test_check_roots_refuses_a_dump_with_a_guid_twice_as_unusable_input(tmp_path: Path) -> None:
    roots = tmp_path / "root_guids.conf"
    roots.write_text("0x0000000000200008\n")  # c-spine-001, the plan's one top-tier switch
    code, out, err = run_cli(
        "sm-guids", TINY, "--discovered", str(_dump(tmp_path, SIM.read_text())), "--check-roots", str(roots)
    )
    assert code == 0, out + err  # the root file and the dump as they are
    dup = SIM.read_text().replace(R6, R7)
    first, at = _second(dup, 'Switch\t64 "S-0000000000200007"', 'Switch\t64 "S-0000000000200007"')
    code, out, err = run_cli(
        "sm-guids", TINY, "--discovered", str(_dump(tmp_path, dup)), "--check-roots", str(roots)
    )
    assert code == 2, out + err
    assert f"dump.ibnetdiscover:{at}: record S-0000000000200007 has node GUID 0x0000000000200007, " in err
    assert f"which the record at line {first} has too" in err
    # any other dump the reader refuses is unusable input too, not a finding about the root file
    long_guid = SIM.read_text().replace("switchguid=0x200006(", "switchguid=0x11112222333344445(", 1)
    code, out, err = run_cli(
        "sm-guids", TINY, "--discovered", str(_dump(tmp_path, long_guid)), "--check-roots", str(roots)
    )
    assert code == 2 and "a GUID of 17 hex digits" in err, out + err
