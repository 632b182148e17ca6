"""`generate` as one safe build: every output into a temporary folder, a manifest, then an atomic swap.

The manifest lists the files the generator owns. Everything else in the folder is the user's (a vault file
in ``ansible/group_vars/``, ``pulumi/venv/``, notes): it is carried into the new build by hard link and
survives every regenerate, ``--overwrite-edited`` included. An owned file whose bytes differ from the
manifest was edited by hand; it is not overwritten unless the caller says so. The Pulumi stack file is
merged: keys the user added with `pulumi config set` stay. Outputs are deterministic, so a rebuild of an
unchanged blueprint reproduces the manifest exactly.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import __version__
from generator.emit import emitters
from generator.emit._registry import BuildContext, Emitter
from generator.emit.pulumi import STACK
from generator.foreign import (
    ForeignInputError,
    parse_json,
    read_foreign,
    read_foreign_text,
    refuse_yaml_bombs,
)
from generator.forked import FORK_MIN_CABLES, Child, can_fork
from generator.fsutil import (
    atomic_dir,
    carry_entries,
    checked_output_dir,
    output_lock,
    refuse_other_file_systems,
    user_entries,
)
from generator.gcpause import gc_paused
from generator.pipeline import Checked
from generator.plan.build import plan_or_raise
from generator.plan.model import Plan
from generator.safetext import one_line

MANIFEST = "manifest.json"
CABLING = "cabling"
# Owned files the user's tools edit in place: merged on regenerate rather than compared byte for byte.
MERGED = (f"pulumi/Pulumi.{STACK}.yaml",)
# manifest.json of a 100k-GPU build (a digest for each of its files) is a few megabytes
MANIFEST_LIMIT = 64 * 1024 * 1024
STACK_LIMIT = 4 * 1024 * 1024  # a stack file holds a few config keys (kilobytes); the blueprint's own limit
STACK_ALIAS = "holds a YAML anchor or alias, which generate never writes: write the value out in full"


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


def _manifest_doc(out: Path) -> Any:
    """The previous build's manifest as JSON data, read as foreign text (it may have been edited): bounded
    in size and nesting (json.loads of 100,000 nested brackets was a RecursionError, exit 3)."""
    path = out / MANIFEST
    try:
        return parse_json(read_foreign_text(path, MANIFEST_LIMIT), str(path))
    except ForeignInputError as exc:
        hint = "the build's manifest: restore it, or move the folder aside"
        raise ForeignInputError(exc.where, f"{exc.message} ({hint})") from None


def read_manifest(out: Path) -> dict[str, str] | None:
    """The files (path -> sha256) the previous build owns; {} for a new folder, None if it lists none. A
    manifest that is no JSON (too large, too deep, cut short) is a ForeignInputError naming it (exit 2)."""
    if not (out / MANIFEST).is_file():
        return {}
    doc = _manifest_doc(out)
    recorded = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(recorded, dict):
        return None
    return {str(k): str(v) for k, v in recorded.items()}


def edited_files(out: Path, owned: dict[str, str] | None = None) -> list[str]:
    """Files the previous build owns that were changed by hand (or replaced by a folder or a symlink).

    Files the manifest does not list are the user's and never count as edits; they are kept. An owned
    file the user deleted is simply written again. The stack file is merged, not compared (see
    merge_stack_files).
    """
    if not out.is_dir():
        return []
    owned = read_manifest(out) if owned is None else owned
    if owned is None:
        return [MANIFEST]
    changed = []
    for rel, digest in owned.items():
        path = out / rel
        if rel in MERGED or not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink() or not path.is_file() or sha256_file(path) != digest:
            changed.append(rel)
    return sorted(changed)


def merge_stack_files(out: Path, tmp: Path, overwrite_edited: bool) -> None:
    """Keep what `pulumi config set` added to the stack file: the user's keys join the generated ones.

    A key the blueprint decides keeps the blueprint's value; if the user changed it by hand, the build is
    refused (like any hand edit) unless ``overwrite_edited``. A value the user did not touch (what the
    previous build wrote, recorded in its manifest) takes the blueprint's new value: a changed blueprint is
    no hand edit.
    """
    previous = _previous_stack_config(out)
    for rel in MERGED:
        mine, new = out / rel, tmp / rel
        if not (mine.is_file() and not mine.is_symlink() and new.is_file()):
            continue
        try:
            text = read_foreign(mine, STACK_LIMIT).decode("utf-8")
        except UnicodeDecodeError:  # was an internal error (exit 3): a hand edit like any other
            text = None
        merged, clashes = (
            merged_stack(text, new.read_text(encoding="utf-8"), previous.get(rel), f"{out}/{rel}")
            if text is not None
            else (None, ["the file (not UTF-8 any more)"])
        )
        if clashes and not overwrite_edited:
            raise BuildRefused(
                f"{out}/{rel}: {', '.join(clashes)} set by hand differ from the blueprint; change them in "
                "the blueprint (or rerun with --overwrite-edited to take the blueprint's values)"
            )
        if merged is not None:
            new.write_text(merged, encoding="utf-8")


def merged_stack(
    mine: str, generated: str, written: dict[str, Any] | None = None, where: str = "the stack file"
) -> tuple[str | None, list[str]]:
    """(the generated stack text plus the user's extra keys, or None if nothing to add; changed keys): a key
    whose value is neither the generated one nor the one the previous build wrote (``written``) was changed
    by hand. An anchor or alias in ``mine`` is refused before it is loaded (a ForeignInputError at its line):
    comparing and recording values (``plain``) copies every alias out, so 780 bytes of nested aliases took
    37 s and 1.2 GB, one more level minutes. Refused rather than bounded: generate writes none, and one
    in a file the merge rewrites would have to be kept or copied out anyway."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt", pure=True)
    yaml.preserve_quotes = True  # "2.0" stays a string for Pulumi
    yaml.width = 4096
    try:
        refuse_yaml_bombs(mine, where, why=STACK_ALIAS)
        user = yaml.load(mine)
    except YAMLError:
        return None, ["the file (not YAML any more)"]
    if not isinstance(user, dict):
        return None, []
    doc = yaml.load(generated)
    ours = doc.get("config") or {}
    theirs = user.get("config") or {}
    if not isinstance(theirs, dict):  # `config: "…"` was an internal error (exit 3), a list silently replaced
        return None, ["config (not a mapping any more)"]
    written = written or {}
    clashes = [
        k
        for k in ours
        if k in theirs and theirs[k] != ours[k] and (k not in written or plain(theirs[k]) != written[k])
    ]
    # A key the previous build wrote that this one does not (a reservation or zone the blueprint dropped) is
    # the blueprint's, not the user's: carrying it over kept the dropped setting alive in the program. Only
    # keys the previous build did not write are `pulumi config set` additions; a written key edited by hand
    # since is an edit like any other (refused unless --overwrite-edited, which takes the blueprint's "none").
    clashes += [
        f"{k} (no longer in the blueprint)" for k in theirs if k not in ours and _edited(k, theirs, written)
    ]
    extra_config = {k: v for k, v in theirs.items() if k not in ours and k not in written}
    extra_top = {k: v for k, v in user.items() if k not in doc}
    if not extra_config and not extra_top:
        return None, clashes
    doc.setdefault("config", {})
    for k, v in extra_config.items():
        doc["config"][k] = v
    for k, v in extra_top.items():
        doc[k] = v
    buf = io.StringIO()
    yaml.dump(doc, buf)
    return buf.getvalue(), clashes


