"""Real ansible-playbook runs of the nccl and roce_qos roles against fake sysfs layouts of real platforms.

The chroot test host gets plain directories under /sys/class/{infiniband,net} laid out like a DGX H100
(NVIDIA DGX H100/H200 User Guide, Table 6, kept as test data) or an OCI BM.GPU.H100.8 (the device list
of the OCI HPC stack's nccl.conf); the roles must write the vendor's names and fail, naming the device,
on a host whose names differ from the port map.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ansible_helpers import DATA, EXAMPLES, build, chroot_root_fixture, root_tarball_fixture, with_partition  # noqa: F401
from conftest import run_cli
from vendor_tables import (
    TABLES,
    dgx_h100_compute_ports,
    dgx_h100_storage_ports,
    env_file,
    gcp_a3_mega_stage_scripts,
    gcp_a3_mega_tcpxo_install,
    gcp_a3_ultra_gib_install,
)

pytestmark = pytest.mark.ansible_host

# Real role runs, but no packages from NVIDIA's repositories and no hardware services; the platform
# checks (device/interface/file presence) run against the fake sysfs.
ARGS = (
    "-e", "cb_hardware_present=false", "-e", "nccl_install_packages=false",
    "-e", "nccl_check_platform=true", "-e", "roce_qos_check_devices=true",
)  # fmt: skip


def _inventory(path: Path, host: str, root: Path, pool: str) -> Path:
    path.write_text(
        "all:\n  vars:\n    ansible_connection: community.general.chroot\n    ansible_become: false\n"
        "    ansible_python_interpreter: /usr/bin/python3\n  children:\n"
        f"    {pool}:\n      hosts:\n        {host}:\n          ansible_host: {root}\n"
        f"    role_gpu:\n      children:\n        {pool}: {{}}\n    rdma:\n      children:\n        {pool}: {{}}\n"
    )
    return path


def _cloud_build(example: str, out: Path, chroot_root: Path) -> tuple[Path, Path]:
    """The example's build and an inventory putting its one GPU pool's host gpu001 on the chroot."""
    built = build(EXAMPLES / example, out)
    pool = next(p.stem for p in (built / "ansible" / "group_vars").iterdir() if p.name.startswith("pool_"))
    return built, _inventory(out.parent / "hosts.yml", "gpu001", chroot_root, pool)


def _configure(build_dir: Path, inventory: Path, tags: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run_cli(
        "configure", str(build_dir), "-i", str(inventory), "--tags", tags, "--format", "json", *ARGS, *extra
    )
    try:
        return code, json.loads(out), err
    except ValueError:
        pytest.fail(f"configure printed no JSON (exit {code}): {out}\n{err}")


@pytest.fixture
def sysfs(chroot_root: Path) -> Iterator[Path]:
    """An empty fake /sys/class inside the test root, removed afterwards (with the files the roles wrote)."""
    cls = chroot_root / "sys" / "class"
    for sub in ("infiniband", "net"):
        (cls / sub).mkdir(parents=True, exist_ok=True)
    yield cls
    shutil.rmtree(chroot_root / "sys" / "class", ignore_errors=True)
    for f in (
        "etc/nccl.conf",
        "etc/nccl/nccl.env",
        "usr/local/sbin/cluster-blueprint-roce-qos",
        "opt/microsoft",
        "usr/local/gib",
        "etc/profile.d/nccl-gib.sh",
        "var/lib/tcpxo",
        "usr/local/bin/docker",
        "usr/local/lib/google-cloud-sdk",
        "var/log/cb-fake-argv",
        "opt/apps",
        "var/tmp/cb-rxdm",
    ):
        p = chroot_root / f
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)


def _devices(cls: Path, rdma: list[str], nets: list[str] = ()) -> None:  # type: ignore[assignment]
    for d in rdma:
        (cls / "infiniband" / d / "ports" / "1").mkdir(parents=True, exist_ok=True)
    for n in nets:
        (cls / "net" / n).mkdir(parents=True, exist_ok=True)


def _env(text: str) -> dict[str, str]:
    return dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#"))


def test_dgx_h100_nccl_uses_table_6_names(chroot_root: Path, sysfs: Path, tmp_path: Path) -> None:
    table = dgx_h100_compute_ports()
    cards = dgx_h100_storage_ports()
    # a DGX H100 has 12 mlx5 devices: the 8 compute ones of Table 6 plus the storage / in-band cards of
    # Table 5, each interface under its default ("Default" column) name
    _devices(sysfs, [r.rdma for r in table + cards], [r.netdev for r in table] + [r.default for r in cards])
    out = build(DATA / "dgx-h100-ib.yaml", tmp_path / "dgx")
    inv = _inventory(tmp_path / "hosts.yml", "dgx001", chroot_root, "pool_dgx")
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    conf = _env((chroot_root / "etc/nccl.conf").read_text())
    assert conf["NCCL_IB_HCA"] == "=" + ",".join(f"{r.rdma}:1" for r in table)
    env = _env((chroot_root / "etc/nccl/nccl.env").read_text())
    assert env["NCCL_IB_HCA"] == conf["NCCL_IB_HCA"]
    # the two in-band ports (slot 1 and 2 port 2) are a bond on a BasePOD: no bootstrap interface is named
    assert "NCCL_SOCKET_IFNAME" not in conf


def test_a_tenant_pool_runs_nccl_on_its_partition_p_key(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    """A pool a partition names is a limited member of Default, so NCCL at P_Key index 0 (its default)
    cannot reach the pool's other hosts: the settings name the partition's index (1: Default, then it) on a
    freshly programmed port, and the role writes the index this host's tables hold the partition's P_Key,
    full member, at (after a partition is added to a running fabric it can be another)."""
    table = dgx_h100_compute_ports()
    cards = dgx_h100_storage_ports()
    _devices(sysfs, [r.rdma for r in table + cards], [r.netdev for r in table] + [r.default for r in cards])
    for r in table:
        pkeys = sysfs / "infiniband" / r.rdma / "ports" / "1" / "pkeys"
        pkeys.mkdir(parents=True, exist_ok=True)
        (pkeys / "0").write_text("0x7fff\n")  # Default, limited
        (pkeys / "1").write_text("0x8010\n")  # the tenant's partition, full
    train = {"name": "train", "pkey": 0x10, "pools": ["dgx"], "membership": "full"}
    bp = with_partition(DATA / "dgx-h100-ib.yaml", train, tmp_path / "tenant.yaml")
    out = build(bp, tmp_path / "dgx")
    inv = _inventory(tmp_path / "hosts.yml", "dgx001", chroot_root, "pool_dgx")
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    assert _env((chroot_root / "etc/nccl.conf").read_text())["NCCL_IB_PKEY"] == "1"
    assert _env((out / "nccl" / "dgx" / "nccl.env").read_text())["NCCL_IB_PKEY"] == "1"
    # a partition added to the running fabric: OpenSM kept the ports' entries and appended the new one,
    # so this host holds the pool's partition at index 2, not where a fresh port would (the build's 1)
    for r in table:
        pkeys = sysfs / "infiniband" / r.rdma / "ports" / "1" / "pkeys"
        (pkeys / "1").write_text("0x0105\n")
        (pkeys / "2").write_text("0x8010\n")
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    assert _env((chroot_root / "etc/nccl.conf").read_text())["NCCL_IB_PKEY"] == "2"
    assert _env((chroot_root / "etc/nccl/nccl.env").read_text())["NCCL_IB_PKEY"] == "2"
    # one port reset (it got the fresh order) while the others kept theirs: no one index serves them all
    first = sysfs / "infiniband" / table[0].rdma / "ports" / "1" / "pkeys"
    (first / "1").write_text("0x8010\n")
    (first / "2").write_text("0x0105\n")
    code, result, err = _configure(out, inv, "nccl")
    text = json.dumps(result) + err
    assert code != 0 and f"{table[0].rdma}/1 at 1" in text and f"{table[1].rdma}/1 at 2" in text, text[-3000:]
    # the subnet manager has not (yet) given this host's last rail the partition
    (first / "1").write_text("0x0105\n")
    (first / "2").write_text("0x8010\n")
    (sysfs / "infiniband" / table[-1].rdma / "ports" / "1" / "pkeys" / "2").write_text("0x0000\n")
    code, result, err = _configure(out, inv, "nccl")
    text = json.dumps(result) + err
    assert code != 0 and f"P_Key table of {table[-1].rdma}/1 holds no 0x8010" in text, text[-3000:]


def test_a_host_whose_names_differ_fails_naming_the_device(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    table = dgx_h100_compute_ports()
    # this host enumerated its HCAs differently: the device the map puts on rail 7 is absent
    _devices(sysfs, [r.rdma for r in table[:-1]] + ["mlx5_1"])
    out = build(DATA / "dgx-h100-ib.yaml", tmp_path / "dgx")
    inv = _inventory(tmp_path / "hosts.yml", "dgx001", chroot_root, "pool_dgx")
    code, result, err = _configure(out, inv, "nccl")
    assert code != 0
    text = json.dumps(result) + err
    assert f"missing RDMA device port(s) {table[-1].rdma}/ports/1" in text, text[-2000:]
    assert not (chroot_root / "etc/nccl.conf").exists()  # nothing written for a host that does not match


def test_dgx_h100_on_roce_qos_says_the_interface_names_are_unknown(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    out = build(DATA / "dgx-h100-roce.yaml", tmp_path / "roce")
    inv = _inventory(tmp_path / "hosts.yml", "dgx001", chroot_root, "pool_dgx")
    code, result, err = _configure(out, inv, "roce_qos")
    assert code != 0
    assert "no compute interface names" in json.dumps(result) + err
    assert not (chroot_root / "usr/local/sbin/cluster-blueprint-roce-qos").exists()


def test_roce_qos_runs_on_the_declared_names(chroot_root: Path, sysfs: Path, tmp_path: Path) -> None:
    _devices(sysfs, ["mlx5_0", "mlx5_1"], ["ens1f0np0", "ens2f0np0"])  # as declared in roce-pcie.yaml
    out = build(DATA / "roce-pcie.yaml", tmp_path / "roce")
    inv = _inventory(tmp_path / "hosts.yml", "l40s001", chroot_root, "pool_l40s")
    code, result, err = _configure(out, inv, "roce_qos,nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    script = (chroot_root / "usr/local/sbin/cluster-blueprint-roce-qos").read_text()
    assert "for ifc in ens1f0np0 ens2f0np0; do" in script and "for dev in mlx5_0 mlx5_1; do" in script
    (sysfs / "net" / "ens2f0np0").rmdir()  # the host renamed one port
    code, result, err = _configure(out, inv, "roce_qos")
    assert code != 0 and "missing interface(s) ens2f0np0" in json.dumps(result) + err


def test_roce_qos_sets_the_dgx_storage_ports_of_a_roce_storage_fabric(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    """InfiniBand compute, RoCE storage: the role runs on the DGX H100's four storage ports, by the Ethernet
    names and RDMA devices of the vendor's table, with the storage fabric's class; the head node, whose
    storage port has no published name, fails asking for pools[].ports."""
    ports = dgx_h100_storage_ports()
    _devices(sysfs, [p.rdma for p in ports], [p.names["ethernet"] for p in ports])
    out = build(DATA / "dgx-h100-roce-storage.yaml", tmp_path / "roce-storage")
    inv = _inventory(tmp_path / "hosts.yml", "dgx001", chroot_root, "pool_dgx")
    code, result, err = _configure(out, inv, "roce_qos")
    assert code == 0, json.dumps(result, indent=1) + err
    script = (chroot_root / "usr/local/sbin/cluster-blueprint-roce-qos").read_text()
    assert f"for ifc in {' '.join(p.names['ethernet'] for p in ports)}; do" in script
    assert f"for dev in {' '.join(p.rdma for p in ports)}; do" in script
    assert "--dscp2prio set,32,4" in script and "--pfc 0,0,0,0,1,0,0,0" in script
    (chroot_root / "usr/local/sbin/cluster-blueprint-roce-qos").unlink()
    inv = _inventory(tmp_path / "hosts-head.yml", "head001", chroot_root, "pool_head")
    code, result, err = _configure(out, inv, "roce_qos")
    assert code != 0 and "no storage interface names for pool pool_head" in json.dumps(result) + err
    assert not (chroot_root / "usr/local/sbin/cluster-blueprint-roce-qos").exists()


def test_oci_h100_gets_the_oci_hpc_nccl_conf(chroot_root: Path, sysfs: Path, tmp_path: Path) -> None:
    vendor = env_file("oci_bm_gpu_h100_8_nccl.conf")
    hcas = vendor["NCCL_IB_HCA"].lstrip("=").split(",")
    _devices(sysfs, [*hcas, "mlx5_2", "mlx5_11"], ["eth0"])  # 18 devices; mlx5_2 / mlx5_11 = host NICs
    out, inv = _cloud_build("oci-bm-h100.yaml", tmp_path / "oci", chroot_root)
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    conf = _env((chroot_root / "etc/nccl.conf").read_text())
    assert {k: conf[k] for k in vendor} == vendor


def test_azure_keeps_the_images_nccl_conf(chroot_root: Path, sysfs: Path, tmp_path: Path) -> None:
    image_conf = (TABLES / "azure_ndv5_nccl.conf").read_text()
    (chroot_root / "etc/nccl.conf").write_text(image_conf)
    topo = chroot_root / "opt/microsoft/ndv5/topo.xml"
    topo.parent.mkdir(parents=True)
    topo.write_text('<system version="1"/>\n')
    out, inv = _cloud_build("azure-ndh100v5.yaml", tmp_path / "az", chroot_root)
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    assert (chroot_root / "etc/nccl.conf").read_text() == image_conf  # the image's file, untouched
    env = _env((chroot_root / "etc/nccl/nccl.env").read_text())
    assert {k: env[k] for k in env_file("azure_ndv5_nccl.conf")} == env_file("azure_ndv5_nccl.conf")
    topo.unlink()  # an image without its topology file is not the platform the settings are for
    code, result, err = _configure(out, inv, "nccl")
    assert code != 0 and "missing platform file(s) /opt/microsoft/ndv5/topo.xml" in json.dumps(result) + err


def test_gcp_a3_ultra_gets_the_gib_plugin_environment(chroot_root: Path, sysfs: Path, tmp_path: Path) -> None:
    """An A3 Ultra image with the gIB package's files (Cluster Toolkit layout, /usr/local/gib): the role
    checks them, writes the vendor's NCCL_NET / NCCL_SOCKET_IFNAME and the login profile that sources the
    plug-in's script; a login shell on the host then has the plug-in's environment."""
    vendor = gcp_a3_ultra_gib_install()
    _devices(sysfs, [], ["enp0s19", "enp192s20"])
    gib = chroot_root / "usr/local/gib"
    (gib / "lib64").mkdir(parents=True)
    (gib / "scripts").mkdir(parents=True)
    # a stand-in for the package's script: marks that it was sourced
    (gib / "scripts/set_nccl_env.sh").write_text("export CB_GIB_PROFILE_SOURCED=yes\n")
    out, inv = _cloud_build("gcp-a3-ultra.yaml", tmp_path / "gcp", chroot_root)
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    env = _env((chroot_root / "etc/nccl/nccl.env").read_text())
    assert {k: env[k].strip("'") for k in env_file("gcp_a3_ultra_env.sh")} == env_file("gcp_a3_ultra_env.sh")
    profile = chroot_root / vendor.login_profile.lstrip("/")
    shell = subprocess.run(
        ["chroot", str(chroot_root), "/bin/sh", "-c", f". {vendor.login_profile}; "
         'echo "$CB_GIB_PROFILE_SOURCED $LD_LIBRARY_PATH"'],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert profile.is_file() and shell.stdout.split() == ["yes", "/usr/local/gib/lib64"], shell
    shutil.rmtree(gib)  # an image without the plug-in (and no package install): named, not guessed
    code, result, err = _configure(out, inv, "nccl")
    assert code != 0 and "missing platform file(s) /usr/local/gib/lib64" in json.dumps(result) + err


# Test stand-ins for the two commands Google's A3 Mega prolog runs (no container runtime, no registry in
# the chroot): each records its argv; docker, like the installer image, writes the plug-in directory into
# the host side of the /var/lib mount it is given, and only for the installer's own command.
FAKE_GCLOUD = """#!/bin/sh
{ echo gcloud; printf '%s\\n' "$@"; echo --; } >> /var/log/cb-fake-argv
"""
FAKE_DOCKER = """#!/bin/sh
{ echo docker; printf '%s\\n' "$@"; echo --; } >> /var/log/cb-fake-argv
host=""
prev=""
for a in "$@"; do
  [ "$prev" = "-v" ] && [ "${a#*:}" = /var/lib ] && host="${a%%:*}"
  prev="$a"
