"""Files appear whole or not at all: write to a temporary sibling, then rename."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


FORCE_HINT = "add --force to replace it"  # the wording init, examples and advise --write used before

# link(2)'s answers when the file system has no hard links (FAT/exFAT have no link operation, and Linux's
# vfs_link answers EPERM then; some FUSE and SMB mounts answer EOPNOTSUPP or ENOSYS): no refusal of the
# name, so an unforced write makes it another way (_create)
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS})


def atomic_write_bytes(path: str | Path, data: bytes, *, replace: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, never a torn one."""
    atomic_write_parts(path, (data,), replace=replace)


def atomic_write_parts(path: str | Path, parts: Iterable[bytes], *, replace: bool = True) -> None:
    """atomic_write_bytes of the concatenated ``parts``, each written as it is made (a big file is never
    held whole in memory); an error while making a part leaves no file. ``replace=False`` (a command run
    without --force) never replaces a file: one made at ``path`` while this one was written is refused
    (OutputRefused, nothing written), not only one there when the command checked its outputs."""
    target = Path(path)
    with _refused_unless_writable(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(target), dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
        os.chmod(tmp, file_mode(target))  # mkstemp makes 0600; outputs are ordinary files
        with _refused_unless_writable(target):
            if replace:
                os.replace(tmp, target)
            else:
                _create(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)  # renamed away, or linked (the output is the other name)


def _create(tmp: str, target: Path) -> None:
    """Give the written ``tmp`` the name ``target`` only if no file has it, in one step: rename(2) replaces
    whatever is there, so a file made after the command's check (another run, the user) was lost.
    link(2) refuses an existing name in the same step that makes it, a symbolic link included (POSIX
    link(): "[EEXIST] The path2 argument resolves to an existing directory entry or refers to a symbolic
    link", https://pubs.opengroup.org/onlinepubs/9799919799/functions/link.html); the caller then removes
    ``tmp``, the other name of the written file."""
    try:
        os.link(tmp, target)
        return
    except FileExistsError:
        raise OutputRefused(f"{target} exists; {FORCE_HINT}") from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    # No hard links here: claim the name with O_CREAT|O_EXCL, which fails on any existing entry, a symbolic
    # link included, in the same step (POSIX open(): [EEXIST]), then rename over our own empty claim. A
    # reader may see that empty file for the one rename, never a torn one; checking then renaming would
    # again replace a file made between the two.
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        raise OutputRefused(f"{target} exists; {FORCE_HINT}") from None
    claim = os.fstat(fd)
    os.close(fd)
    try:
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):  # our claim, unless someone (with --force) replaced it meanwhile
            now = os.stat(target, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (claim.st_dev, claim.st_ino):
                os.unlink(target)
        raise


def _temporary_prefix(target: Path) -> str:
    """The start of the name of ``target``'s temporary sibling: the name, cut to 200 bytes. Whole, a legal
    name of 246 to 255 bytes (NAME_MAX, 255 on Linux file systems) made a temporary name over the limit
    (`.`, the name, `.` and mkstemp's 8 characters), so the file was refused as "File name too long"."""
    name = target.name
    while len(os.fsencode(name)) > 200:
        name = name[:-1]
    return f".{name}."


@contextmanager
def _refused_unless_writable(target: Path) -> Iterator[None]:
    """The file system's refusal to make ``target``'s folder, a file in it or ``target`` itself (a file where
    a folder is needed, a name too long, a folder of that name, a read-only place) as OutputRefused: the
    user's path, said in one line, with nothing written."""
    try:
        yield
    except OSError as exc:
        # a rename names its target second
        named = exc.filename2 if exc.filename2 is not None else exc.filename
        where = Path(os.path.abspath(os.fsdecode(named))) if named is not None else target
        folder = Path(os.path.abspath(target.parent))
        if where.name.startswith(_temporary_prefix(target)) and where.parent == folder:
            where = folder  # our temporary sibling: the folder is what refuses it
        if isinstance(exc, (FileExistsError, NotADirectoryError)) and where.exists() and not where.is_dir():
            raise OutputRefused(f"cannot write {target}: {where} is not a folder") from None
        raise OutputRefused(f"cannot write {target}: {where}: {exc.strerror or exc}") from None


def atomic_write_files(folder: Path, files: Mapping[str, bytes | Iterable[bytes]]) -> None:
    """Each of ``files`` (a path relative to ``folder`` -> its bytes, or its parts in order) into the existing
    ``folder``, replacing the file of that name, and only once every one is written beside it: a refusal or a
    full disk part-way leaves the old set, not a mix of two (a work order's CSV of one change beside the
    workbook of another; a cables.csv beside the labels of another plan). A folder on the way that is a
    symbolic link is refused: it would write outside ``folder``."""
    root = Path(os.path.abspath(folder))
    for rel in files:
        target = root / rel
        for step in [*reversed(target.relative_to(root).parents)][1:]:
            if (root / step).is_symlink():
                raise OutputRefused(f"cannot write {target}: {root / step} is a symbolic link")
        if target.is_dir() and not target.is_symlink():
            raise OutputRefused(f"cannot write {target}: a folder of that name is in the way")
    made: dict[Path, str] = {}
    try:
        for rel, data in files.items():
            target = root / rel
            with _refused_unless_writable(target):
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(target), dir=target.parent)
                made[target] = tmp
                with os.fdopen(fd, "wb") as fh:
                    for part in (data,) if isinstance(data, bytes) else data:
                        fh.write(part)
                os.chmod(tmp, file_mode(target))
        for target, tmp in made.items():
            with _refused_unless_writable(target):
                os.replace(tmp, target)
    finally:
        for tmp in made.values():
            Path(tmp).unlink(missing_ok=True)


