"""`sm-guids` and `verify-cabling` read one dump the same way: the same records, the same GUIDs, the same
refusals (a record kind one reader skipped, a port GUID twice or 0, a node id its GUID line contradicts)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
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


def _verify(tmp_path: Path, text: str, name: str = "v.ibnetdiscover") -> tuple[int, str]:
    dump = tmp_path / name
    dump.write_text(text)
    code, out, err = run_cli("verify-cabling", TINY, "--discovered", str(dump), "--sim-speed", "HDR")
    return code, out + err


@pytest.mark.parametrize("slow", [False, True], ids=["as-printed", "line-by-line"])
def test_a_port_guid_twice_or_zero_is_refused_at_its_line_by_both_commands(
    tmp_path: Path, slow: bool
) -> None:
    """dgx003 mlx5_11's port given dgx001 mlx5_11's port GUID (both lines that print it), or GUID 0: sm-guids
    wrote it into cn_guids.conf and both tenants' partitions, verify-cabling said MATCHES THE PLAN."""
    text = SIM.read_text()
    if slow:  # the comment's width/speed left out: the per-line reader (_add_port), not _FAST_PORT
        text = text.replace(" 4xHDR\n", "\n")
    assert _verify(tmp_path, SIM.read_text())[0] == 0  # the fixture as it is
    dup = text.replace('"H-000000000010002e"[1](10002f)', '"H-000000000010002e"[1](10000f)')
    dup = dup.replace("\n[1](10002f) \t", "\n[1](10000f) \t")
    zero = text.replace("\n[1](10000f) \t", "\n[1](0) \t")
    for bad, says in (
        (
            dup,
            "dump.ibnetdiscover:13: port 1 of 0x000000000010002e has port GUID 0x000000000010000f, which "
            "line 11 gives to port 1 of 0x000000000010000e",
        ),
        (zero, "dump.ibnetdiscover:182: port 1 of 0x000000000010000e has port GUID 0, which names no port"),
    ):
        code, said, out = _sm_guids(tmp_path, bad)
        assert code == 2 and says in said, said
        assert not out.exists()
        code, said = _verify(tmp_path, bad, "dump.ibnetdiscover")
        assert code == 2 and says in said, said
    # one port printed with two GUIDs (the switch's line and the CA's own) is refused too
    two = text.replace("\n[1](10002f) \t", "\n[1](10009f) \t")
    code, said = _verify(tmp_path, two, "dump.ibnetdiscover")
    assert code == 2 and ":168: port 1 of 0x000000000010002e has port GUID 0x000000000010009f here" in said


def test_port_guid_zero_in_the_ports_report_is_refused(tmp_path: Path) -> None:
    ports = (FIXTURES / "tiny-ndr-compute-sim-hdr.ports").read_text()
    code, said = _verify(tmp_path, ports.replace("0x000000000010000f", "0x0000000000000000"), "d.ports")
    assert code == 2 and "d.ports:4: port GUID 0, which names no port" in said, said


@pytest.mark.parametrize("slow", [False, True], ids=["as-printed", "line-by-line"])
def test_a_record_whose_guid_line_and_id_disagree_is_refused_by_both(tmp_path: Path, slow: bool) -> None:
    """sm-guids took the node GUID from the `switchguid=` line, verify-cabling from the `S-<guid>` id: a dump
    where they disagree passed one command and failed the other with a misleading message."""
    text = SIM.read_text().replace("switchguid=0x200008(200008)", "switchguid=0x300008(300008)")
    if slow:  # the record head as no fast pattern reads it
        text = text.replace("vendid=0x0\ndevid=0x0\nsysimgguid=0x200008\n", "devid=0x0\n\n")
    at = text[: text.index('Switch\t64 "S-0000000000200008"')].count("\n") + 1
    says = f"dump.ibnetdiscover:{at}: record {{}}0000000000200008 follows a GUID line of 0x0000000000300008"
    code, said, out = _sm_guids(tmp_path, text)
    assert code == 2 and says.format("S-") in said, said
    assert not out.exists()
    code, said = _verify(tmp_path, text, "dump.ibnetdiscover")
    assert code == 2 and says.format("") in said, said


def test_node_ids_are_read_as_guids_by_one_rule(tmp_path: Path) -> None:
    """A 17-digit id was a name to verify-cabling (a node apart from its GUID's) and a refusal to neither:
    refused, located, by both. Ids without leading zeros are GUIDs to both (sm-guids wanted 16 digits)."""
    long = SIM.read_text().replace('[5]\t"S-0000000000200008"[29]', '[5]\t"S-00000000000200008"[29]')
    code, said, _ = _sm_guids(tmp_path, long)
    assert code == 2 and "dump.ibnetdiscover:15: node id '00000000000200008' is 17 hex digits" in said, said
    code, said = _verify(tmp_path, long, "dump.ibnetdiscover")
    assert code == 2 and "dump.ibnetdiscover:15: node id '00000000000200008' is 17 hex" in said, said
    from generator.verify.ibnetdiscover import parse_ibnetdiscover

    short = re.sub(r'"([SH])-0+([0-9a-f]+)"', r'"\1-\2"', SIM.read_text())
    short = re.sub(r"(?m)^(?:switch|ca)guid=.*\n", "", short)  # the ids are all there is
    nodes = {(n.kind, n.guid) for n in parse_nodes(short, "s")}
    assert nodes == {(n.kind, n.guid) for n in parse_ibnetdiscover(short, "s").nodes.values()}
    assert len(nodes) == 41


def test_the_node_name_map_is_keyed_by_node_guid(tmp_path: Path) -> None:
    """ibnetdiscover/opensm --node-name-map (and verify-cabling) look names up by node GUID; the HCAs were
    written by port GUID, so no tool found them. Read back, the map identifies the HCAs by GUID in
    verify-cabling, and sm-guids still takes a map written by port GUID."""
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan
    from generator.verify.ibnetdiscover import parse_ibnetdiscover
    from generator.verify.identify import PlanIndex, ib_found_links, read_node_name_map

    first = tmp_path / "first"
    assert run_cli("sm-guids", TINY, "--discovered", str(SIM), "-o", str(first))[0] == 0
    written = read_node_name_map(first / "node-name-map").names
    disc = parse_ibnetdiscover(SIM.read_text(), "d")
    cas = {n.guid: n.desc for n in disc.nodes.values() if n.kind == "ca"}
    assert {g: name for g, name in written.items() if name.startswith("dgx")} == cas
    plan = build_plan(load_and_resolve(TINY)[1])
    found = ib_found_links(disc, PlanIndex(plan, "compute"), written)
    assert {found.identity[f"0x{g:016x}"].how for g in cas} == {"guid"}
    # a map keyed by port GUID (as written before) is still the site's record to sm-guids
    by_port = tmp_path / "by-port.map"
    by_port.write_text("".join(f'0x{g:016x} "{name}"\n' for g, name in _port_guids().items()))
    code, out, err = run_cli(
        "sm-guids", TINY, "--discovered", str(SIM), "--node-name-map", str(by_port), "-o", str(tmp_path / "o")
    )
    assert code == 0, out + err
    assert (tmp_path / "o" / "cn_guids.conf").read_text() == (first / "cn_guids.conf").read_text()


def _port_guids() -> dict[int, str]:
    """Port GUID → "host mlx5_N" of the tiny dump's HCAs (their own port lines)."""
    return {p: n.desc for n in parse_nodes(SIM.read_text(), "d") if n.kind == "ca" for p in n.ports.values()}