def _edited(key: str, theirs: dict[str, Any], written: dict[str, Any]) -> bool:
    """Whether the previous build wrote ``key`` and its value in the file is no longer what it wrote."""
    return key in written and plain(theirs[key]) != written[key]


def plain(value: object) -> object:
    """A YAML value as JSON data (what the manifest records of a stack file's config values)."""
    return json.loads(json.dumps(value, default=str))


def stack_config(tmp: Path) -> dict[str, dict[str, Any]]:
    """The config values the build writes into each merged stack file, before the user's keys join them."""
    from ruamel.yaml import YAML

    out: dict[str, dict[str, Any]] = {}
    for rel in MERGED:
        path = tmp / rel
        if path.is_file():
            doc = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8")) or {}
            config = doc.get("config") if isinstance(doc, dict) else None
            out[rel] = {str(k): plain(v) for k, v in (config or {}).items()}
    return out


def _previous_stack_config(out: Path) -> dict[str, dict[str, Any]]:
    """What the previous build recorded it wrote into the stack files ({} when its manifest has none)."""
    doc = _manifest_doc(out) if (out / MANIFEST).is_file() else {}
    recorded = doc.get("stack_config") if isinstance(doc, dict) else None
    if not isinstance(recorded, dict):
        return {}
    return {str(k): v for k, v in recorded.items() if isinstance(v, dict)}


