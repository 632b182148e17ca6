"""`configure -o FILE` replaces an existing report file only with --force (review b181), refused before the
playbook runs. A build on this machine (connection local), run by the real ansible-runner and
ansible-playbook (test_configure_review.py's)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli
from test_configure_review import _marking

MINE = b"the user's own file\n"


def test_the_report_replaces_an_existing_file_only_with_force(tmp_path: Path) -> None:
    build, marker = _marking(tmp_path)
    report = tmp_path / "mine" / "report.json"
    report.parent.mkdir()
    report.write_bytes(MINE)
    argv = ("configure", str(build), "--playbook", "mark.yml", "-o", str(report), "--format", "json")
    code, out, err = run_cli(*argv)
    assert code == 2 and "exists; add --force to replace it (nothing written)" in err, out + err
    assert report.read_bytes() == MINE and not marker.exists(), "the playbook ran before -o was checked"
    code, out, err = run_cli(*argv, "--force")
    assert code == 0 and marker.exists(), out + err
    assert report.read_bytes() != MINE and '"hosts"' in report.read_text()
    assert [p.name for p in report.parent.iterdir()] == ["report.json"]
