"""`cabling BP -o BUILD/cabling` refreshes a generate build's cabling folder without --force (docs/cabling.md)
and records what it wrote in the build's manifest (review h154 f4): the manifest kept the old digests, so the
next `generate` refused the tool's own files as "changed by hand" and a second refresh asked for --force."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from conftest import run_cli
from small_ib_site import write

SLACK = "  cabling: {slack_m: 5}\n"  # a blueprint edit that changes every cable length


def _digests_match(build: Path) -> None:
    manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    for rel, digest in manifest["files"].items():
        if rel.startswith("cabling/"):
            assert hashlib.sha256((build / rel).read_bytes()).hexdigest() == digest, rel
    assert "cabling" in manifest["outputs"]


def test_a_refresh_is_recorded_in_the_build_manifest(tmp_path: Path) -> None:
    bp, build = write(tmp_path), tmp_path / "build"
    assert run_cli("generate", str(bp), "-o", str(build), "--quiet")[0] == 0
    before = (build / "cabling" / "cables.csv").read_bytes()
    write(tmp_path, extra_site=SLACK)
    code, _, err = run_cli("cabling", str(bp), "-o", str(build / "cabling"), "-q")
    assert code == 0, err
    assert (build / "cabling" / "cables.csv").read_bytes() != before
    _digests_match(build)
    code, _, err = run_cli("cabling", str(bp), "-o", str(build / "cabling"), "-q")  # a second refresh
    assert code == 0, err
    code, out, err = run_cli("generate", str(bp), "-o", str(build), "--quiet")
    assert code == 0, out + err  # the refreshed files are no hand edits
    _digests_match(build)
    with (build / "cabling" / "bom.csv").open("a") as fh:  # a real hand edit is still one
        fh.write("an edit\n")
    code, _, err = run_cli("cabling", str(bp), "-o", str(build / "cabling"))
    assert code == 2 and "bom.csv" in err and "--force" in err, err


def test_the_cabling_folder_of_another_clusters_build_needs_force(tmp_path: Path) -> None:
    bp, build = write(tmp_path), tmp_path / "build"
    assert run_cli("generate", str(bp), "-o", str(build), "--quiet")[0] == 0
    other = tmp_path / "other.yaml"
    other.write_text(bp.read_text().replace("name: small-ib\n", "name: other-ib\n"))
    kept = {p: p.read_bytes() for p in build.rglob("*") if p.is_file()}
    code, _, err = run_cli("cabling", str(other), "-o", str(build / "cabling"))
    assert code == 2 and "build of `small-ib`" in err and "nothing written" in err, err
    assert {p: p.read_bytes() for p in build.rglob("*") if p.is_file()} == kept
    code, _, err = run_cli("cabling", str(other), "-o", str(build / "cabling"), "--force", "-q")
    assert code == 0, err
    _digests_match(build)
