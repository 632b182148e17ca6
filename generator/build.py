"""`generate` as one safe build: every output into a temporary folder, a manifest, then an atomic swap.

A file in the existing build whose bytes differ from the previous manifest was edited by hand; it is not
overwritten unless the caller says so. Outputs are deterministic, so a rebuild of an unchanged blueprint
reproduces the manifest exactly.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from generator import __version__
from generator.emit import OUTPUTS, emitters
from generator.fsutil import atomic_dir
from generator.pipeline import Checked
from generator.plan.build import plan_or_raise

MANIFEST = "manifest.json"


class BuildRefused(Exception):
    """The build would lose hand edits or is asked for unknown outputs; nothing was written."""


@dataclass
class BuildResult:
    out: Path
    outputs: list[str]
    skipped: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def edited_files(out: Path) -> list[str]:
    """Files in an existing build changed, removed or added by hand since the manifest was written."""
    manifest = out / MANIFEST
    if not out.exists():
        return []
    if not manifest.exists():
        return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    try:
        recorded: dict[str, str] = json.loads(manifest.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return [MANIFEST]
    changed = [
        rel
        for rel, digest in recorded.items()
        if not (out / rel).is_file() or sha256_file(out / rel) != digest
    ]
    present = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {MANIFEST}
    changed.extend(sorted(present - set(recorded)))
    return sorted(set(changed))


def generate(
    checked: Checked,
    out: Path,
    only: list[str] | None = None,
    overwrite_edited: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    cluster = checked.cluster
    available = emitters()
    wanted = list(only) if only else list(OUTPUTS)
    unknown = [w for w in wanted if w not in OUTPUTS]
    if unknown:
        raise BuildRefused(f"unknown output(s) {', '.join(unknown)}; known: {', '.join(OUTPUTS)}")
    edited = edited_files(out)
    if edited and not overwrite_edited:
        shown = ", ".join(edited[:10]) + (f" and {len(edited) - 10} more" if len(edited) > 10 else "")
        raise BuildRefused(
            f"{out} has files changed by hand since the last generate: {shown}; "
            "keep a copy and rerun with --overwrite-edited"
        )
    plan = (
        checked.context.plan
        if checked.context.plan is not None
        else plan_or_raise(cluster, checked.loaded.locate)
    )
    findings = [f.as_dict() for f in checked.findings]
    result = BuildResult(out, [], {})

    def fill(tmp: Path) -> None:
        for name in OUTPUTS:
            target = tmp / name
            if name not in wanted:
                if (out / name).is_dir():  # keep outputs not asked for from the previous build
                    shutil.copytree(out / name, target)
                continue
            module = available.get(name)
            if module is None:
                result.skipped[name] = "not available in this version"
                continue
            if not module.applies(cluster):
                result.skipped[name] = "does not apply to this blueprint"
                continue
            if progress:
                progress(name)
            target.mkdir(parents=True)
            if name == "report":
                module.emit(cluster, plan, target, findings=findings)
            else:
                module.emit(cluster, plan, target)
            result.outputs.append(name)
        files = {str(p.relative_to(tmp)): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
        manifest = {
            "tool": "cluster-blueprint",
            "version": __version__,
            "blueprint": {
                "name": cluster.name,
                "file": Path(checked.loaded.path).name,
                "sha256": checked.loaded.sha256,
            },
            "outputs": sorted(d.name for d in tmp.iterdir() if d.is_dir()),
            "files": files,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        result.files = files

    atomic_dir(out, fill)
    return result
