"""`blueprint generate`: refuses on errors, atomic, reproducible, protects hand edits."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import EXAMPLES, run_cli

SUPERPOD = str(EXAMPLES / "superpod-h100-4su.yaml")


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_refuses_on_rule_errors_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    bad.write_text(text.replace("power_kw: 44", "power_kw: 20"))  # 4 DGX H100 per rack no longer fit
    out = tmp_path / "build"
    code, _, err = run_cli("generate", str(bad), "-o", str(out), "--quiet")
    assert code == 1
    assert not out.exists()
    assert "nothing written" in err


def test_reproducible_and_manifest(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert run_cli("generate", SUPERPOD, "-o", str(a), "--quiet", "--only", "report")[0] == 0
    assert run_cli("generate", SUPERPOD, "-o", str(b), "--quiet", "--only", "report")[0] == 0
    assert tree(a) == tree(b)
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["files"] and all(len(h) == 64 for h in manifest["files"].values())
    assert set(manifest["files"]) == set(tree(a)) - {"manifest.json"}


def test_hand_edits_are_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "build"
    assert run_cli("generate", SUPERPOD, "-o", str(out), "--quiet", "--only", "report")[0] == 0
    edited = out / "report" / "SUMMARY.md"
    edited.write_text("my notes\n")
    code, _, err = run_cli("generate", SUPERPOD, "-o", str(out), "--quiet", "--only", "report")
    assert code == 1 and "report/SUMMARY.md" in err
    assert edited.read_text() == "my notes\n"
    assert (
        run_cli("generate", SUPERPOD, "-o", str(out), "--quiet", "--only", "report", "--overwrite-edited")[0]
        == 0
    )
    assert edited.read_text() != "my notes\n"


def test_failed_build_leaves_previous_build_untouched(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "build"
    assert run_cli("generate", SUPERPOD, "-o", str(out), "--quiet", "--only", "report")[0] == 0
    before = tree(out)
    import generator.emit.report as report

    def boom(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(report, "emit", boom)
    code, _, _ = run_cli("generate", SUPERPOD, "-o", str(out), "--quiet", "--only", "report")
    assert code == 3
    assert tree(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".build")]


def test_unknown_output_is_refused(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "generate", SUPERPOD, "-o", str(tmp_path / "b"), "--quiet", "--only", "cabling,bogus"
    )
    assert code == 1 and "bogus" in err
