"""The command line as a user drives it: the same options on every command, help for every option,
exit codes, ids `explain` accepts, output that survives a pipe."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, REPO, run_cli

from generator.cli import build_parser

# Commands whose positional argument is not a blueprint, and what it is instead.
NOT_A_BLUEPRINT = {
    "advise": set(),
    "schema": set(),
    "catalog": {"section"},
    "explain": {"rule"},
    "configure": {"build_dir"},
    "inventory": {"build_dir"},
    "diff": {"old", "new"},
    "init": set(),
    "examples": {"name"},
    "completion": {"shell"},
    "rehearse": {"build_dir"},
    "sot": {"action", "build"},
}
COMMON = {"--format", "--output", "--quiet"}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _cmd(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "LINES")}
    if not os.environ.get("BLUEPRINT_TEST_INSTALLED"):
        base["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "generator.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **(env or {})},
        cwd=REPO / "tests",  # not the repo root: `python -m` would import the source tree, not the install
    )


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_every_option_has_help_and_is_listed(name: str) -> None:
    sub = _subparsers()[name]
    code, out, _ = run_cli(name, "--help")
    assert code == 0
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help and action.help.strip(), (
            f"{name}: {action.option_strings or action.dest} has no help"
        )
        label = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)
        assert label in out, f"{name} --help does not list {label}"
    assert "exit codes: 0 ok; 1 findings" in out


@pytest.mark.parametrize("name", sorted(_subparsers()))
def test_common_flags_and_positional_name(name: str) -> None:
    sub = _subparsers()[name]
    options = {o for a in sub._actions for o in a.option_strings}
    assert options >= COMMON | {"-o", "-q"}, f"{name} lacks {sorted(COMMON - options)}"
    positionals = {a.dest for a in sub._actions if not a.option_strings}
    expected = NOT_A_BLUEPRINT.get(name, {"blueprint"})
    assert positionals == expected
    for a in sub._actions:
        if a.dest == "blueprint":
            assert a.metavar == "BLUEPRINT" and "standard input" in (a.help or "")


def test_stdin_dash_is_a_blueprint() -> None:
    text = (EXAMPLES / "single-dgx-h100.yaml").read_text(encoding="utf-8")
    proc = _cmd("validate", "-", stdin=text)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "<stdin>: valid" in proc.stdout
    proc = _cmd("plan", "-", "--format", "json", stdin=text)
    assert proc.returncode == 0 and json.loads(proc.stdout)["gpus"] == 8


def test_bad_stdin_is_located_and_exit_2() -> None:
    proc = _cmd("validate", "-", stdin="apiVersion: cluster-blueprint/v1\nname: x\npools: [\n")
    assert proc.returncode == 2
    assert re.search(r"<stdin>:\d+:\d+: error LOAD001", proc.stdout), proc.stdout


# --- diagnostics --------------------------------------------------------------------------------

ID_IN_FINDING = re.compile(r"Finding\(\s*\"([A-Z]+[0-9]*)\"")


def _source_ids() -> set[str]:
    ids: set[str] = set()
    for path in (REPO / "generator").rglob("*.py"):
        ids |= set(ID_IN_FINDING.findall(path.read_text(encoding="utf-8")))
    for path in (REPO / "blueprints").rglob("*.py"):
        ids |= set(ID_IN_FINDING.findall(path.read_text(encoding="utf-8")))
    return ids


def test_every_id_in_the_source_is_explained() -> None:
    ids = _source_ids()
    assert {"SCHEMA", "LOAD001", "CAT001", "PLN001"} <= ids  # the scan finds the ids users reported
    for diag in sorted(ids):
        code, out, err = run_cli("explain", diag)
        assert code == 0, f"`blueprint explain {diag}` fails: {err}"
        assert diag in out


def test_every_printed_id_is_explained(tmp_path: Path) -> None:
    """Drive validate over the malformed corpus and every example; explain every id it printed."""
    files = [str(p) for p in sorted((REPO / "tests" / "malformed").glob("*.yaml"))]
    files += [str(p) for p in sorted(EXAMPLES.glob("*.yaml"))]
    code, out, _ = run_cli("validate", "--format", "json", *files)
    assert code == 2  # the malformed files are unusable
    printed = {f["rule"] for entry in json.loads(out)["files"] for f in entry["findings"]}
    assert {"SCHEMA", "LOAD001"} <= printed
    known = json.loads(run_cli("explain", "--list", "--format", "json")[1])
    known_ids = {k["id"] for k in known}
    assert printed <= known_ids, sorted(printed - known_ids)


def test_old_spelling_is_answered_with_the_new_one() -> None:
    code, out, err = run_cli("explain", "PLAN001")
    assert code == 0 and out.startswith("PLN001") and "now spelt PLN001" in err


def test_unknown_id_exit_2_with_suggestion() -> None:
    code, _, err = run_cli("explain", "CAT01")
    assert code == 2 and "did you mean `CAT001`" in err


# --- pipes and narrow terminals -----------------------------------------------------------------


@pytest.mark.parametrize("columns", [None, "60"])
def test_piped_catalog_shows_full_ids_without_colour(columns: str | None) -> None:
    proc = _cmd("catalog", "switches", env={"COLUMNS": columns} if columns else None)
    assert proc.returncode == 0
    ids = json.loads(_cmd("catalog", "switches", "--format", "json").stdout)
    assert ids and "…" not in proc.stdout and "\x1b[" not in proc.stdout
    lines = proc.stdout.splitlines()
    for switch_id in ids:
        assert any(re.search(rf"[│|]\s*{re.escape(switch_id)}\s*[│|]", line) for line in lines), switch_id


def test_piped_estimate_sizes_are_whole() -> None:
    proc = _cmd(
        "estimate", str(EXAMPLES / "single-dgx-h100.yaml"), "--sizes", "1M,128M,8G", env={"COLUMNS": "80"}
    )
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    for size in ("1M", "128M", "8G"):
        assert re.search(rf"│\s*{size}\s*│", proc.stdout), size


# --- validate of a directory --------------------------------------------------------------------

SIDE_FILE = """\
gpus:
  my-gpu:
    name: My GPU
