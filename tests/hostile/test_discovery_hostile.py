"""Hostile discovery dumps for `sm-guids` and `verify-cabling` (issue 31): a rogue HCA claiming a planned
name never becomes a partition member, and numbers, sizes and file types no dump can hold end in a located
refusal (exit 2) in bounded time, never exit 3.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

REALTOOLS = Path(__file__).resolve().parents[1] / "realtools" / "fixtures"
BLUEPRINT = str(REALTOOLS / "ft2-hdr-rail.yaml")
SM_BLUEPRINT = str(REALTOOLS / "ft2-hdr-rail-sm.yaml")  # has partitions (tenant-a: the gpu pool)
DUMP = REALTOOLS / "ft2-hdr-rail.ibnetdiscover"
HDR = str(EXAMPLES / "hdr-fat-tree-a100.yaml")
MAX_AS = 2 << 30  # the probe's address-space cap
OUTPUTS = ("root_guids.conf", "cn_guids.conf", "node-name-map", "partitions.conf")


def _rogue(tmp_path: Path, claim: str = "gpu001 mlx5_0", leaf_port: int = 17) -> tuple[Path, int]:
    """The recorded dump plus one HCA on a spare port of c-leaf-su2-r7 reporting ``claim``; the line of
    its port line."""
    text = DUMP.read_text()
    m = re.search(r'switchguid=0x([0-9a-f]+)\(\w+\)\nSwitch\t\d+ "S-[0-9a-f]+"\t\t# "c-leaf-su2-r7"', text)
    assert m, "leaf not in the fixture"
    leaf = int(m.group(1), 16)
    record = (
        f"\nvendid=0x2c9\ndevid=0x1021\nsysimgguid=0x9990000000000001\ncaguid=0x9990000000000001\n"
        f'Ca\t1 "H-9990000000000001"\t\t# "{claim}"\n'
        f'[1](9990000000000002) \t"S-{leaf:016x}"[{leaf_port}]\t\t# lid 0 lmc 0 "c-leaf-su2-r7" lid 0 4xHDR\n'
    )
    out = tmp_path / "rogue.out"
    out.write_text(text + record)
    return out, (text + record).count("\n")


def test_the_unmodified_dump_still_yields_every_gpu_port(tmp_path: Path) -> None:
    code, _, err = run_cli("sm-guids", SM_BLUEPRINT, "--discovered", str(DUMP), "-o", str(tmp_path / "o"))
    assert code == 0, err
    assert len((tmp_path / "o" / "cn_guids.conf").read_text().split()) == 128


@pytest.mark.parametrize("leaf_port", [17, 1])
def test_rogue_hca_claiming_a_gpu_name_is_refused_and_nothing_is_written(
    tmp_path: Path, leaf_port: int
) -> None:
    dump, line = _rogue(tmp_path, leaf_port=leaf_port)
    out = tmp_path / "o"
    code, _, err = run_cli("sm-guids", SM_BLUEPRINT, "--discovered", str(dump), "-o", str(out))
    assert code == 2, err
    assert f"{dump}:{line}: gpu001 mlx5_0/1" in err and "not trusted" in err, err
    assert not out.exists() or not any(out.iterdir())


def test_rogue_on_the_real_ports_place_is_named_as_a_duplicate(tmp_path: Path) -> None:
    dump, line = _rogue(tmp_path, claim="gpu009 mlx5_9", leaf_port=1)  # gpu009 mlx5_9 is on port 1
    code, _, err = run_cli("sm-guids", SM_BLUEPRINT, "--discovered", str(dump), "-o", str(tmp_path / "o"))
    assert code == 2 and f"{dump}:{line}:" in err and "also claimed at" in err, err


def test_recorded_guids_decide_when_given(tmp_path: Path) -> None:
    good = tmp_path / "good"
    assert run_cli("sm-guids", BLUEPRINT, "--discovered", str(DUMP), "-o", str(good))[0] == 0
    recorded = good / "node-name-map"  # the GUIDs as the site recorded them
    code, _, err = run_cli(
        "sm-guids",
        BLUEPRINT,
        "--discovered",
        str(DUMP),
        "--node-name-map",
        str(recorded),
        "-o",
        str(tmp_path / "a"),
    )
    assert code == 0, err
    lying = tmp_path / "lying.map"  # one recorded port GUID given to another host's name
    first = recorded.read_text().splitlines()
    cn = next(i for i, ln in enumerate(first) if "mlx5" in ln)
    guid = first[cn].split()[0]
    first[cn] = f'{guid} "gpu099 mlx5_0"'
    lying.write_text("\n".join(first) + "\n")
    code, _, err = run_cli(
        "sm-guids",
        BLUEPRINT,
        "--discovered",
        str(DUMP),
        "--node-name-map",
        str(lying),
        "-o",
        str(tmp_path / "b"),
    )
    assert code == 2 and "recorded its GUID as 'gpu099 mlx5_0'" in err, err
    assert not (tmp_path / "b").exists()


def test_rich_markup_is_not_printed_raw(tmp_path: Path) -> None:
    dump, _ = _rogue(tmp_path, claim="gpu001 mlx5_0")
    code, _, err = run_cli("sm-guids", SM_BLUEPRINT, "--discovered", str(dump), "-o", str(tmp_path / "o"))
    assert code == 2 and err.startswith("sm-guids: ") and "[bold red]" not in err, err


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (lambda t: t.replace("caguid=0x1000ee", "caguid=0x" + "f" * 41, 1), "GUIDs are 64-bit"),
        (lambda t: t.replace("[1](1000ef)", "[" + "9" * 5000 + "](1000ef)", 1), "the limit is 4,096"),
        (lambda t: t.replace("[1](1000ef)", "[" + "9" * 4000 + "](1000ef)", 1), "port numbers are 8-bit"),
        (lambda t: t.replace("[1](1000ef)", "[300](1000ef)", 1), "port numbers are 8-bit"),
    ],
    ids=["164-bit-guid", "5000-digit-port", "4000-digit-port", "port-300"],
)
def test_sm_guids_refuses_numbers_no_dump_holds(tmp_path: Path, edit, expect: str) -> None:  # type: ignore[no-untyped-def]
    text = DUMP.read_text()
    bad = edit(text)
    assert bad != text
    dump = tmp_path / "bad.out"
    dump.write_text(bad)
    code, _, err = run_cli("sm-guids", BLUEPRINT, "--discovered", str(dump), "-o", str(tmp_path / "o"))
    assert code == 2 and re.search(rf"{re.escape(str(dump))}:\d+: ", err) and expect in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("line", "expect"),
    [
        ("switchguid=0x" + "a" * 41, "GUIDs are 64-bit"),
        ("[" + "9" * 4000 + ']\t"H-0000000000100001"[1](100001)\t# "x" lid 0 4xHDR', "a number longer"),
        ('[300]\t"H-0000000000100001"[1](100001)\t# "x" lid 0 4xHDR', "port numbers are 8-bit"),
    ],
    ids=["164-bit-guid", "4000-digit-port", "port-300"],
)
def test_verify_cabling_refuses_numbers_no_dump_holds(tmp_path: Path, line: str, expect: str) -> None:
    dump = tmp_path / "n.net"
    dump.write_text(f'Switch\t40 "S-0000000000200001"\t\t# "sw" enhanced port 0 lid 1 lmc 0\n{line}\n')
    code, _, err = run_cli("verify-cabling", HDR, "--discovered", str(dump))
    assert code == 2 and f"{dump}:2: " in err, err
    assert expect in err or "GUIDs are 64-bit" in err, err


def test_sm_guids_does_not_replace_files_without_force(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    mine = out / "cn_guids.conf"
    mine.write_text("mine\n")
    code, _, err = run_cli("sm-guids", BLUEPRINT, "--discovered", str(DUMP), "-o", str(out))
    assert code == 2 and "--force" in err and mine.read_text() == "mine\n", err
    code, _, err = run_cli("sm-guids", BLUEPRINT, "--discovered", str(DUMP), "-o", str(out), "--force")
    assert code == 0 and len(mine.read_text().split()) == 128, err
    afile = tmp_path / "a-file"
    afile.write_text("keep\n")
    code, _, err = run_cli("sm-guids", BLUEPRINT, "--discovered", str(DUMP), "-o", str(afile))
    assert code == 2 and afile.read_text() == "keep\n", err


def _capped(*argv: str) -> tuple[int, str, float]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MAX_AS, MAX_AS))

    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard; the bound asserted is below
        preexec_fn=limit,
    )
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - t0


@pytest.mark.parametrize("command", ["verify-cabling", "sm-guids"])
def test_dev_zero_is_refused_at_once(tmp_path: Path, command: str) -> None:
    link = tmp_path / "dump.out"
    link.symlink_to("/dev/zero")
    extra = ["-o", str(tmp_path / "o")] if command == "sm-guids" else []
    code, out, seconds = _capped(command, BLUEPRINT, "--discovered", str(link), *extra)
    assert code == 2 and "not a regular file" in out and seconds < 60, out


def _short_line_dump(path: Path, size: int) -> None:
    """Links packed as densely as the format allows: every line a new link to a new HCA."""
    with path.open("w") as fh:
        written, sw, ca = 0, 0, 0x100000000
        while written < size:
            sw += 1
            chunk = [
                f'switchguid=0x{sw:x}\nSwitch\t255 "S-{sw:016x}"\t\t# "x{sw}" enhanced port 0 lid 1 lmc 0\n'
            ]
            for port in range(1, 256):
                ca += 2
                chunk.append(f'[{port}]\t"H-{ca:016x}"[1]({ca + 1:x})\t# "y" lid 2 4xHDR\n')
            text = "".join(chunk) + "\n"
            fh.write(text)
            written += len(text)


def test_oversize_dump_is_refused_in_bounded_time_and_memory(tmp_path: Path) -> None:
    dump = tmp_path / "big.net"
    _short_line_dump(dump, 67 * 1024 * 1024)
    code, out, seconds = _capped("verify-cabling", HDR, "--discovered", str(dump))
    assert code == 2 and f"{dump}: larger than" in out and seconds < 60, out


def test_densest_dump_under_the_size_limit_ends_in_a_located_refusal(tmp_path: Path) -> None:
    dump = tmp_path / "dense.net"
    _short_line_dump(dump, 60 * 1024 * 1024)
    code, out, seconds = _capped("verify-cabling", HDR, "--discovered", str(dump))
    assert code == 2 and re.search(rf"{re.escape(str(dump))}:\d+: more than [\d,]+ (links|nodes)", out), out
    assert "Traceback" not in out and seconds < 300, (seconds, out)