done
case "$*" in *" install --install-nccl") ;; *) exit 1 ;; esac
[ -n "$host" ] || exit 1
mkdir -p "$host/tcpxo/lib64"
: > "$host/tcpxo/lib64/libnccl-net.so"
echo 'export CB_TCPXO_PROFILE_SOURCED=yes' > "$host/tcpxo/lib64/nccl-env-profile.sh"
"""


def _calls(root: Path) -> list[list[str]]:
    log = root / "var/log/cb-fake-argv"
    words = log.read_text().splitlines() if log.exists() else []
    calls, cur = [], []  # type: ignore[var-annotated]
    for w in words:
        if w == "--":
            calls.append(cur)
            cur = []
        else:
            cur.append(w)
    return calls


# The RxDM job prolog/epilog comes from raw.githubusercontent.com; the chroot has no network, so the test
# serves a stand-in file through the role's URL override (a file:// URL inside the chroot).
FAKE_RXDM = "#!/bin/bash\n# test stand-in for slurm-gcp's receive-data-path-manager-mega\nexit 0\n"
FAKE_RXDM_PATH = "/var/tmp/cb-rxdm/receive-data-path-manager-mega"


def _serve_rxdm(root: Path) -> tuple[str, ...]:
    src = root / FAKE_RXDM_PATH.lstrip("/")
    src.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(FAKE_RXDM)
    src.chmod(0o600)  # the role sets the mode, not the source
    return ("-e", f"nccl_job_script_url=file://{FAKE_RXDM_PATH}")


def _mega_blueprint(tmp_path: Path) -> Path:
    p = tmp_path / "gcp-a3-mega.yaml"
    p.write_text(
        "apiVersion: cluster-blueprint/v1\nname: gcp-a3-mega\npools:\n"
        "  - {name: gpu, role: gpu, count: 2, server: gcp/a3-megagpu-8g}\n"
        "deployment:\n  target: gcp\n  cloud: {region: us-central1, zone: us-central1-a}\n"
    )
    return p


def test_gcp_a3_mega_installs_tcpxo_as_the_slurm_prolog_does(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    """The nccl role runs the installer image exactly as slurm-gcp's receive-data-path-manager-mega prolog
    (test data) does, after the same registry login with the same PATH, adds the prolog's two profile
    lines on this Debian 12 host, stages that prolog as the job prolog/epilog where and with the modes the
    Cluster Toolkit's stage_scripts.sh (test data) does, and leaves an installed host alone on the next run."""
    vendor = gcp_a3_mega_tcpxo_install()
    env = env_file("gcp_a3_mega_env.sh")
    _devices(sysfs, [], [*env["NCCL_FASTRAK_IFNAME"].split(","), env["NCCL_FASTRAK_CTRL_DEV"]])
    gcloud = chroot_root / vendor.login_path.lstrip("/") / "gcloud"
    docker = chroot_root / "usr/local/bin/docker"
    for fake, text in ((gcloud, FAKE_GCLOUD), (docker, FAKE_DOCKER)):
        fake.parent.mkdir(parents=True, exist_ok=True)
        fake.write_text(text)
        fake.chmod(0o755)
    stale = chroot_root / vendor.removes.lstrip("/") / "stale.so"  # a previous, partial install
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    out = build(_mega_blueprint(tmp_path), tmp_path / "mega")
    inv = _inventory(tmp_path / "hosts.yml", "gpu001", chroot_root, "pool_gpu")
    rxdm = _serve_rxdm(chroot_root)
    staged = gcp_a3_mega_stage_scripts()
    script = chroot_root / staged.path.lstrip("/")
    # a dry run finds docker, removes and runs nothing
    code, result, err = _configure(out, inv, "nccl", "-e", "nccl_install_plugin=true", *rxdm, "--check")
    assert code == 0, json.dumps(result, indent=1) + err
    assert _calls(chroot_root) == [] and stale.exists() and not script.exists()
    code, result, err = _configure(out, inv, "nccl", "-e", "nccl_install_plugin=true", *rxdm)
    assert code == 0, json.dumps(result, indent=1) + err
    assert _calls(chroot_root) == [vendor.login, vendor.installer]
    assert not stale.exists()  # removed first, as the prolog's rm -rf does
    profile = chroot_root / "var/lib/tcpxo/lib64/nccl-env-profile.sh"
    assert profile.read_text().splitlines() == ["export CB_TCPXO_PROFILE_SOURCED=yes", *vendor.profile_lines]
    assert "Debian 12" in vendor.profile_lines_on  # the test host is Debian 12: the lines apply
    shell = subprocess.run(
        ["chroot", str(chroot_root), "/bin/sh", "-c",
         'LD_LIBRARY_PATH=/x; . /var/lib/tcpxo/lib64/nccl-env-profile.sh; '
         'echo "$CB_TCPXO_PROFILE_SOURCED $LD_LIBRARY_PATH $NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"'],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert shell.stdout.split() == ["yes", "/var/lib/tcpxo/lib64:/x", "/dev/aperture_devices"], shell
    # the job prolog/epilog: the fetched bytes, where stage_scripts.sh puts them, its modes, root's
    assert script.read_text() == FAKE_RXDM
    for path, mode in ((script, staged.mode), (script.parent, staged.dir_mode)):
        st = path.stat()
        assert (oct(st.st_mode & 0o7777), st.st_uid, st.st_gid) == (oct(int(mode, 8)), 0, 0), path
    # installed: the second run runs nothing and changes nothing
    code, result, err = _configure(out, inv, "nccl", "-e", "nccl_install_plugin=true", *rxdm)
    assert code == 0 and result["hosts"]["gpu001"]["changed"] == 0, json.dumps(result, indent=1) + err
    assert len(_calls(chroot_root)) == 2


def test_gcp_a3_mega_without_install_only_checks_the_plugin(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    """nccl_install_packages=false (and so nccl_install_plugin): no installer runs, a host without
    /var/lib/tcpxo fails naming the files, one without the job prolog/epilog fails naming it; with them it
    passes and the profile is left untouched. An install on a host without docker fails saying so."""
    env = env_file("gcp_a3_mega_env.sh")
    _devices(sysfs, [], [*env["NCCL_FASTRAK_IFNAME"].split(","), env["NCCL_FASTRAK_CTRL_DEV"]])
    out = build(_mega_blueprint(tmp_path), tmp_path / "mega")
    inv = _inventory(tmp_path / "hosts.yml", "gpu001", chroot_root, "pool_gpu")
    code, result, err = _configure(out, inv, "nccl")
    assert code != 0 and "missing platform file(s) /var/lib/tcpxo/lib64" in json.dumps(result) + err
    # asked to install on a host without docker: named, and nothing removed or run
    code, result, err = _configure(out, inv, "nccl", "-e", "nccl_install_plugin=true")
    text = json.dumps(result) + err
    assert code != 0 and "gpu001 has no docker" in text and "nccl_install_plugin=false" in text, text[-2000:]
    lib = chroot_root / "var/lib/tcpxo/lib64"
    lib.mkdir(parents=True)
    (lib / "nccl-env-profile.sh").write_text("export FROM_THE_IMAGE=1\n")
    code, result, err = _configure(out, inv, "nccl")
    staged = gcp_a3_mega_stage_scripts()
    text = json.dumps(result) + err
    assert code != 0 and f"{staged.path} is missing or not executable" in text, text[-2000:]
    script = chroot_root / staged.path.lstrip("/")
    script.parent.mkdir(parents=True)
    script.write_text(FAKE_RXDM)
    script.chmod(0o755)
    code, result, err = _configure(out, inv, "nccl")
    assert code == 0, json.dumps(result, indent=1) + err
    assert (lib / "nccl-env-profile.sh").read_text() == "export FROM_THE_IMAGE=1\n"
    assert _calls(chroot_root) == []


def test_a_device_named_for_two_ports_needs_both_on_the_host(
    chroot_root: Path, sysfs: Path, tmp_path: Path
) -> None:
    """Two compute rails declared on one RDMA device (a typo, or a single-port card) gave NCCL_IB_HCA
    mlx5_1:1,mlx5_1:2 and the role checked the device only: NCCL then skipped the missing port 2. The role
    checks each device port the settings name."""
    text = (DATA / "ib-hgx-ports.yaml").read_text()
    assert "{role: compute, rdma: mlx5_2, netdev: ib2, gpu: 2}" in text
    bp = tmp_path / "typo.yaml"
    bp.write_text(
        text.replace(
            "{role: compute, rdma: mlx5_2, netdev: ib2, gpu: 2}",
            "{role: compute, rdma: mlx5_1, netdev: ib2, gpu: 2}",
        )
    )
    _devices(sysfs, [f"mlx5_{i}" for i in range(8)], [f"ib{i}" for i in range(8)])
    out = build(bp, tmp_path / "typo")
    inv = _inventory(tmp_path / "hosts.yml", "gpu001", chroot_root, "pool_gpu")
    code, result, err = _configure(out, inv, "nccl")
    text = json.dumps(result) + err
    assert code != 0 and "missing RDMA device port(s) mlx5_1/ports/2" in text, text[-2000:]
    assert not (chroot_root / "etc/nccl.conf").exists()
