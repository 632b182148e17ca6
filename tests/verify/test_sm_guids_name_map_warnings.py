"""sm-guids --node-name-map says what verify-cabling says of the same map, in the same words (one function,
identify.name_map_warnings): the lines it is not read from, and the entries naming a node of the dump but no
plan device of its kind. sm-guids said none of it, so a typo in the site's map passed without a word. Said
before the outcome, also when the command refuses (the typo may be why), and at most 20 lines of them."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY = str(FIXTURES / "tiny-ndr.yaml")
SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"
MAP = """# the site's record
0x200007 "c-leaf-su1-r7"
0x200006 "c-leaf-su1-rr6"
not a map line
"""


def _warnings(said: str) -> list[str]:
    return [line for line in said.splitlines() if line.startswith("warning: ")]


def _both(tmp_path: Path, text: str) -> tuple[tuple[int, str], tuple[int, str]]:
    names = tmp_path / "node-name-map"
    names.write_text(text)
    nnm = ("--node-name-map", str(names))
    code, out, err = run_cli("sm-guids", TINY, "--discovered", str(SIM), "-o", str(tmp_path / "o"), *nnm)
    vcode, vout, verr = run_cli("verify-cabling", TINY, "--discovered", str(SIM), "--sim-speed", "HDR", *nnm)
    return (code, out + err), (vcode, vout + verr)


def test_sm_guids_warns_of_the_map_as_verify_cabling_does(tmp_path: Path) -> None:
    (code, said), (vcode, vsaid) = _both(tmp_path, MAP)
    assert code == 0 and vcode == 0, said + vsaid
    warned = _warnings(said)
    assert warned == [w for w in _warnings(vsaid) if "node-name-map:" in w]
    assert len(warned) == 2, warned
    assert "node-name-map:3: node-name map entry 0x0000000000200006 'c-leaf-su1-rr6' names no" in warned[0]
    assert "node-name-map:4: not a node-name map line" in warned[1]
    assert (tmp_path / "o" / "cn_guids.conf").is_file()


def test_the_warnings_come_before_a_refusal_they_explain_and_are_capped(tmp_path: Path) -> None:
    # an HCA's GUID recorded as a spine: the spine that is c-spine-001 is refused (the site recorded the
    # name for another GUID), and the entry's warning, said first, shows why
    (code, said), _ = _both(tmp_path, '0x10001c "c-spine-001"\n' + "junk\n" * 25)
    assert code == 2, said
    warned = _warnings(said)
    entry = "node-name-map:1: node-name map entry 0x000000000010001c 'c-spine-001' names c-spine-001"
    assert entry + ", which is no HCA in the plan" in warned[0]
    assert (
        len(warned) == 21
        and warned[-1] == "warning: … and 6 more (verify-cabling --format json lists them all)"
    )
    assert said.index("warning: ") < said.index(
        "claims 'c-spine-001', which the site recorded for another GUID"
    )
    assert not (tmp_path / "o").exists()
