"""An output path the file system refuses (a file where a folder must be, a folder where a file must be, a name
too long, a dangling link) is the user's to fix: one line naming it and exit 2, never an internal error (exit
3), and nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

SMALL = str(EXAMPLES / "hdr-fat-tree-a100.yaml")


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A regular file standing where a command would need a folder."""
    path = tmp_path / "file"
    path.write_text("mine\n")
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ("schema", "-o", "{b}/child.json"),
        ("plan", SMALL, "-o", "{b}/plan.txt"),
        ("estimate", SMALL, "--sizes", "1G", "-o", "{b}/estimate.txt"),
        ("estimate", SMALL, "--sizes", "1G", "--plot", "{b}/busbw.svg"),
        ("generate", SMALL, "-o", "{b}/build"),
        ("advise", "--params", "7e9", "--write", "{b}/starter.yaml"),
        ("init", "--params", "7e9", "-o", "{b}/blueprint.yaml"),
    ],
    ids=lambda argv: argv[0] if argv[0] != "estimate" else f"estimate{argv[-2]}",
)
def test_a_file_where_a_folder_must_be_is_refused(blocker: Path, argv: tuple[str, ...]) -> None:
    code, out, err = run_cli(*(a.replace("{b}", str(blocker)) for a in argv))
    assert code == 2, out + err
    assert f"{blocker} is not a folder" in err and "Traceback" not in out + err
    assert blocker.read_text() == "mine\n"


def test_a_folder_where_the_plot_file_must_be_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "busbw.svg"
    (folder / "keep").mkdir(parents=True)
    code, out, err = run_cli("estimate", SMALL, "--sizes", "1G", "--plot", str(folder))
    assert code == 2 and "Traceback" not in out + err
    assert str(folder) in err
    assert (folder / "keep").is_dir() and not list(tmp_path.glob(".busbw.svg.*"))


def test_a_name_too_long_and_a_dangling_link_are_refused(tmp_path: Path) -> None:
    code, out, err = run_cli("plan", SMALL, "-o", str(tmp_path / ("a" * 300)))
    assert code == 2 and "File name too long" in err and "Traceback" not in out + err
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    code, out, err = run_cli("examples", "--all", "-o", str(link))
    assert code == 2 and str(link) in err and "Traceback" not in out + err
    assert not (tmp_path / "nowhere").exists()


def test_a_plot_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    """As every -o: a link would send the plot wherever it points (it was followed)."""
    target = tmp_path / "elsewhere.svg"
    link = tmp_path / "busbw.svg"
    link.symlink_to(target)
    code, out, err = run_cli("estimate", SMALL, "--sizes", "1G", "--plot", str(link))
    assert code == 2 and "is a symbolic link" in err and out == ""  # refused before any report
    assert not target.exists()


def test_explain_list_writes_its_table_to_the_file_given(tmp_path: Path) -> None:
    target = tmp_path / "rules.txt"
    code, out, err = run_cli("explain", "--list", "-o", str(target))
    assert code == 0, err
    assert out == "" and "TOP010" in target.read_text()  # it printed to the terminal and ignored -o


def test_a_refused_path_of_the_tools_own_files_stays_an_internal_error() -> None:
    """Only the user's paths are theirs to fix: a missing template of the installed package is a fault of the
    tool (exit 3, "please report"), and BLUEPRINT_DEBUG still gives its traceback."""
    import errno
    import os

    import generator
    from generator.cli import _users_path_refused

    own = os.path.join(os.path.dirname(generator.__file__), "templates", "missing.j2")
    assert not _users_path_refused(FileNotFoundError(errno.ENOENT, "No such file or directory", own))
    assert _users_path_refused(FileNotFoundError(errno.ENOENT, "No such file or directory", "/srv/mine.yaml"))
    assert not _users_path_refused(ValueError("not a path"))
    renamed = OSError(errno.EISDIR, "Is a directory", str(Path(own).parent / ".x.tmp"), "/srv/out")
    assert not _users_path_refused(renamed)  # one side is the tool's own: not the user's to fix


def test_a_write_past_the_file_size_limit_is_said_not_reported_as_a_bug(tmp_path: Path) -> None:
    """A full disk, a quota or `ulimit -f` (EFBIG here, the same path as ENOSPC): the write's OSError names no
    file, and it ended in "internal error ... please report" (exit 3). Nothing half-written is left."""
    import resource
    import subprocess
    import sys

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    out = tmp_path / "build"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator.cli",
            "generate",
            str(EXAMPLES / "roce-rail-2tier.yaml"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=small_files,
        check=False,
    )
    assert run.returncode == 2, run.stderr[-2000:]
    assert "internal error" not in run.stderr and "File too large" in run.stderr
    assert not out.exists() and not list(tmp_path.glob(".build*"))
