"""The nvidia_imex role run for real on the Debian test root (community.general.chroot), via `blueprint
configure`, with a GB200 NVL72 build of two NVLink domains (36 trays).

The IMEX package needs NVIDIA's repository, so it is left out (nvidia_imex_install_package=false); the
node list, the configuration key and the service logic run for real. The root has no systemd: a stand-in
`systemctl` (recording each call, keeping the unit's enabled/active state in files) answers the
systemd_service module, so enabling, starting and the restart on a changed node list are observed.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from ansible_helpers import build, chroot_root_fixture, root_tarball_fixture  # noqa: F401  (fixtures)
from conftest import run_cli
from test_imex_vars import gb200_blueprint

pytestmark = pytest.mark.ansible_host

UNIT = "nvidia-imex.service"
FAKE_SYSTEMCTL = """#!/bin/sh
# test stand-in for systemctl (tests/ansible_playbooks/test_imex_role_run.py)
state=/var/lib/cb-test-systemd
mkdir -p "$state"
echo "$*" >> "$state/calls"
case "$1" in
  show)
    echo "Id=$2"; echo "LoadState=loaded"
    if [ -e "$state/$2.active" ]; then echo "ActiveState=active"; else echo "ActiveState=inactive"; fi ;;
  is-enabled)
    if [ -e "$state/$2.enabled" ]; then echo enabled; else echo disabled; exit 1; fi ;;
  enable) touch "$state/$2.enabled" ;;
  start|restart) touch "$state/$2.active" ;;
  daemon-reload) ;;
  *) exit 1 ;;
