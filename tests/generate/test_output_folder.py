"""The output folder: the manifest lists what the generator owns, everything else is the user's and
survives every regenerate; unusable targets are refused with exit 2; runs are locked, killed runs leave
nothing behind, the folder keeps its mode. Same rules for cabling -o, diff --work-order, topology -o."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

SMALL = str(EXAMPLES / "maas-onprem-h100.yaml")  # every output, including pulumi/ with a stack file
BIG = str(EXAMPLES / "ndr-3tier-4096gpu.yaml")  # long enough to be killed mid-run


def gen(out: Path, *extra: str) -> tuple[int, str]:
    code, _, err = run_cli("generate", SMALL, "-o", str(out), "--quiet", *extra)
    return code, err


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


@pytest.fixture
def build(tmp_path: Path) -> Path:
    out = tmp_path / "build"
    code, err = gen(out, "--only", "ansible,pulumi,report")
    assert code == 0, err
    return out


# ---- refusals -----------------------------------------------------------------------------------------
def test_a_regular_file_is_refused_and_kept(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    code, err = gen(target)
    assert code == 2 and "not a folder" in err
    assert target.read_text() == "mine\n"


def test_a_symlink_is_refused_and_its_folder_untouched(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "keep").write_text("x")
    link = tmp_path / "link"
    link.symlink_to(real)
    code, err = gen(link)
    assert code == 2 and "symbolic link" in err
    assert link.is_symlink() and sorted(p.name for p in real.iterdir()) == ["keep"]


def test_root_home_and_mount_points_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert os.path.ismount("/proc"), "needs a mount point to test against"
    for target, why in (("/", "root folder"), (str(home), "home folder"), ("/proc", "mount point")):
        code, err = gen(Path(target))
        assert code == 2 and why in err, (target, err)
    assert list(home.iterdir()) == []


def test_a_non_empty_folder_that_was_never_a_build_is_refused(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "thesis.tex").write_text("mine")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("generate", SMALL, "-o", ".", "--quiet")
    assert code == 2 and "never written by cluster-blueprint" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis.tex"]


# ---- the user's files ---------------------------------------------------------------------------------
def test_regenerate_keeps_every_file_the_manifest_does_not_list(build: Path, tmp_path: Path) -> None:
    vault = build / "ansible" / "group_vars" / "vault.yml"
    vault.write_text("secret: 1\n")
    venv = build / "pulumi" / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("#!/bin/sh\n")
    (build / "empty").mkdir()
    own_role = tmp_path / "my-role"
    own_role.mkdir()
    (build / "ansible" / "roles" / "my_role").symlink_to(own_role)
    for extra in ((), ("--overwrite-edited",)):
        code, err = gen(build, "--only", "ansible,pulumi,report", *extra)
        assert code == 0, err
        assert vault.read_text() == "secret: 1\n"
        assert (venv / "python").read_text() == "#!/bin/sh\n"
        assert (build / "empty").is_dir()
        assert (build / "ansible" / "roles" / "my_role").resolve() == own_role
    manifest = json.loads((build / "manifest.json").read_text())["files"]
    assert not [f for f in manifest if "vault" in f or "venv" in f], "the user's files are not owned"
    assert leftovers(tmp_path) == []


def test_pulumi_config_set_keys_are_merged_not_replaced(build: Path) -> None:
    stack = build / "pulumi" / "Pulumi.prod.yaml"
    generated = stack.read_text()
    # what `pulumi config set --secret maas:apiKey ...` and `pulumi stack init` add to the file
    stack.write_text(generated + '  maas:apiKey:\n    secure: v1:abc\nencryptionsalt: "v1:salt"\n')
    code, err = gen(build, "--only", "ansible,pulumi,report")
    assert code == 0, err
    text = stack.read_text()
    assert "secure: v1:abc" in text and 'encryptionsalt: "v1:salt"' in text
    assert 'maas:apiVersion: "2.0"' in text, "the blueprint's keys stay, quoted as generated"
    code, err = gen(build, "--only", "ansible,pulumi,report")
    assert code == 0 and stack.read_text() == text, "a rerun is byte-identical"
    # a key the blueprint decides, changed by hand, is an edit: refused unless --overwrite-edited
    stack.write_text(text.replace('"2.0"', '"9.9"'))
    code, err = gen(build, "--only", "ansible,pulumi,report")
    assert code == 1 and "maas:apiVersion" in err
    code, err = gen(build, "--only", "ansible,pulumi,report", "--overwrite-edited")
    assert code == 0 and '"2.0"' in stack.read_text() and "secure: v1:abc" in stack.read_text()


def test_a_blueprint_change_reaches_a_stack_file_nobody_edited(tmp_path: Path) -> None:
    """A key the blueprint decides, changed in the blueprint (the README's way), was refused as a hand edit
    of the stack file: the file was compared with the new build, not with what the last build wrote. Now a
    value still as the last build wrote it takes the blueprint's, keys added with `pulumi config set` stay,
    and a value changed by hand is still refused."""
    blueprint = tmp_path / "bp.yaml"
    text = Path(SMALL).read_text()
    assert "  os: ubuntu-22.04\n" in text
    blueprint.write_text(text)
    out = tmp_path / "build"

    def again() -> tuple[int, str]:
        code, _, err = run_cli("generate", str(blueprint), "-o", str(out), "--quiet", "--only", "pulumi")
        return code, err

    assert again()[0] == 0
    stack = out / "pulumi" / "Pulumi.prod.yaml"
    assert '"jammy"' in stack.read_text()
    stack.write_text(stack.read_text() + "  maas:apiKey:\n    secure: v1:abc\n")
    blueprint.write_text(text.replace("  os: ubuntu-22.04\n", "  os: ubuntu-24.04\n"))
    code, err = again()
    assert code == 0, err
    assert '"noble"' in stack.read_text() and "secure: v1:abc" in stack.read_text()
    stack.write_text(stack.read_text().replace('"noble"', '"focal"'))  # by hand
    blueprint.write_text(text)
    code, err = again()
    assert code == 1 and "distroSeries set by hand" in err, err
    assert '"focal"' in stack.read_text()


@pytest.mark.parametrize(
    ("mine", "says"),
    [(b'config: "a string"\n', "config (not a mapping"), (b"config:\n  k: \xff\n", "not UTF-8")],
)
def test_a_stack_file_edited_out_of_shape_is_a_hand_edit(build: Path, mine: bytes, says: str) -> None:
    """`config:` holding a string, or a byte that is not UTF-8: internal errors (exit 3)."""
    stack = build / "pulumi" / "Pulumi.prod.yaml"
    stack.write_bytes(mine)
    code, err = gen(build, "--only", "ansible,pulumi,report")
    assert code == 1 and says in err, err
    assert stack.read_bytes() == mine


def test_an_edit_let_through_for_another_output_stays_an_edit(build: Path) -> None:
    """`--only ansible --overwrite-edited` kept the hand-edited slurm file and recorded its digest as the
    tool's: the next full generate replaced the edit silently."""
    assert gen(build)[0] == 0  # every output
    edited = build / "slurm" / "slurm.conf.fragment"
    edited.write_text(edited.read_text() + "# mine\n")
    code, err = gen(build, "--only", "ansible")
    assert code == 1 and "slurm/slurm.conf.fragment" in err
    code, err = gen(build, "--only", "ansible", "--overwrite-edited")
    assert code == 0, err
    assert edited.read_text().endswith("# mine\n")
    code, err = gen(build)
    assert code == 1 and "slurm/slurm.conf.fragment" in err, err
    assert edited.read_text().endswith("# mine\n")


def test_a_share_mounted_in_the_build_folder_is_refused_untouched(
    build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system mounted in the folder (NFS, a bind mount): its files were copied to local disk (hard
    links cannot cross file systems) and the old folder's removal emptied the share. Here the mount is the
    one os.path.ismount reports; the same refusal holds for a folder of another st_dev."""
    import os

    share = build / "data" / "deep"
    share.mkdir(parents=True)
    (share / "precious.txt").write_text("mine\n")
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: os.fspath(p) == os.fspath(share) or real(p))
    code, err = gen(build, "--only", "ansible,pulumi,report")
    assert code == 2 and "another file system mounted in the build folder" in err, err
    assert (share / "precious.txt").read_text() == "mine\n"


def test_only_never_mixes_two_clusters_in_one_folder(build: Path) -> None:
    """`generate other.yaml -o BUILD --only cabling` kept BUILD's slurm, ansible and report of another
    cluster beside the new cabling plan, and the manifest named only the new one."""
    before = (build / "manifest.json").read_bytes()
    code, _, err = run_cli(
        "generate", str(EXAMPLES / "hdr-fat-tree-a100.yaml"), "-o", str(build), "--only", "cabling"
    )
    assert code == 1 and "--only would mix" in err, err
    assert (build / "manifest.json").read_bytes() == before


def test_owned_file_replaced_by_a_symlink_is_an_edit(build: Path, tmp_path: Path) -> None:
    summary = build / "report" / "SUMMARY.md"
    mine = tmp_path / "mine.md"
    mine.write_text("mine")
    summary.unlink()
    summary.symlink_to(mine)
    code, err = gen(build, "--only", "ansible,pulumi,report")
    assert code == 1 and "report/SUMMARY.md" in err
    assert summary.is_symlink() and mine.read_text() == "mine"


def test_a_user_file_where_the_build_now_writes_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "build"
    assert gen(out, "--only", "report")[0] == 0
    mine = out / "ansible" / "inventory.yml"
    mine.parent.mkdir()
    mine.write_text("mine\n")
    code, err = gen(out, "--only", "ansible")
    assert code == 2 and "ansible/inventory.yml" in err
    assert mine.read_text() == "mine\n"
    assert leftovers(tmp_path) == []


def test_the_folder_keeps_its_mode(build: Path) -> None:
    build.chmod(0o700)
    assert gen(build, "--only", "report")[0] == 0
    assert stat.S_IMODE(build.stat().st_mode) == 0o700


# ---- concurrency and killed runs ---------------------------------------------------------------------
_HOLD = """
import sys
from pathlib import Path
from generator.fsutil import output_lock
with output_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_run_is_refused_while_one_holds_the_lock(tmp_path: Path) -> None:
    """A run writing ``build`` (another process holding its lock) refuses a second run into ``build``, and
    not one into a sibling folder of the same parent (the lock was once on the parent: builds/a locked out
    builds/b)."""
    out, sibling = tmp_path / "build", tmp_path / "build-b"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        code, err = gen(out)
        assert code == 2 and "another cluster-blueprint run" in err
        assert not out.exists()
        assert gen(sibling)[0] == 0
    finally:
        holder.communicate("", timeout=60)
    assert holder.returncode == 0
    assert gen(out)[0] == 0  # released
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "build-b"]  # no lock file left behind


def test_a_folder_under_a_parent_the_user_cannot_write_is_locked_in_place(tmp_path: Path) -> None:
    """`cabling -o out` writes inside `out` only: a folder of the user's under a parent they cannot write (an
    immutable parent here; root ignores mode bits) worked before the lock file beside the folder, and works
    again (the folder itself is locked). chattr is e2fsprogs', on every Debian."""
    parent = tmp_path / "parent"
    out = parent / "out"
    out.mkdir(parents=True)
    subprocess.run(["chattr", "+i", str(parent)], check=True)
    try:
        code, stdout, err = run_cli("cabling", SMALL, "-o", str(out), "--format", "csv")
        assert code == 0, stdout + err
        assert (out / "cables.csv").is_file() and sorted(p.name for p in parent.iterdir()) == ["out"]
    finally:
        subprocess.run(["chattr", "-i", str(parent)], check=True)


def test_kill_during_generate_then_a_clean_rerun(tmp_path: Path) -> None:
    out = tmp_path / "build"
    proc = subprocess.Popen(
        [sys.executable, "-m", "generator.cli", "generate", BIG, "-o", str(out), "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not leftovers(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None and leftovers(tmp_path), "generate was not caught mid-run"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert leftovers(tmp_path), "the killed run left its temporary folder"
    code, _, err = run_cli("generate", SMALL, "-o", str(out), "--quiet", "--only", "report")
    assert code == 0, err
    assert leftovers(tmp_path) == []
    assert (out / "manifest.json").is_file()


def test_a_run_killed_between_the_renames_gets_the_previous_build_back(build: Path, tmp_path: Path) -> None:
    (build / "ansible" / "group_vars" / "vault.yml").write_text("secret\n")
    os.replace(build, tmp_path / ".build.old-4242")  # the previous build moved aside, the new one not in
    (tmp_path / ".build.tmp-dead").mkdir()
    code, err = gen(build, "--only", "report")
    assert code == 0, err
    assert (build / "ansible" / "group_vars" / "vault.yml").read_text() == "secret\n"
    assert (build / "ansible" / "inventory.yml").is_file(), "outputs not asked for are kept"
    assert leftovers(tmp_path) == []


# ---- the other commands that write a folder or a file -----------------------------------------------
def test_cabling_and_work_order_refuse_symlinks_and_keep_other_files(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    example = str(EXAMPLES / "hdr-fat-tree-a100.yaml")
    assert run_cli("cabling", example, "-o", str(link))[0] == 2
    assert run_cli("diff", example, example, "--work-order", str(link))[0] == 2
    assert list(real.iterdir()) == []
    wo = tmp_path / "wo"
    wo.mkdir()
    (wo / "notes.txt").write_text("mine")
    code, _, err = run_cli("diff", example, example, "--fabric", "compute", "--work-order", str(wo))
    assert code == 0, err
    assert (wo / "notes.txt").read_text() == "mine" and (wo / "work-order.csv").is_file()


def test_topology_output_refuses_a_symlink_or_a_folder(tmp_path: Path) -> None:
    example = str(EXAMPLES / "hdr-fat-tree-a100.yaml")
    target = tmp_path / "t.graphml"
    target.write_text("mine")
    link = tmp_path / "link.graphml"
    link.symlink_to(target)
    assert run_cli("topology", example, "--format", "graphml", "-o", str(link))[0] == 2
    assert run_cli("topology", example, "--format", "graphml", "-o", str(tmp_path))[0] == 2
    assert link.is_symlink() and target.read_text() == "mine"
