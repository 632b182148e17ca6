"""Helpers and fixtures for the Ansible tests (imported by the test modules; not a conftest, so it
cannot shadow tests/conftest.py): generated builds, and the Debian test root reached through chroot.

The test root is a `debootstrap --variant=minbase bookworm` tree (python3, python3-apt) cached as a
tarball, built by build_test_root.sh (which .ci/run calls before the suite). Every test session
unpacks a fresh copy, so the first playbook run really installs packages and writes files. The
.deb files apt downloads during a session are kept next to the tarball and offered to the next
session's apt (still a real `apt install`, without the download). Nothing is mounted in the root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_tools import missing_executables, needs

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
DATA = HERE / "data"
BUILD_SCRIPT = HERE / "build_test_root.sh"
# `ibstat mlx5_0 1` of an NDR port that is up (infiniband-diags' output), for the acceptance role's checks
IBSTAT = """\
CA 'mlx5_0'
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 12
\t\tLink layer: InfiniBand
"""


def cache_dir() -> Path:
    if os.environ.get("CB_TEST_CACHE"):
        return Path(os.environ["CB_TEST_CACHE"])
    if os.geteuid() == 0:
        return Path("/var/cache/cluster-blueprint")
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cluster-blueprint"


def tarball_path() -> Path:
    return Path(os.environ.get("CB_TEST_ROOT_TARBALL", cache_dir() / "debootstrap-bookworm-minbase.tar.gz"))


def ansible_bin(name: str) -> str:
    import sys

    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else name


@pytest.fixture(scope="session", name="root_tarball")
def root_tarball_fixture() -> Path:
    path = tarball_path()
    if path.is_file() and path.stat().st_size > 0:
        return path
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        needs([f"the chroot test root {path}"], "cannot build one: needs root and debootstrap")
    proc = subprocess.run(
        ["bash", str(BUILD_SCRIPT), str(path)], capture_output=True, text=True, timeout=1200
    )
    if proc.returncode != 0:
        needs([f"the chroot test root {path}"], f"build failed: {proc.stderr.strip()[-400:]}")
    return path


@pytest.fixture(scope="session", name="chroot_root")
def chroot_root_fixture(root_tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh Debian root for this session; apt's downloads are cached for the next one."""
    needs(missing_executables([ansible_bin("ansible-playbook")]), "the test extra installs ansible-core")
    root = tmp_path_factory.mktemp("testhost") / "root"
    root.mkdir()
    with tarfile.open(root_tarball) as tar:
        tar.extractall(root, filter="fully_trusted")
    etc = root / "etc"
    # Name resolution for apt inside the root; no service may start inside a chroot.
    shutil.copyfile("/etc/resolv.conf", etc / "resolv.conf")
    policy = root / "usr" / "sbin" / "policy-rc.d"
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    debs = cache_dir() / "apt-archives"
    archives = root / "var" / "cache" / "apt" / "archives"
    if debs.is_dir():
        for deb in debs.glob("*.deb"):
            shutil.copy2(deb, archives / deb.name)
    yield root
    try:
        debs.mkdir(parents=True, exist_ok=True)
        for deb in archives.glob("*.deb"):
            if not (debs / deb.name).exists():
                shutil.copy2(deb, debs / deb.name)
    except OSError:
        pass


def build(blueprint: Path, out: Path) -> Path:
    """Generate the ansible/ and nccl/ outputs of ``blueprint`` into ``out`` (like `blueprint generate`)."""
    from generator.emit import ansible as ansible_emit
    from generator.emit import nccl as nccl_emit
    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan

    _, cluster = load_and_resolve(blueprint)
    plan = build_plan(cluster)
    (out / "ansible").mkdir(parents=True)
    (out / "nccl").mkdir(parents=True)
    ansible_emit.emit(cluster, plan, out / "ansible")
    nccl_emit.emit(cluster, plan, out / "nccl")
    return out


def run_local_play(
    play: Path, extra_vars: dict[str, object], *flags: str, env: dict[str, str] | None = None
) -> tuple[int, dict]:  # type: ignore[type-arg]
    """Real ansible-playbook of ``play`` on localhost (local connection) with ``extra_vars`` as JSON and
    the json stdout callback: its exit code and its parsed result."""
    needs(missing_executables([ansible_bin("ansible-playbook")]), "the test extra installs ansible-core")
    proc = subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            str(play),
            "-e",
            json.dumps(extra_vars),
            *flags,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "ANSIBLE_STDOUT_CALLBACK": "json",
            "PATH": "/usr/bin:/bin",
            "ANSIBLE_NOCOLOR": "1",
            **(env or {}),
        },
    )
    try:
        return proc.returncode, json.loads(proc.stdout)
    except ValueError:
        pytest.fail(
            f"ansible-playbook printed no JSON (exit {proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )


def with_partition(source: Path, partition: dict[str, object], out: Path) -> Path:
    """``source`` with one partition on its compute fabric's subnet manager, written to ``out``."""
    import yaml

    doc = yaml.safe_load(source.read_text())
    doc["fabrics"]["compute"]["subnet_manager"]["partitions"] = [partition]
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


ROLES_DIR = Path(__file__).resolve().parents[2] / "playbooks" / "roles"


def run_play_json(tmp: Path, play: list[dict], extra: dict) -> subprocess.CompletedProcess[str]:  # type: ignore[type-arg]
    """Real ansible-playbook of ``play`` (written as JSON: YAML is its superset) on localhost, with ``extra``
    as -e JSON, the project's roles, the json stdout callback, and ``tmp/bin`` first on PATH (where a test
    puts its command stubs); run in ``tmp``, its home and Ansible's there too."""
    needs(missing_executables([ansible_bin("ansible-playbook")]), "the test extra installs ansible-core")
    path = tmp / "play.json"
    path.write_text(json.dumps(play))
    return subprocess.run(
        [
            ansible_bin("ansible-playbook"),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            json.dumps(extra),
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        env={
            "PATH": f"{tmp / 'bin'}:/usr/bin:/bin",
            "ANSIBLE_ROLES_PATH": str(ROLES_DIR),
            "ANSIBLE_HOME": str(tmp / "ansible-home"),
            "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "HOME": str(tmp),
        },
    )