esac
"""
# /proc/devices of a loaded driver with IMEX channels (IMEX guide, "IMEX Channels": `cat /proc/devices | grep
# nvidia-caps-imex-channels` gives `234 nvidia-caps-imex-channels`); nothing is mounted in the test root
PROC_DEVICES = "var/lib/cb-test-proc-devices"
ARGS = (
    "--tags",
    "nvidia_imex",
    "-e",
    "cb_hardware_present=false",
    "-e",
    "nvidia_imex_install_package=false",
    "-e",
    "nvidia_imex_manage_service=true",
)


@pytest.fixture(scope="module")
def gb200_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("imexrun")
    return build(gb200_blueprint(tmp, 36), tmp / "build")


@pytest.fixture(scope="module")
def imex_root(chroot_root: Path) -> Iterator[Path]:
    """The test root with the stand-in systemctl and the package's configuration file (pointing elsewhere);
    all taken out again, the root is shared with the other chroot tests of the session."""
    systemctl = chroot_root / "usr/bin/systemctl"
    systemctl.write_text(FAKE_SYSTEMCTL)
    systemctl.chmod(0o755)
    conf = chroot_root / "etc/nvidia-imex/config.cfg"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("DAEMONIZE=1\nIMEX_NODE_CONFIG_FILE=/shared/somewhere/nodes.cfg\nSERVER_PORT=50000\n")
    try:
        yield chroot_root
    finally:
        systemctl.unlink()
        shutil.rmtree(chroot_root / "var/lib/cb-test-systemd", ignore_errors=True)
        shutil.rmtree(chroot_root / "etc/nvidia-imex", ignore_errors=True)
        shutil.rmtree(chroot_root / "dev/nvidia-caps-imex-channels", ignore_errors=True)
        (chroot_root / "etc/modprobe.d/cluster-blueprint-imex.conf").unlink(missing_ok=True)
        (chroot_root / PROC_DEVICES).unlink(missing_ok=True)


def _generated_inventory(build_dir: Path) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((build_dir / "ansible" / "inventory.yml").read_text())


def _inventory(build_dir: Path, path: Path, host: str, root: Path, drop_address: str | None = None) -> Path:
    """The generated inventory (management addresses as planned), ``host`` reached in the test root."""
    inv = _generated_inventory(build_dir)
    inv["all"]["vars"] = {
        "ansible_connection": "community.general.chroot",
        "ansible_become": False,
        "ansible_python_interpreter": "/usr/bin/python3",
    }
    hosts = inv["all"]["children"]["pool_gpu"]["hosts"]
    for name, hv in hosts.items():
        hv["ansible_host"] = str(root) if name == host else "/nonexistent"
    if drop_address:
        del hosts[drop_address]["cb_mgmt_address"]
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def _addresses(build_dir: Path, first: int, last: int) -> list[str]:
    hosts = _generated_inventory(build_dir)["all"]["children"]["pool_gpu"]["hosts"]
    return [hosts[f"gpu{i:03d}"]["cb_mgmt_address"] for i in range(first, last + 1)]


def _configure(build_dir: Path, inventory: Path, host: str, *extra: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code, out, err = run_cli(
        "configure", str(build_dir), "-i", str(inventory), "--limit", host, "--format", "json", *ARGS, *extra
    )
    try:
        return code, json.loads(out), err
    except ValueError:
        pytest.fail(f"configure printed no JSON (exit {code}): {out}\n{err}")


def _calls(root: Path) -> list[str]:
    calls = root / "var/lib/cb-test-systemd/calls"
    return calls.read_text().splitlines() if calls.exists() else []


def test_node_list_config_and_service(gb200_build: Path, imex_root: Path, tmp_path: Path) -> None:
    r = imex_root
    inv = _inventory(gb200_build, tmp_path / "a.yml", "gpu001", r)
    code, result, err = _configure(gb200_build, inv, "gpu001")
    assert code == 0 and result["hosts"]["gpu001"]["failed"] == 0, json.dumps(result, indent=1) + err
    # IMEX guide, "IMEX Service Config Options": IMEX_NODE_CONFIG_FILE names the file of the IP addresses of the
    # nodes in this IMEX domain: the 18 trays of gpu001's domain, one a line, in the domain's order
    nodes = (r / "etc/nvidia-imex/nodes_config.cfg").read_text()
    assert nodes.splitlines() == _addresses(gb200_build, 1, 18)
    assert oct((r / "etc/nvidia-imex/nodes_config.cfg").stat().st_mode & 0o777) == "0o644"
    conf = (r / "etc/nvidia-imex/config.cfg").read_text().splitlines()
    assert conf == [
        "DAEMONIZE=1",
        "IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg",
        "SERVER_PORT=50000",
    ]
    calls = _calls(r)
    assert f"enable {UNIT}" in calls and f"start {UNIT}" in calls, calls

    # unchanged: nothing written, nothing restarted
    before = len(calls)
    code, result, err = _configure(gb200_build, inv, "gpu001")
    assert code == 0 and result["hosts"]["gpu001"]["changed"] == 0, json.dumps(result, indent=1) + err
    assert not [c for c in _calls(r)[before:] if c.split()[0] in ("enable", "start", "restart")]

    # the same root as a tray of the second domain: its own node list, and IMEX restarted to read it
    inv2 = _inventory(gb200_build, tmp_path / "b.yml", "gpu019", r)
    before = len(_calls(r))
    code, result, err = _configure(gb200_build, inv2, "gpu019")
    assert code == 0 and result["hosts"]["gpu019"]["changed"] >= 1, json.dumps(result, indent=1) + err
    second = (r / "etc/nvidia-imex/nodes_config.cfg").read_text().splitlines()
    assert second == _addresses(gb200_build, 19, 36)
    assert not set(second) & set(nodes.splitlines())
    assert f"restart {UNIT}" in _calls(r)[before:]


def test_a_node_without_an_address_is_named(gb200_build: Path, imex_root: Path, tmp_path: Path) -> None:
    inv = _inventory(gb200_build, tmp_path / "c.yml", "gpu001", imex_root, drop_address="gpu007")
    code, result, _ = _configure(gb200_build, inv, "gpu001")
    host = result["hosts"]["gpu001"]
    assert code == 1 and host["status"] == "failed"
    message = " ".join(f["message"] for f in host["failures"])
    assert "gpu007" in message and "cb_mgmt_address" in message and "--from-stack" in message, message


def test_channel0_for_all_jobs(gb200_build: Path, imex_root: Path, tmp_path: Path) -> None:
    """IMEX guide, "IMEX Channels": the driver creates channel0 at load with NVreg_CreateImexChannel0=1 (the
    single-user setting); a driver loaded before the option gets channel0 the guide's way (mknod, major of
    nvidia-caps-imex-channels from /proc/devices, minor 0); a second run changes nothing."""
    import stat

    r = imex_root
    inv = _inventory(gb200_build, tmp_path / "d.yml", "gpu001", r)
    proc = ("-e", f"nvidia_imex_proc_devices=/{PROC_DEVICES}")
    (r / PROC_DEVICES).write_text("Character devices:\n  1 mem\n195 nvidia\n234 nvidia-caps-imex-channels\n")
    code, result, err = _configure(gb200_build, inv, "gpu001", *proc)
    assert code == 0 and result["hosts"]["gpu001"]["failed"] == 0, json.dumps(result, indent=1) + err
    conf = r / "etc/modprobe.d/cluster-blueprint-imex.conf"
    options = [line for line in conf.read_text().splitlines() if not line.startswith("#")]
    assert options == ["options nvidia NVreg_CreateImexChannel0=1"]
    assert oct(conf.stat().st_mode & 0o777) == "0o644"
    channel = (r / "dev/nvidia-caps-imex-channels/channel0").stat()
    assert stat.S_ISCHR(channel.st_mode) and oct(channel.st_mode & 0o777) == "0o666"
    assert (os.major(channel.st_rdev), os.minor(channel.st_rdev)) == (234, 0)

    code, result, err = _configure(gb200_build, inv, "gpu001", *proc)
    assert code == 0 and result["hosts"]["gpu001"]["changed"] == 0, json.dumps(result, indent=1) + err
    assert (os.major((r / "dev/nvidia-caps-imex-channels/channel0").stat().st_rdev)) == 234

    # not a device where channel0 belongs: named, and left alone
    shutil.rmtree(r / "dev/nvidia-caps-imex-channels")
    (r / "dev/nvidia-caps-imex-channels").mkdir()
    (r / "dev/nvidia-caps-imex-channels/channel0").write_text("")
    code, result, _ = _configure(gb200_build, inv, "gpu001", *proc)
    message = " ".join(f["message"] for f in result["hosts"]["gpu001"]["failures"])
    assert code == 1 and "channel0" in message and "not a character device" in message, message
    assert (r / "dev/nvidia-caps-imex-channels/channel0").read_text() == ""
    shutil.rmtree(r / "dev/nvidia-caps-imex-channels")


def test_no_channel_without_the_driver_class(gb200_build: Path, imex_root: Path, tmp_path: Path) -> None:
    """A host whose driver registered no nvidia-caps-imex-channels class (here: no GPUs, as in image
    staging) gets the module option for its next boot and no hand-made node."""
    r = imex_root
    inv = _inventory(gb200_build, tmp_path / "e.yml", "gpu001", r)
    (r / PROC_DEVICES).write_text("Character devices:\n  1 mem\n")
    code, result, err = _configure(
        gb200_build, inv, "gpu001", "-e", f"nvidia_imex_proc_devices=/{PROC_DEVICES}"
    )
    assert code == 0 and result["hosts"]["gpu001"]["failed"] == 0, json.dumps(result, indent=1) + err
    assert "NVreg_CreateImexChannel0=1" in (r / "etc/modprobe.d/cluster-blueprint-imex.conf").read_text()
    assert not (r / "dev/nvidia-caps-imex-channels").exists()


@pytest.fixture(scope="module")
def slurm_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same domains on Slurm 24.11.1, whose switch/nvidia_imex plugin gives each job its own channel."""
    tmp = tmp_path_factory.mktemp("imexslurm")
    path = gb200_blueprint(tmp, 36)
    doc = yaml.safe_load(path.read_text())
    doc["software"]["slurm"] = "24.11.1"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return build(path, tmp / "build")


