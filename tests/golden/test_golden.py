"""Golden outputs: every example's generated files compared with the copies kept in tests/golden/.

Two levels, as Cluster Toolkit keeps its golden copies: the manifest (every output file's SHA-256, so no
byte of any output changes unseen) and the full text of a few small files per output kind (so a reviewer
reads what changed in the diff of the commit). A change to the generator that changes an output fails
here until the copies are rewritten on purpose:

    cd tests && python -m pytest golden --update-golden

and the rewritten files are committed with the change that explains them.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

GOLDEN = Path(__file__).resolve().parent / "examples"
# The files kept as text, per output kind: glob patterns in the build, the first two matches (sorted) of
# each that are at most TEXT_LIMIT bytes. Small, generated from the blueprint (not copied static roles).
TEXT_PATTERNS = (
    "report/SUMMARY.md",
    "report/findings.json",
    "nccl/*/nccl.env",
    "nccl/*/nccl.conf",
    "slurm/*.conf",
    "slurm/topology.yaml",
    "subnet_manager/*/partitions.conf",
    "subnet_manager/*/*/opensm.conf",
    "switches/asn-plan.csv",
    "switches/*/*.yaml",
    "ansible/group_vars/all.yml",
    "ansible/group_vars/pool_*.yml",
    "cabling/bom.csv",
    "cabling/netbox/device-types.csv",
    "cabling/netbox/racks.csv",
    "pulumi/Pulumi.yaml",
    "pulumi/README.md",
)
TEXT_LIMIT = 12_000
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))


def _text_files(build: Path) -> list[str]:
    chosen: list[str] = []
    for pattern in TEXT_PATTERNS:
        matches = sorted(p for p in build.glob(pattern) if p.is_file() and p.stat().st_size <= TEXT_LIMIT)
        chosen += [p.relative_to(build).as_posix() for p in matches[:2]]
    return sorted(chosen)


def _manifest(build: Path) -> dict[str, object]:
    data = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
    # the tool's version is not an output of the blueprint: a release must not rewrite every golden copy
    return {"blueprint": data["blueprint"], "files": data["files"]}


def _write_golden(dest: Path, build: Path, manifest: dict[str, object], texts: list[str]) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
    for rel in texts:
        target = dest / "files" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(build / rel, target)


def _text_differences(dest: Path, build: Path, texts: list[str]) -> list[str]:
    kept = sorted(
        p.relative_to(dest / "files").as_posix() for p in (dest / "files").rglob("*") if p.is_file()
    )
    out: list[str] = []
    if kept != texts:
        out.append(f"kept text files {kept} != chosen now {texts}")
    for rel in sorted(set(kept) & set(texts)):
        old = (dest / "files" / rel).read_text(encoding="utf-8").splitlines(keepends=True)
        new = (build / rel).read_text(encoding="utf-8").splitlines(keepends=True)
        out += difflib.unified_diff(old, new, f"golden/{rel}", f"build/{rel}", n=1)
    return out


def _hash_differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    out = [f"- {p}" for p in sorted(set(old) - set(new))]
    out += [f"+ {p}" for p in sorted(set(new) - set(old))]
    out += [f"~ {p}" for p in sorted(set(old) & set(new)) if old[p] != new[p]]
    return out


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_outputs_equal_the_golden_copies(
    example: Path, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = tmp_path / "build"
    # the blueprint named as a user names it, from its own folder: the report quotes the path as given,
    # and the golden copies must not depend on where the repository is checked out
    monkeypatch.chdir(EXAMPLES)
    code, _out, err = run_cli("generate", example.name, "-o", str(build), "--quiet")
    assert code == 0, err
    manifest, texts = _manifest(build), _text_files(build)
    dest = GOLDEN / example.stem
    if request.config.getoption("--update-golden"):
        _write_golden(dest, build, manifest, texts)
        return
    assert dest.is_dir(), f"no golden copy for {example.name}: run pytest golden --update-golden"
    kept = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    problems = _text_differences(dest, build, texts)
    if kept["blueprint"] != manifest["blueprint"]:
        problems.append(f"blueprint changed: {kept['blueprint']} -> {manifest['blueprint']}")
    problems += _hash_differences(kept["files"], manifest["files"])  # type: ignore[arg-type]
    assert not problems, (
        f"{example.name}: outputs differ from tests/golden/examples/{example.stem} "
        "(rewrite with --update-golden if the change is meant):\n"
        + "".join(p if p.endswith("\n") else p + "\n" for p in problems[:200])
    )


def test_a_changed_output_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison itself: one byte changed in one kept file, and one hash, are both reported."""
    build = tmp_path / "build"
    monkeypatch.chdir(EXAMPLES)
    assert run_cli("generate", "single-dgx-h100.yaml", "-o", str(build), "--quiet")[0] == 0
    texts = _text_files(build)
    dest = tmp_path / "golden"
    _write_golden(dest, build, _manifest(build), texts)
    assert _text_differences(dest, build, texts) == []
    victim = build / texts[0]
    victim.write_text(victim.read_text(encoding="utf-8") + "changed\n", encoding="utf-8")
    assert any("+changed" in line for line in _text_differences(dest, build, texts))
    old = {"a": "1", "b": "2"}
    assert _hash_differences(old, {"a": "1", "b": "3", "c": "4"}) == ["+ c", "~ b"]
