"""`sm-guids` and `verify-cabling` read one dump the same way: the same records, the same GUIDs, the same
refusals (a record kind one reader skipped, a port GUID twice or 0, a node id its GUID line contradicts)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

from generator.verify.sm_guids import parse_nodes

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY = str(FIXTURES / "tiny-ndr.yaml")
SIM = FIXTURES / "tiny-ndr-compute-sim-hdr.ibnetdiscover"


def _sm_guids(tmp_path: Path, text: str, *extra: str) -> tuple[int, str, Path]:
    dump = tmp_path / "dump.ibnetdiscover"
    dump.write_text(text)
    out = tmp_path / "out"
    code, stdout, err = run_cli("sm-guids", TINY, "--discovered", str(dump), "-o", str(out), *extra)
    return code, stdout + err, out


def test_hca_records_are_read_as_ca_records(tmp_path: Path) -> None:
    """`Hca` (ibsim net files) was read by verify-cabling but skipped by sm-guids: an empty cn_guids.conf and
    partitions without members, exit 0."""
    text = SIM.read_text()
    hca = text.replace("\nCa\t", "\nHca\t")
    assert hca.count("\nHca\t") == 32
    assert [(n.kind, n.guid) for n in parse_nodes(hca, "h")] == [
        (n.kind, n.guid) for n in parse_nodes(text, "c")
    ]
    code, said, out = _sm_guids(tmp_path, hca)
    assert code == 0, said
    assert len((out / "cn_guids.conf").read_text().splitlines()) == 32


def test_a_gpu_pool_with_no_port_in_the_dump_is_refused(tmp_path: Path) -> None:
    """No compute port of the pool identified: nothing written, exit 1 (as a missing top tier is)."""
    records = SIM.read_text().split("\n\n")
    switches = [r for r in records if "caguid=" not in r]
    code, said, out = _sm_guids(tmp_path, "\n\n".join(switches) + "\n")
    assert code == 1, said
    assert "GPU pool dgx: none of its 32 planned ports" in said
    assert not out.exists()
    # one port of the pool found: the others are reported missing, not refused
    one = [r for r in records if "caguid=" in r][:1]
    code, said, out = _sm_guids(tmp_path, "\n\n".join(switches + one) + "\n")
    assert code == 0 and "not discovered: 31" in said, said


def test_no_output_is_an_input_even_with_force(tmp_path: Path) -> None:
    """`-o /etc/opensm --node-name-map /etc/opensm/node-name-map --force` replaced the site's own record
    with the generated map; the dump or a root file inside DIR likewise. Refused, the file kept."""
    first = tmp_path / "first"
    assert run_cli("sm-guids", TINY, "--discovered", str(SIM), "-o", str(first))[0] == 0
    site = first / "node-name-map"
    record = "# the site's record, kept by hand\n" + site.read_text()
    site.write_text(record)
    code, _, err = run_cli(
        "sm-guids", TINY, "--discovered", str(SIM), "--node-name-map", str(site), "-o", str(first), "--force"
    )
    assert code == 2 and "is also --node-name-map" in err, err
    assert site.read_text() == record
    # the dump saved as one of the outputs
    dump = first / "cn_guids.conf"
    dump.write_text(SIM.read_text())
    code, _, err = run_cli("sm-guids", TINY, "--discovered", str(dump), "-o", str(first), "--force")
    assert code == 2 and "is also --discovered" in err, err
    assert dump.read_text() == SIM.read_text() and site.read_text() == record