def atomic_write_text(path: str | Path, text: str, *, replace: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), replace=replace)


def write_new_text(path: Path, text: str) -> None:
    """Create ``path`` (it must not exist) inside a fresh folder that is itself made whole or not at all,
    such as ``generate``'s staging folder (``atomic_dir``): no temporary file and rename per file, which
    for the 25,600 switch files of a 100k-GPU dragonfly cost ~0.4 ms each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("x", encoding="utf-8", newline="") as fh:
        fh.write(text)


def atomic_dir(target: str | Path, fill: Callable[[Path], None]) -> None:
    """Build a directory with ``fill(tmpdir)`` beside ``target`` and swap it in; on failure nothing
    changes."""
    target = Path(target)
    with _refused_unless_writable(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    os.chmod(tmp, folder_mode(target))  # a `chmod 700` build folder stays 0700
    old = None
    try:
        fill(tmp)
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not target.exists():
            os.replace(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# --------------------------------------------------------------------------- folders the tool owns part of
class OutputRefused(Exception):
    """The output folder cannot be used as asked (a file, a symlink, `/`, ...); nothing was written."""


def checked_output_dir(target: str | Path, manifest: str | None) -> Path:
    """``target`` as an absolute path, or OutputRefused if writing a build there could destroy something.

    A build folder is replaced by an atomic rename, so it must be a plain folder of its own: not a file or
    a symlink (they would be replaced by a folder), not `/`, the home folder or a mount point (they cannot
    be renamed), and not a non-empty folder without ``manifest`` (it holds someone's files, not a build).
    ``manifest=None``: the caller only adds its own named files to an existing folder (cabling -o).
    """
    path = Path(target)
    shown = str(target)
    if path.is_symlink():
        raise OutputRefused(f"{shown} is a symbolic link; give the folder it points to, or another name")
    absolute = Path(os.path.abspath(path))
    real = path.resolve()
    if real == Path(real.anchor) or real == Path.home().resolve():
        raise OutputRefused(
            f"{shown} is {'the root folder' if real == Path(real.anchor) else 'your home folder'}; "
            "give a folder for the build, e.g. build/"
        )
    if not path.exists():
        return absolute
    if not path.is_dir():
        raise OutputRefused(f"{shown} exists and is not a folder; give a folder for the build")
    if os.path.ismount(path):
        raise OutputRefused(
            f"{shown} is a mount point; give a folder inside it, e.g. {shown.rstrip('/')}/build"
        )
    if manifest is not None and not (path / manifest).is_file() and any(path.iterdir()):
        raise OutputRefused(
            f"{shown} is not empty and was never written by cluster-blueprint (no {manifest}); "
            "give an empty or new folder"
        )
    return absolute


def checked_output_file(target: str | Path) -> Path:
    """``target`` for a single output file: a new name or an existing regular file (replaced atomically)."""
    # Path() drops a trailing slash: `-o reports/` wrote a file named `reports` where a folder was meant
    if str(target).endswith(("/", os.sep)):
        raise OutputRefused(f"{target} names a folder (it ends in /); give a file name")
    path = Path(target)
    if path.is_symlink():
        raise OutputRefused(f"{target} is a symbolic link; give the file it points to, or another name")
    if path.exists() and not path.is_file():
        raise OutputRefused(f"{target} exists and is not a regular file")
    # checked now, not when written: `diff --work-order DIR -o afile/report.txt` wrote the work order, then
    # refused the report ("nothing written")
    parent = next((p for p in path.absolute().parents if p.exists() or p.is_symlink()), None)
    if parent is not None and not parent.is_dir():
        raise OutputRefused(f"{target}: {parent} is not a folder")
    return path


@contextmanager
def output_lock(target: Path) -> Iterator[None]:
    """Hold an exclusive lock for writing ``target``: on a lock file beside it (``.NAME.lock``, which outlives
    the swap), so that runs writing other folders of the same parent (``builds/a``, ``builds/b``) go on side
    by side. The file is removed on release."""
    with _refused_unless_writable(target):
        target.parent.mkdir(parents=True, exist_ok=True)
    lock = target.parent / f".{target.name}.lock"
    fd = _locked(lock, target)
    try:
        _recover_stale(target)
        yield
    finally:
        # removed while still held: a run that opened it meanwhile finds it gone once it holds it (_locked)
        with suppress(OSError):
            lock.unlink()
        os.close(fd)  # releases the lock


def _locked(lock: Path, target: Path) -> int:
    """A descriptor holding ``lock`` exclusively, or OutputRefused when another run holds it."""
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666 & ~_umask())
        except OSError as exc:
            if (
                exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS)
                and target.is_dir()
                and not target.is_symlink()
            ):
                # a folder of the user's under a parent they cannot write (cabling -o and diff --work-order
                # write inside it): the folder itself is what runs lock
                fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                _exclusive(fd, target)
                return fd
            with _refused_unless_writable(target):
                raise
        _exclusive(fd, target)
        # the run before us may have removed the file between our open and our lock: a lock on a removed file
        # guards nothing, so take the one now at that name
        held = os.fstat(fd)
        try:
            now = os.stat(lock, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return fd
        os.close(fd)


def _exclusive(fd: int, target: Path) -> None:
    """Hold ``fd`` exclusively, or close it and refuse: another run holds it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OutputRefused(
            f"another cluster-blueprint run is writing {target}; rerun when it has finished"
        ) from None


def _recover_stale(target: Path) -> None:
    """Undo what a killed run left: its temporary folder, or the previous build moved aside mid-swap."""
    parent = target.parent
    olds = sorted(parent.glob(f".{target.name}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not target.exists() and not target.is_symlink():
        os.replace(olds.pop(), target)  # killed between the two renames: the previous build comes back
    for stale in [*parent.glob(f".{target.name}.tmp-*"), *olds]:
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


def user_entries(root: Path, owned: Iterable[str], skip: Iterable[str] = ()) -> list[str]:
    """Paths under ``root`` (relative, top-most) that the tool does not own: files, symlinks and folders
    that are neither listed in ``owned`` nor a folder holding an owned file."""
    owned = set(owned)
    skipped = set(skip)
    owned_dirs = {str(p) for rel in owned for p in Path(rel).parents if str(p) != "."}
    found: list[str] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(root / rel_dir) as it:
            for entry in it:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                if rel in owned or rel in skipped:
                    continue
                if rel in owned_dirs and entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                else:
                    found.append(rel)
    return sorted(found)


def refuse_other_file_systems(root: Path, rels: Iterable[str]) -> None:
    """OutputRefused if one of the user's entries ``rels`` of ``root``, or a folder inside one, is on another
    file system (a share mounted in the build folder): the folder is replaced by a rename, so its entries are
    carried by hard links, which cannot cross file systems. The copy made instead went to local disk, and
    the old folder's removal then emptied the share."""
    rels = list(rels)
    home = root.stat().st_dev if rels else 0
    for rel in rels:
        top = root / rel
        if top.is_symlink() or not top.is_dir():
            continue
        for folder, dirs, _ in os.walk(top):  # os.walk does not follow symbolic links
            if os.stat(folder).st_dev != home or os.path.ismount(folder):
                raise OutputRefused(
                    f"{folder} is another file system mounted in the build folder; generate replaces the "
                    "folder whole: unmount it or move it out, and rerun"
                )
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]


def carry_entries(src: Path, dst: Path, rels: Iterable[str]) -> None:
    """Put the user's entries ``rels`` of ``src`` into ``dst`` (hard links: no copy, originals untouched)."""
    for rel in rels:
        target, source = dst / rel, src / rel
        if _real_dir(target) and _real_dir(source):  # the build now has this folder too: merge inside it
            carry_entries(src, dst, [f"{rel}/{child.name}" for child in sorted(source.iterdir())])
            continue
        if target.exists() or target.is_symlink():
            raise OutputRefused(
                f"{rel} is yours (not in the manifest) but this build now writes it; move it and rerun"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        _link_tree(src / rel, target)


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _link_tree(src: Path, dst: Path) -> None:
    if src.is_symlink():
        os.symlink(os.readlink(src), dst)
    elif src.is_dir():
        dst.mkdir()
        for child in src.iterdir():
            _link_tree(child, dst / child.name)
        shutil.copystat(src, dst)
    else:
        try:
            os.link(src, dst)
        except OSError:  # a file system without hard links, or a file we may read but not link
            shutil.copy2(src, dst)


def file_mode(target: Path) -> int:
    """The permission bits a written ``target`` gets: those of the regular file it replaces (a report the
    user made `chmod 600` stays private after `--force`), else the umask default of an ordinary file."""
    try:
        st = target.stat(follow_symlinks=False)
    except OSError:
        return 0o666 & ~_umask()
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o666 & ~_umask()


def folder_mode(target: Path) -> int:
    """The permission bits a rebuilt ``target`` gets: the existing folder's, else the umask default."""
    try:
        return stat.S_IMODE(target.stat(follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return 0o777 & ~_umask()
