"""`blueprint migrate`: today every blueprint is current (v1 is the first schema); the upgrade machinery is
exercised with a test-only step from a made-up older version (clearly named, never shipped)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, run_cli

import generator.migrate as migrate
from generator.migrate import CURRENT, Migration

OLD = "cluster-blueprint/v0-test"


def _rename_racks(doc: Any) -> list[str]:
    site = doc.get("site")
    if site is not None and "racks" in site:
        site.insert(list(site).index("racks"), "racks_per_row", site.pop("racks"))
        return ["site.racks is now site.racks_per_row"]
    return []


@pytest.fixture
def old_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(migrate, "MIGRATIONS", (Migration(OLD, CURRENT, "rename site.racks", _rename_racks),))


def _old_file(tmp_path: Path) -> Path:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text(encoding="utf-8")
    assert "racks_per_row: 12" in text
    text = text.replace(f"apiVersion: {CURRENT}", f"apiVersion: {OLD}").replace(
        "racks_per_row: 12", "racks: 12"
    )
    path = tmp_path / "old.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_current_file_is_left_alone(tmp_path: Path) -> None:
    path = EXAMPLES / "single-dgx-h100.yaml"
    code, out, err = run_cli("migrate", str(path))
    assert code == 0 and out == path.read_text(encoding="utf-8") and "nothing to do" in err
    assert run_cli("migrate", str(path), "--check")[0] == 0


def test_newer_version_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "new.yaml"
    text = (EXAMPLES / "single-dgx-h100.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace(CURRENT, "cluster-blueprint/v9"), encoding="utf-8")
    code, _, err = run_cli("migrate", str(path))
    assert code == 2 and "newer cluster-blueprint" in err
    code, out, _ = run_cli("validate", str(path))
    assert code == 2 and "SCHEMA" in out and "newer cluster-blueprint" in out


def test_old_file_is_upgraded_keeping_comments(tmp_path: Path, old_version: None) -> None:
    path = _old_file(tmp_path)
    code, _, err = run_cli("migrate", str(path), "--check")
    assert code == 1 and f"{OLD} → {CURRENT}" in err
    code, _, _ = run_cli("validate", str(path))
    assert code == 2  # the old file does not load as v1...
    code, out, err = run_cli("migrate", str(path))
    assert code == 0, err
    assert f"apiVersion: {CURRENT}" in out and "racks_per_row: 12" in out and "racks: 12" not in out
    comments = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert comments and all(c in out.splitlines() for c in comments)
    code, _, err = run_cli("migrate", str(path), "--in-place")
    assert code == 0, err
    assert (tmp_path / "old.yaml.bak").read_text(encoding="utf-8").count(OLD) == 1
    assert run_cli("validate", str(path))[0] == 0  # ...the upgraded one does


def test_broken_step_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(migrate, "MIGRATIONS", (Migration(OLD, CURRENT, "does nothing", lambda doc: []),))
    path = _old_file(tmp_path)
    before = path.read_bytes()
    code, out, err = run_cli("migrate", str(path), "--in-place")
    assert code == 2 and "does not validate" in err and out == ""
    assert path.read_bytes() == before and not (tmp_path / "old.yaml.bak").exists()


def test_the_blueprint_and_its_backup_are_not_replaced_unasked(tmp_path: Path, old_version: None) -> None:
    """`-o FILE` naming the blueprint rewrote it with no backup; --in-place replaced an existing FILE.bak."""
    path = _old_file(tmp_path)
    before = path.read_bytes()
    code, _, err = run_cli("migrate", str(path), "-o", str(path))
    assert code == 2 and "--in-place" in err and path.read_bytes() == before, err
    backup = tmp_path / "old.yaml.bak"
    backup.write_text("the site's own notes\n")
    code, _, err = run_cli("migrate", str(path), "--in-place")
    assert code == 2 and "give --force" in err and "nothing written" in err, err
    assert path.read_bytes() == before and backup.read_text() == "the site's own notes\n"
    code, _, err = run_cli("migrate", str(path), "--in-place", "--force")
    assert code == 0, err
    assert backup.read_bytes() == before and f"apiVersion: {CURRENT}" in path.read_text()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("", ":1:1: no `apiVersion` key"),  # was "apiVersion `None`", no line
        ("apiVersion: 1", ":2:1: apiVersion 1 (not a string)"),
        ("apiVersion: 'cluster-blueprint/v1 '", ":2:1: apiVersion `cluster-blueprint/v1 `"),
        # was "apiVersion `cluster-blueprint/v1` is not one this tool knows: this tool reads cluster-blueprint/v1"
        (
            "apiVersion: !custom cluster-blueprint/v1",
            ":2:1: apiVersion `cluster-blueprint/v1` tagged !custom",
        ),
    ],
)
def test_an_unknown_api_version_is_located_and_said_as_it_is(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(f"name: x\n{line}\npools: []\n")
    code, out, err = run_cli("migrate", str(path))
    assert code == 2 and f"{path}{says}" in err, err


def test_a_character_yaml_refuses_is_located_and_yaml_warnings_stay_inside(tmp_path: Path) -> None:
    """An escape character on line 4 was reported at 1:1; a `%YAML 1.1` document's 70e9 printed ruamel's
    warning (a site-packages path and code to silence it) on stderr."""
    bad = tmp_path / "esc.yaml"
    bad.write_text("apiVersion: cluster-blueprint/v1\nname: x\npools:\n  - {name: a\x1b[31m, role: gpu}\n")
    for command in ("validate", "migrate"):
        code, out, err = run_cli(command, str(bad))
        assert code == 2 and f"{bad}:4:13:" in out + err and "#x001b" in out + err, out + err
    old = tmp_path / "yaml11.yaml"
    text = (EXAMPLES / "single-dgx-h100.yaml").read_text()
    assert "params: 70e9" in text
    old.write_text("%YAML 1.1\n---\n" + text)
    for command in ("validate", "migrate"):
        code, out, err = run_cli(command, str(old))
        assert code in (0, 1) and "Warning" not in err and "site-packages" not in err, err


IDENTITY = (Migration(OLD, CURRENT, "changes nothing", lambda doc: []),)


@pytest.mark.parametrize(
    "form",
    [
        lambda t: t,  # ruamel's fixed indentation re-indented every block sequence ("  - name" to "- name")
        lambda t: t.replace("\n", "\r\n"),  # came back LF
        lambda t: "\ufeff" + t,  # the BOM was dropped
        lambda t: "---\n" + t + "...\n",  # the document markers were dropped
        lambda t: "%YAML 1.2\n---\n" + t,
        lambda t: t.replace("description: One", "description: " + "word " * 1000 + "One"),  # folded
        lambda t: t + "x-a: &a {k: 1}  # c1\nx-b: *a\n# trailing comment\n\n\n# final\n",
        lambda t: re.sub(r"(?m)^  (?=[a-z])", "    ", t),  # 4-space mappings came back with 2
        lambda t: re.sub(
            r"(?m)^  - ", "- ", re.sub(r"(?m)^    (?=[a-z])", "  ", t)
        ),  # lists at their key's column
    ],
)
def test_an_upgrade_keeps_the_file_as_it_is_written(form: Any) -> None:
    """A step that changes nothing gives the file back byte for byte but for its apiVersion."""
    text = form((EXAMPLES / "single-dgx-h100.yaml").read_text(encoding="utf-8").replace(CURRENT, OLD))
    result = migrate.migrate_text(text, IDENTITY)
    assert result.text == text.replace(OLD, CURRENT) and result.notes == []


def test_a_comment_the_upgrade_cannot_keep_is_said() -> None:
    """ruamel drops a comment inside a flow mapping; the upgrade lost it without a word."""
    text = (EXAMPLES / "single-dgx-h100.yaml").read_text(encoding="utf-8").replace(CURRENT, OLD)
    assert "rack: {units: 42, power_kw: 12}" in text
    text = text.replace(
        "rack: {units: 42, power_kw: 12}", "rack: {units: 42, # the site's note\n    power_kw: 12}"
    )
    result = migrate.migrate_text(text, IDENTITY)
    line = text.splitlines().index("  rack: {units: 42, # the site's note") + 1
    assert result.notes == [
        f"line {line}: the comment `# the site's note` could not be kept; put it back by hand"
    ]