def test_slurm_channels_take_away_channel0_for_all(
    gb200_build: Path, slurm_build: Path, imex_root: Path, tmp_path: Path
) -> None:
    """A host set up for shared channel 0, then built for Slurm's per-job channels: the role's
    NVreg_CreateImexChannel0 file is removed (no channel 0 for every job at the next driver load), and a
    file of that name the role did not write is named and left alone."""
    r = imex_root
    proc = ("-e", f"nvidia_imex_proc_devices=/{PROC_DEVICES}")
    (r / PROC_DEVICES).write_text("Character devices:\n  1 mem\n")
    conf = r / "etc/modprobe.d/cluster-blueprint-imex.conf"
    code, result, err = _configure(
        gb200_build, _inventory(gb200_build, tmp_path / "f.yml", "gpu001", r), "gpu001", *proc
    )
    assert code == 0 and "NVreg_CreateImexChannel0=1" in conf.read_text(), json.dumps(result, indent=1) + err

    inv = _inventory(slurm_build, tmp_path / "g.yml", "gpu001", r)
    code, result, err = _configure(slurm_build, inv, "gpu001", *proc)
    assert code == 0 and result["hosts"]["gpu001"]["failed"] == 0, json.dumps(result, indent=1) + err
    assert not conf.exists()
    assert not (r / "dev/nvidia-caps-imex-channels").exists()
    code, result, err = _configure(slurm_build, inv, "gpu001", *proc)
    assert code == 0 and result["hosts"]["gpu001"]["changed"] == 0, json.dumps(result, indent=1) + err

    conf.write_text("options nvidia NVreg_CreateImexChannel0=1\n")
    code, result, _ = _configure(slurm_build, inv, "gpu001", *proc)
    message = " ".join(f["message"] for f in result["hosts"]["gpu001"]["failures"])
    assert code == 1 and "not written by this role" in message, message
    assert conf.read_text() == "options nvidia NVreg_CreateImexChannel0=1\n"
    conf.unlink()