def manifest_of(out: Path) -> dict[str, Any] | None:
    """The whole manifest generate wrote in ``out``; None when there is none or it is not generate's (no
    ``files`` mapping, a ``blueprint`` that is no mapping); a ForeignInputError when it is no JSON."""
    if not (out / MANIFEST).is_file():
        return None
    data = _manifest_doc(out)
    ours = isinstance(data, dict) and isinstance(data.get("files"), dict)
    return data if ours and isinstance(data.get("blueprint", {}), dict) else None


def built_from(out: Path) -> str | None:
    """The cluster name the folder's manifest records (None: no readable name)."""
    name = (manifest_of(out) or {}).get("blueprint", {}).get("name")
    return name if isinstance(name, str) else None


def refreshed(manifest: dict[str, Any], output: str, files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` of one output (paths inside it) as paths in the build, then the manifest recording their
    digests and the output among the build's: one set for atomic_write_files, the manifest replaced last
    (`cabling -o BUILD/cabling` refreshes a build, and a stale manifest took the new files for hand edits)."""
    ours = {f"{output}/{rel}": data for rel, data in files.items()}
    recorded = {str(k): v for k, v in manifest["files"].items()}
    fresh = {
        **manifest,
        "files": {**recorded, **{rel: hashlib.sha256(d).hexdigest() for rel, d in ours.items()}},
    }
    if isinstance(manifest.get("outputs"), list):  # a build whose output was not written before
        fresh["outputs"] = sorted({*map(str, manifest["outputs"]), output})
    return {**ours, MANIFEST: (json.dumps(fresh, indent=2, sort_keys=True) + "\n").encode("utf-8")}


def generate(
    checked: Checked,
    out: Path,
    only: list[str] | None = None,
    overwrite_edited: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Write the build to ``out``; files the manifest does not list are the user's and are kept."""
    cluster = checked.cluster
    available = emitters()
    wanted = list(only) if only else list(available)
    unknown = [w for w in wanted if w not in available]
    if unknown:
        raise BuildRefused(f"unknown output(s) {', '.join(unknown)}; known: {', '.join(available)}")
    shown = out
    out = checked_output_dir(out, MANIFEST)
    with output_lock(out):
        owned = read_manifest(out)
        if owned is None:
            raise BuildRefused(f"{shown}/{MANIFEST} cannot be read; restore it or move the folder aside")
        other = built_from(out)
        if only and owned and other not in (None, cluster.name):
            # --only keeps the other outputs: of another cluster, the build would mix two
            raise BuildRefused(
                f"{shown} holds the build of `{one_line(other)[:80]}`, not `{cluster.name}`: --only would "
                "mix the two; give another folder, or generate every output"
            )
        edited = edited_files(out, owned)
        if edited and not overwrite_edited:
            listed = ", ".join(edited[:10]) + (f" and {len(edited) - 10} more" if len(edited) > 10 else "")
            raise BuildRefused(
                f"{shown} has files changed by hand since the last generate: {listed}; "
                "keep a copy and rerun with --overwrite-edited"
            )
        plan = (
            checked.context.plan
            if checked.context.plan is not None
            else plan_or_raise(cluster, checked.loaded.locate)
        )
        theirs = user_entries(out, owned, skip=(MANIFEST,)) if out.is_dir() else []
        refuse_other_file_systems(out, theirs)
        result = BuildResult(shown, [], {})
        build = _Build(checked, plan, out, wanted, owned, available, progress, result)

        def fill(tmp: Path) -> None:
            build.write_outputs(tmp)
            written = stack_config(tmp)
            merge_stack_files(out, tmp, overwrite_edited)
            build.write_manifest(tmp, written)
            carry_entries(out, tmp, theirs)

        atomic_dir(out, fill)
    return result


@dataclass
class _Build:
    checked: Checked
    plan: Plan
    out: Path
    wanted: list[str]
    owned: dict[str, str]
    available: dict[str, Emitter]
    progress: Callable[[str], None] | None
    result: BuildResult
    kept: set[str] = field(default_factory=set)  # files copied from the previous build (not asked for)

    def write_outputs(self, tmp: Path) -> None:
        cluster = self.checked.cluster
        jobs: list[str] = []
        for name, emitter in self.available.items():
            if name not in self.wanted:
                self._keep_previous(name, tmp)  # outputs not asked for stay as the previous build made them
            elif not emitter.applies(cluster):
                self.result.skipped[name] = "does not apply to this blueprint"
            else:
                jobs.append(name)
        with gc_paused():  # millions of cycle-free records: full GC passes would walk them all
            self._emit_all(jobs, tmp)
        self.result.outputs.extend(jobs)

    def _emit_all(self, jobs: list[str], tmp: Path) -> None:
        """Emit ``jobs``; on a large plan the non-cabling outputs run in a forked child (second core)
        while this process writes the cabling plan, the biggest output (see generator/forked.py)."""
        theirs = [n for n in jobs if n != CABLING] if CABLING in jobs else []
        if len(self.plan.links) < FORK_MIN_CABLES or not theirs or not can_fork():
            self._emit(jobs, tmp)
            return
        _ = self.plan.bom  # counted on first read (generator/plan/model.py): once here, not in each child
        child = Child(lambda: self._emit(theirs, tmp, quiet=True))
        try:
            self._emit([n for n in jobs if n not in theirs], tmp)
            done = child.wait()
        except BaseException:  # an error here, or Ctrl-C: the child's work is not wanted
            child.cancel()
            raise
        if not done:  # make the child's part here, raising its error if it has one
            for name in theirs:
                shutil.rmtree(tmp / name, ignore_errors=True)
            self._emit(theirs, tmp)
        elif self.progress:
            for name in theirs:
                self.progress(name)

    def _emit(self, names: list[str], tmp: Path, quiet: bool = False) -> None:
        findings = tuple(f.as_dict() for f in self.checked.findings)
        for name in names:
            if self.progress and not quiet:
                self.progress(name)
            target = tmp / name
            target.mkdir(parents=True)
            self.available[name].emit(BuildContext(self.checked.cluster, self.plan, target, findings))

    def _keep_previous(self, name: str, tmp: Path) -> None:
        for rel in self.owned:
            parts = Path(rel).parts
            if Path(rel).is_absolute() or ".." in parts:  # a manifest edited to name a path outside the build
                continue
            if rel.startswith(f"{name}/") and (self.out / rel).is_file():
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.out / rel, tmp / rel)
                self.kept.add(rel)

    def write_manifest(self, tmp: Path, stack: dict[str, dict[str, Any]] | None = None) -> None:
        cluster = self.checked.cluster
        files = {str(p.relative_to(tmp)): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
        # a kept file keeps the digest the tool wrote: one edited by hand (and let through by
        # --overwrite-edited with --only of another output) is still an edit to the next generate
        files.update({rel: self.owned[rel] for rel in self.kept if rel in files})
        manifest = {
            "tool": "cluster-blueprint",
            "version": __version__,
            "blueprint": {
                "name": cluster.name,
                "file": Path(self.checked.loaded.path).name,
                "sha256": self.checked.loaded.sha256,
            },
            "outputs": sorted(d.name for d in tmp.iterdir() if d.is_dir()),
            "files": files,
            # the config values written into each stack file: a value still equal to one of them on the next
            # generate was not changed by hand (merge_stack_files)
            "stack_config": stack or {},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        self.result.files = files
