"""The hostile corpus: catalogues, blueprints and discovered dumps written as an attacker or a careless
user would. Data never becomes code (Ansible, shell, spreadsheets, terminals, XML, Markdown), work stays
bounded, and every one ends in a located error (exit 1/2) or a correct build: never a traceback or exit 3.
"""

from __future__ import annotations

import csv
import dataclasses
import os
import re
import resource
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

HERE = Path(__file__).resolve().parent
CATALOGS = HERE / "catalogs"
BLUEPRINTS = HERE / "blueprints"
DISCOVERED = HERE / "discovered"
USES_CATALOG = BLUEPRINTS / "uses-catalog.yaml"
PWNED = Path("/tmp/cb-pwned")  # what the corpus' payloads would create if they ran
# OWASP "CSV Injection": a cell starting with one of these is a formula in Excel, LibreOffice, Sheets
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
MAX_AS = 2 << 30  # address-space cap for subprocesses (Python itself maps ~300 MB)


def expectation(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name}: first line must say what to expect"
    return first.removeprefix("# expect: ")


def no_crash(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text


def with_catalog(tmp_path: Path, catalog: Path) -> Path:
    shutil.copy(USES_CATALOG, tmp_path / "bp.yaml")
    shutil.copy(catalog, tmp_path / "catalog.yaml")
    return tmp_path / "bp.yaml"


# ---- catalogues -----------------------------------------------------------------------------------
HOSTILE_CATALOGS = sorted(p for p in CATALOGS.glob("*.yaml") if not p.name.startswith(("valid-", "base-")))


@pytest.mark.parametrize("catalog", HOSTILE_CATALOGS, ids=lambda p: p.stem)
def test_hostile_catalogue_is_refused_at_its_line(catalog: Path, tmp_path: Path) -> None:
    PWNED.unlink(missing_ok=True)
    bp = with_catalog(tmp_path, catalog)
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 2, out + err
    assert expectation(catalog) in out + err
    assert re.search(r"catalog\.yaml:\d+:\d+: error CAT002", out + err), out + err
    assert "catalogue (" not in out, "the section name, not a field path, leads the message"
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"), "--quiet")
    assert code == 2 and not (tmp_path / "build").exists()
    assert not PWNED.exists()


def test_the_base_catalogue_is_valid(tmp_path: Path) -> None:
    code, out, err = run_cli("validate", str(with_catalog(tmp_path, CATALOGS / "base-valid.yaml")))
    assert code == 0, out + err


def test_catalogue_must_be_a_regular_file_of_bounded_size(tmp_path: Path) -> None:
    base = with_catalog(tmp_path, CATALOGS / "base-valid.yaml")
    cases = {
        "zero": lambda p: p.symlink_to("/dev/zero"),
        "fifo": lambda p: os.mkfifo(p),
        "folder": lambda p: p.mkdir(),
        "big": lambda p: p.write_text("# " + "x" * (1024 * 1024) + "\n"),
    }
    for name, make in cases.items():
        target = tmp_path / "catalog.yaml"
        if target.is_dir() and not target.is_symlink():
            target.rmdir()
        else:
            target.unlink(missing_ok=True)
        make(target)
        code, out, err = run_cli("validate", str(base))
        no_crash(out + err)
        assert code == 2 and ("not a regular file" in out or "the limit is" in out), (name, out, err)


def test_formula_text_never_starts_a_csv_cell(tmp_path: Path) -> None:
    bp = with_catalog(tmp_path, CATALOGS / "valid-formulas.yaml")
    build = tmp_path / "build"
    code, out, err = run_cli("generate", str(bp), "-o", str(build), "--quiet")
    assert code == 0, out + err
    cells, imported = [], []
    for path in sorted(build.rglob("*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            # NetBox's import files hold the text as it is: its CSV import would store the `'` (review h154)
            (imported if path.parent.name == "netbox" else cells).extend(
                (path.name, c) for row in csv.reader(fh) for c in row
            )
    formulas = [(f, c) for f, c in cells if c.startswith(FORMULA_START) and not PLAIN_NUMBER.fullmatch(c)]
    assert formulas == []
    # the hostile names did reach the spreadsheets, as inert text, and NetBox's import as they are (the
    # manufacturer `@SUM(...` is in the NetBox files only)
    assert any(c.startswith("'=HYPERLINK(") for _, c in cells)
    assert any(c.startswith("@SUM(") for _, c in imported)
    assert not any(c.startswith("'") for _, c in imported)
    for svg in build.rglob("*.svg"):
        ET.parse(svg)  # well-formed XML
    # XLSX: the same text is a typed string cell (t="inlineStr"), never a formula (<f>)
    import zipfile

    for book in build.rglob("*.xlsx"):
        with zipfile.ZipFile(book) as z:
            sheets = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")]
        assert not any("<f>" in x or "<f " in x for x in sheets)
        assert any('t="inlineStr"><is><t>=HYPERLINK(' in x for x in sheets) or book.name != "cabling.xlsx"


# ---- Ansible: generated variables are never templated ----------------------------------------------
def _hostile_ansible_build(tmp_path: Path, payload: str) -> Path:
    """The ansible/ output of a cluster whose GPU name is ``payload``: the catalogue check is bypassed
    (model_copy does not validate) to stand for any string that reaches group_vars unchecked."""
    from blueprints.catalog import default_catalog
    from generator.emit import ansible as ansible_emit
    from generator.load import load_file
    from generator.plan.build import build_plan
    from generator.resolve import resolve

    cat = default_catalog()
    gpu = cat.gpus["h100-sxm"].model_copy(update={"name": payload})
    cat = dataclasses.replace(cat, gpus={**cat.gpus, "h100-sxm": gpu})
    cluster = resolve(load_file(EXAMPLES / "superpod-h100-4su.yaml"), catalog=cat)
    out = tmp_path / "ansible"
    out.mkdir()
    ansible_emit.emit(cluster, build_plan(cluster), out)
    return out


def _play(build: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    playbook = tmp_path / "read-vars.yml"
    playbook.write_text(
        "- name: Read the generated variables\n"
        "  hosts: dgx001\n"
        "  gather_facts: false\n"
        "  tasks:\n"
        "    - name: Show them\n"
        "      ansible.builtin.debug:\n"
        "        msg: \"{{ nccl_settings | map(attribute='reason') | list }}\"\n"
        "    - name: Write them\n"
        "      ansible.builtin.copy:\n"
        '        content: "{{ nccl_settings | to_json }}"\n'
        f"        dest: {tmp_path / 'seen.json'}\n"
        "        mode: '0600'\n"
    )
    env = {**os.environ, "ANSIBLE_LOCAL_TEMP": str(tmp_path / "at"), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(
        [
            ansible_playbook(),
            "-i",
            str(build / "inventory.yml"),
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            str(playbook),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )


def ansible_playbook() -> str:
    local = Path(sys.executable).parent / "ansible-playbook"  # the venv's, like tests/ansible_playbooks
    return str(local) if local.exists() else shutil.which("ansible-playbook") or "ansible-playbook"


@pytest.fixture
def ansible_tools() -> None:
    if shutil.which(ansible_playbook()) is None:
        if os.environ.get("CI"):
            pytest.fail("ansible-playbook is required in CI")
        pytest.skip("ansible-playbook not installed")


def test_ansible_does_not_run_a_lookup_from_generated_vars(tmp_path: Path, ansible_tools: None) -> None:
    marker = tmp_path / "pwned"
    payload = f"{{{{ lookup('pipe', 'touch {marker}') }}}}"
    build = _hostile_ansible_build(tmp_path, payload)
    group_vars = (build / "group_vars" / "pool_dgx.yml").read_text()
    assert payload in group_vars.replace("\n", " ") or "lookup('pipe'" in group_vars
    for extra in (("--check",), ()):
        proc = _play(build, tmp_path, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert not marker.exists(), f"the lookup ran ({extra})"
    assert payload in (tmp_path / "seen.json").read_text(), "the value arrives as literal text"
    # control: the same file without the `!unsafe` marks does run the lookup, so the check can fail
    (build / "group_vars" / "pool_dgx.yml").write_text(group_vars.replace("!unsafe ", ""))
    _play(build, tmp_path)
    assert marker.exists(), "without !unsafe Ansible templates the value: the test setup is wrong"


# ---- shell-sourced files --------------------------------------------------------------------------
def test_sourcing_nccl_env_executes_nothing(tmp_path: Path) -> None:
    from generator.emit.nccl import NcclProfile, NcclSetting, render

    hostile = [
        NcclSetting("NCCL_A", "$(touch pwned-a)", "reason\ntouch pwned-b", "src\r\n$(touch pwned-c)"),
        NcclSetting("NCCL_B", "`touch pwned-d`", "reason\u2028touch pwned-e", "x"),
        NcclSetting("NCCL_C", "a b; touch pwned-f", "it's", "y"),
        NcclSetting("NCCL_D", "'; touch pwned-g; '", "z", "z"),
    ]
    env_file = tmp_path / "nccl.env"
    env_file.write_text(render(NcclProfile("gpu", "ib", tuple(hostile), None, None), "nccl.env.j2"))
    script = 'set -a; . ./nccl.env; set +a; printf "%s\\0" "$NCCL_A" "$NCCL_B" "$NCCL_C" "$NCCL_D"'
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nccl.env"], "sourcing created files"
    assert proc.stdout.decode().split("\0")[:4] == [s.value for s in hostile]


@pytest.mark.parametrize("example", ["superpod-h100-4su.yaml", "roce-dragonfly.yaml", "aws-p5-efa.yaml"])
def test_every_generated_env_file_sources_cleanly(example: str, tmp_path: Path) -> None:
    build = tmp_path / "build"
    code, out, err = run_cli(
        "generate", str(EXAMPLES / example), "-o", str(build), "--quiet", "--only", "nccl"
    )
    assert code == 0, out + err
    env_files = sorted(build.rglob("*.env"))
    assert env_files
    for env_file in env_files:
        names = re.findall(r"^([A-Z_][A-Z0-9_]*)=", env_file.read_text(), flags=re.M)
        run_dir = tmp_path / env_file.parent.name
        run_dir.mkdir()
        proc = subprocess.run(
            ["bash", "-c", f"set -a; . {env_file}; set +a; declare -p {' '.join(names)}"],
            cwd=run_dir,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert list(run_dir.iterdir()) == []


# ---- terminal, Rich markup, XML, Markdown -------------------------------------------------------
def test_node_descriptions_cannot_drive_the_terminal() -> None:
    code, out, err = run_cli(
        "verify-cabling",
        str(EXAMPLES / "hdr-fat-tree-a100.yaml"),
        "--discovered",
        str(DISCOVERED / "escape-in-description.net"),
    )
    no_crash(out + err)
    assert code == 1
    assert "EVIL" in out and "[bold red]x[/]" in out
    for control in ("\x1b", "\x07", "\x9b"):
        assert control not in out + err


def test_exception_text_is_shown_not_interpreted(monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.pipeline as validate  # `validate` imports check from here when it runs

    def boom(path: object) -> None:
        raise RuntimeError("broken [/x] [bold]\x1b[2J")

    monkeypatch.setattr(validate, "check", boom)
    code, _out, err = run_cli("validate", str(EXAMPLES / "single-dgx-h100.yaml"))
    assert code == 3 and "broken [/x] [bold]" in err and "\x1b" not in err and "Traceback" not in err

    def out_of_memory(path: object) -> None:
        raise MemoryError

    monkeypatch.setattr(validate, "check", out_of_memory)
    code, _out, err = run_cli("validate", str(EXAMPLES / "single-dgx-h100.yaml"))
    assert code == 2 and "out of memory" in err


def test_xml_outputs_drop_characters_xml_forbids() -> None:
    from generator.emit.diagrams.svg import Svg

    svg = Svg(100, 100, "t\x01itle\x1b", ".a{fill:#000}")
    svg.text(10, 10, "bad\x00\x0bname<&>", tip_attr="x\x02y")
    svg.el("rect", "tip\x1f", x=1, y=1)
    root = ET.fromstring(svg.render().encode())
    assert "badname<&>" in "".join(root.itertext())


def test_description_cannot_forge_summary_sections(tmp_path: Path) -> None:
    bp = BLUEPRINTS / "description-forges-sections.yaml"
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "b"), "--quiet", "--only", "report")
    assert code == 0, out + err
    summary = (tmp_path / "b" / "report" / "SUMMARY.md").read_text()
    headings = [line for line in summary.splitlines() if line.startswith("#")]
    assert headings == ["# single-dgx-h100", "## Switches", "## Findings"], summary


# ---- blueprints: bounded work ---------------------------------------------------------------------
HOSTILE_BLUEPRINTS = [p for p in sorted(BLUEPRINTS.glob("*.yaml")) if p.read_text().startswith("# expect: ")]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MAX_AS, MAX_AS))


@pytest.mark.parametrize("blueprint", HOSTILE_BLUEPRINTS, ids=lambda p: p.stem)
def test_hostile_blueprint_is_refused_at_its_line(blueprint: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "validate", str(blueprint)],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard, not a benchmark (benchmarks/hostile.py measures)
        preexec_fn=_limit_memory,
    )
    no_crash(proc.stdout + proc.stderr)
    assert proc.returncode in (1, 2), proc.stdout + proc.stderr
    assert expectation(blueprint) in proc.stdout + proc.stderr
    lines = [
        int(n)
        for n in re.findall(rf"{re.escape(blueprint.name)}:(\d+):\d+: error", proc.stdout + proc.stderr)
    ]
    assert lines and all(n > 1 for n in lines), proc.stdout + proc.stderr


# ---- discovered dumps -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("example", "dump", "expect"),
    [
        ("hdr-fat-tree-a100.yaml", "long-line.net", "long-line.net:2: line of"),
        ("hdr-fat-tree-a100.yaml", "long-port-line.net", "long-port-line.net:2: line of"),
        ("hdr-fat-tree-a100.yaml", "huge-integers.net", "huge-integers.net:2: line of"),
        ("hdr-fat-tree-a100.yaml", "/dev/zero", "not a regular file"),
        ("roce-dragonfly.yaml", "deep.json", "nested too deeply"),
        ("roce-dragonfly.yaml", "not-json.json", "not-json.json:2:1: not JSON"),
    ],
)
def test_hostile_dump_is_refused_located(example: str, dump: str, expect: str) -> None:
    path = dump if dump.startswith("/") else str(DISCOVERED / dump)
    code, out, err = run_cli("verify-cabling", str(EXAMPLES / example), "--discovered", path)
    no_crash(out + err)
    assert code == 2 and expect in err, err


def test_huge_numbers_within_the_line_limit_are_ignored_not_crashed(tmp_path: Path) -> None:
    dump = tmp_path / "n.net"
    dump.write_text('Switch 9999999999 "S-0002c903008f8700" # "sw" enhanced port 0 lid 3 lmc 0\n' * 3)
    code, out, err = run_cli(
        "verify-cabling", str(EXAMPLES / "hdr-fat-tree-a100.yaml"), "--discovered", str(dump)
    )
    no_crash(out + err)
    assert code == 2 and "no ibnetdiscover records" in err