"""


def test_validate_directory_skips_catalog_side_files(tmp_path: Path) -> None:
    bp = (EXAMPLES / "single-dgx-h100.yaml").read_text(encoding="utf-8")
    (tmp_path / "cluster.yaml").write_text(bp, encoding="utf-8")
    (tmp_path / "my-hardware.yaml").write_text(SIDE_FILE, encoding="utf-8")
    code, out, err = run_cli("validate", str(tmp_path))
    assert code == 0, out + err
    assert "cluster.yaml: valid" in out and "my-hardware.yaml" not in out
    assert "my-hardware.yaml: skipped" in err
    code, out, err = run_cli("validate", "--quiet", str(tmp_path / "my-hardware.yaml"))
    assert code == 0 and out == "" and err == ""


def test_a_broken_blueprint_is_not_taken_for_a_catalog(tmp_path: Path) -> None:
    (tmp_path / "typo.yaml").write_text("apiVerson: cluster-blueprint/v1\nname: x\n", encoding="utf-8")
    code, out, _ = run_cli("validate", str(tmp_path))
    assert code == 2 and "SCHEMA" in out


# --- generate --format json ---------------------------------------------------------------------


def test_generate_json_counts_warnings(tmp_path: Path) -> None:
    example = next(
        p
        for p in sorted(EXAMPLES.glob("single-*.yaml"))
        if json.loads(run_cli("validate", "--format", "json", str(p))[1])["files"][0]["findings"]
    )
    findings = json.loads(run_cli("validate", "--format", "json", str(example))[1])["files"][0]["findings"]
    code, out, _ = run_cli("generate", str(example), "-o", str(tmp_path / "b"), "--format", "json")
    assert code == 0
    result = json.loads(out)
    assert result["warnings"] == sum(1 for f in findings if f["severity"] == "warning")
    assert result["infos"] == sum(1 for f in findings if f["severity"] == "info")
    assert result["errors"] == 0 and len(result["findings"]) == len(findings)


def test_configure_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ansible").mkdir()
    for name in ("site.yml", "inventory.yml"):
        (tmp_path / "ansible" / name).write_text("---\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "ansible_runner", None)  # import fails as if not installed
    code, _, err = run_cli("configure", str(tmp_path))
    assert code == 2
    assert "pip install 'cluster-blueprint[ansible]'" in err


def test_catalog_hint_prefers_the_family_and_names_the_side_file() -> None:
    from blueprints.catalog import CatalogError, default_catalog

    with pytest.raises(CatalogError) as exc:
        default_catalog().gpu("a100-pcie")  # the issue's example: an A100 PCIe, not an H100 PCIe
    hint = exc.value.hint or ""
    assert hint.startswith("did you mean `a100-40` or `a100-80`?") and "h100" not in hint
    assert "`catalog:`" in hint
    code, out, _ = run_cli("validate", str(REPO / "tests" / "malformed" / "unknown-server.yaml"))
    assert code == 2 and "did you mean `dgx-h100`?" in out and "`catalog:`" in out


def test_validate_of_a_directory_without_blueprints_is_unusable(tmp_path: Path) -> None:
    code, _, err = run_cli("validate", str(tmp_path))
    assert code == 2 and "no *.yaml" in err
