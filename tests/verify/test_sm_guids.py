"""`blueprint sm-guids` on a recorded dump (no simulator needed).

``tests/realtools/fixtures/ft2-hdr-rail.ibnetdiscover`` is what ``ibnetdiscover`` (infiniband-diags,
Debian 12) printed for the fabric of ``ft2-hdr-rail.yaml`` simulated by ibsim 0.10 (net file from
``render_netfile``); the generation date was removed. The real-tool run is tests/realtools/test_opensm_generated.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from vendor_tables import dgx_a100_compute_hcas

from generator.verify.sm_guids import GuidError, MissingRootsError, check_roots, guid_files, parse_nodes

FIXTURES = Path(__file__).resolve().parents[1] / "realtools" / "fixtures"
BLUEPRINT = str(FIXTURES / "ft2-hdr-rail.yaml")
DUMP = FIXTURES / "ft2-hdr-rail.ibnetdiscover"


@pytest.fixture(scope="module")
def plan():  # type: ignore[no-untyped-def]
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    return build_plan(load_and_resolve(BLUEPRINT)[1])


def _switch_guid(text: str, name: str) -> int:
    m = re.search(rf'switchguid=0x([0-9a-f]+).*\n.*"{re.escape(name)}" enhanced', text)
    assert m, name
    return int(m.group(1), 16)


def test_roots_are_the_spines_and_cns_every_gpu_port(plan) -> None:  # type: ignore[no-untyped-def]
    text = DUMP.read_text()
    files = guid_files(plan, "compute", text, str(DUMP))
    spines = sorted(d.name for d in plan.switches("compute") if d.role == "spine")
    assert [name for _, name in files.roots] == spines
    assert [g for g, _ in files.roots] == sorted(_switch_guid(text, s) for s in spines)
    assert len(files.cns) == 16 * 8  # 16 DGX A100 x 8 HCA ports
    # DGX A100 compute HCAs as NVIDIA's burn-in config lists them (tests/data/vendor_tables/)
    assert {name.split()[1] for _, name in files.cns} == set(dgx_a100_compute_hcas())
    assert files.missing == ()
    assert files.pool_ports == {"gpu": tuple(sorted(g for g, _ in files.cns))}


def test_a_spine_missing_from_the_dump_is_reported_not_guessed(plan) -> None:  # type: ignore[no-untyped-def]
    text = DUMP.read_text()
    # drop c-spine-004's own record (as if it was down at discovery)
    cut = re.sub(
        r'vendid=0x0\ndevid=0x0\nsysimgguid=0x[0-9a-f]+\nswitchguid=0x[0-9a-f]+\([0-9a-f]+\)\nSwitch\t40 "S-[0-9a-f]+"\t\t# "c-spine-004".*?\n\n',
        "",
        text,
        flags=re.S,
    )
    assert cut != text
    # a partial root list makes ftree rank the missing spine's leaves wrongly: refused, located
    with pytest.raises(MissingRootsError, match=r"^cut.out: 1 of the 4 top-tier switches .*\(c-spine-004\)"):
        guid_files(plan, "compute", cut, "cut.out")
    files = guid_files(plan, "compute", cut, "cut.out", accept_missing_roots=True)
    assert [n for _, n in files.roots] == ["c-spine-001", "c-spine-002", "c-spine-003"]
    assert "c-spine-004" in files.missing


def test_check_roots_names_every_bad_line(plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = DUMP.read_text()
    spine = _switch_guid(text, "c-spine-001")
    leaf = _switch_guid(text, "c-leaf-su2-r7")
    spines = "".join(f"0x{_switch_guid(text, f'c-spine-00{i}'):016x}\n" for i in range(1, 5))
    check_roots(plan, "compute", text, "d", spines, "roots")  # fine: the whole top tier
    bad = f"0x{spine:016x}\n0x{leaf:016x}\n0x00000000001000ff\n0x00000000deadbeef\nnot-a-guid\n"
    with pytest.raises(GuidError) as exc:
        check_roots(plan, "compute", text, "d", bad, "roots")
    msg = str(exc.value).splitlines()
    assert msg[0].startswith("roots:2: ") and "c-leaf-su2-r7 (leaf)" in msg[0]
    assert msg[1].startswith("roots:3: ") and f"is a CA (gpu016 {dgx_a100_compute_hcas()[7]})" in msg[1]
    assert msg[2].startswith("roots:4: ") and "not in the discovered fabric" in msg[2]
    assert msg[3].startswith("roots:5: ") and "is not a GUID: OpenSM refuses the whole file" in msg[3]
    assert msg[4].startswith("roots: 3 of the 4 top-tier switches are not listed") and len(msg) == 5
    f = tmp_path / "roots.conf"
    f.write_text(bad)
    code, _, err = run_cli("sm-guids", BLUEPRINT, "--discovered", str(DUMP), "--check-roots", str(f))
    assert code == 1 and f"{f}:2:" in err
    # a form feed ends no line (OpenSM reads the file with fgets): the bad line is still line 2
    with pytest.raises(GuidError, match=r"^roots:2: `not-a-guid` is not a GUID: OpenSM refuses"):
        check_roots(plan, "compute", text, "d", f"0x{spine:016x}\f\nnot-a-guid\n", "roots")


def test_check_roots_holds_a_list_to_what_the_written_file_is_held_to(plan) -> None:  # type: ignore[no-untyped-def]
    """One spine of four, or nothing at all, passed `--check-roots` ("every root is a top-tier switch"),
    where the file `sm-guids -o` writes must name every top-tier switch (ftree ranks the fabric from a
    partial root list)."""
    text = DUMP.read_text()
    one = f"0x{_switch_guid(text, 'c-spine-001'):016x}\n"
    for listed, says in ((one, "3 of the 4"), ("", "4 of the 4"), (one + one, "3 of the 4")):
        with pytest.raises(GuidError, match=re.escape(says)):
            check_roots(plan, "compute", text, "d", listed, "roots")
    check_roots(plan, "compute", text, "d", one, "roots", accept_missing=True)  # as the operator chose


def test_check_roots_reads_lines_as_opensm_does(plan) -> None:  # type: ignore[no-untyped-def]
    """OpenSM's parse_node_map: `#` lines skipped, a name after the GUID allowed, strtoull(p, &e, 0): `0123`
    octal, `0129` refused (int(x, 0) raised ValueError: exit 3), past 64 bits saturated."""
    text = DUMP.read_text()
    spines = [_switch_guid(text, f"c-spine-00{i}") for i in range(1, 5)]
    lines = [
        "# spines of hall A",
        f"0x{spines[0]:016x} c-spine-001",
        f"0x{spines[1]:x}#two",
        f"0{spines[2]:o}",
    ]
    lines += [f"  {spines[3]}\t# decimal", f"0x{spines[3]:016x}"]  # the fourth twice
    check_roots(plan, "compute", text, "d", "\n".join(lines) + "\n", "roots")
    for line, says in (
        ("0129", "OpenSM refuses"),
        ("0x", "OpenSM refuses"),
        ("99999999999999999999", "0xffff"),
    ):
        with pytest.raises(GuidError, match=r"^roots:1: ") as exc:
            check_roots(plan, "compute", text, "d", line + "\n", "roots")
        assert says in str(exc.value)


def test_check_roots_on_a_fabric_without_a_top_tier_is_refused(tmp_path: Path) -> None:
    """The hypercube: min() of no top-tier switches was an internal error (exit 3)."""
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    cube = build_plan(load_and_resolve(str(EXAMPLES / "hypercube-research.yaml"))[1])
    with pytest.raises(GuidError, match="no top tier"):
        check_roots(cube, "compute", DUMP.read_text(), "d", "0x1\n", "roots")


def test_unusable_input_exits_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.out"
    junk.write_text("hello\n")
    assert run_cli("sm-guids", BLUEPRINT, "--discovered", str(junk), "-o", str(tmp_path / "o"))[0] == 2
    assert run_cli("sm-guids", BLUEPRINT, "--discovered", str(tmp_path / "nope"), "-o", str(tmp_path))[0] == 2
    assert run_cli("sm-guids", BLUEPRINT, "--discovered", str(DUMP))[0] == 2  # neither -o nor --check-roots
    with pytest.raises(GuidError):
        parse_nodes("hello\n", "x")


TINY_DIR = Path(__file__).resolve().parent / "fixtures"


def _many_claimants(kind: str, count: int) -> str:
    """The tiny dump plus ``count`` switches all described as one plan spine, or HCAs all described as one
    host port."""
    text = (TINY_DIR / "tiny-ndr-compute-sim-hdr.ibnetdiscover").read_text()
    for i in range(count):
        guid = 0x810000 + i
        if kind == "switch":
            text += (
                f"\nvendid=0x0\ndevid=0x0\nsysimgguid=0x{guid:x}\nswitchguid=0x{guid:x}({guid:x})\n"
                f'Switch\t64 "S-{guid:016x}"\t\t# "c-spine-001" enhanced port 0 lid 13 lmc 0\n'
                f'[1]\t"H-000000000010000e"[1](10000f) \t\t# "dgx001 mlx5_11" lid 17 4xHDR\n'
            )
        else:
            text += (
                f"\nvendid=0x0\ndevid=0x0\nsysimgguid=0x{guid:x}\ncaguid=0x{guid:x}\n"
                f'Ca\t1 "H-{guid:016x}"\t\t# "dgx001 mlx5_0"\n'
                f'[1]({guid + 1:x}) \t"S-0000000000200007"[40]\t\t# lid 99 lmc 0 "c-leaf-su1-r7" lid 12 4xHDR\n'
            )
    return text


@pytest.mark.parametrize("kind", ["switch", "hca"])
def test_thousands_of_claimants_of_one_name_give_a_bounded_refusal(tmp_path: Path, kind: str) -> None:
    """Each claimant's line named every other claimant: 4,000 switches claiming one spine made 867 MB and
    12 s, 4,000 HCAs claiming one port 2.4 GB (30,000: killed at 6 GB). Each line now names five others
    and how many more, and the refusal lists its first 1,000 lines and counts the rest."""
    dump = tmp_path / "many.ibnetdiscover"
    dump.write_text(_many_claimants(kind, 3000))
    code, out, err = run_cli(
        "sm-guids", str(TINY_DIR / "tiny-ndr.yaml"), "--discovered", str(dump), "-o", str(tmp_path / "out")
    )
    assert code == 2, out + err
    assert len(err) < 2_000_000, len(err)  # every other claimant on every line: ~500 MB here
    assert re.search(r"and 2,99\d more", err), err[:2000]
    assert re.search(r"… and [\d,]+ more\n", err + "\n"), err[-500:]
    assert not (tmp_path / "out").exists()
