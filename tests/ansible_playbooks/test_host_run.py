"""Real playbook runs against a Debian root through community.general.chroot, via `blueprint configure`.

The first run applies the base, fabric (inbox rdma-core), nvidia_peermem, NCCL, storage and
acceptance roles for real; the second must change nothing. The driver/DOCA/NCCL-package paths, which
need NVIDIA's repositories, run in check mode. A failing host must not hide a healthy one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible_helpers import DATA, build, chroot_root_fixture, root_tarball_fixture, with_partition  # noqa: F401  (fixtures)
from conftest import run_cli

pytestmark = pytest.mark.ansible_host

REAL_TAGS = "base,fabric,nvidia_peermem,nccl,storage,acceptance"
# lldp_agent_enabled: this InfiniBand system's hosts have no Ethernet fabric port of their own (the role runs
# where they do, as on roce-rail-2tier); enabled here so its package, file and idempotence are real too
NO_HARDWARE = (
    "-e",
    "cb_hardware_present=false",
    "-e",
    "nccl_install_packages=false",
    "-e",
    "lldp_agent_enabled=true",
)
# Stands in for NVIDIA's repository signing key in check mode (deb822_repository takes a path on the
# host as is; check mode never hands it to apt).
KEY_IN_ROOT = "/root/cb-test-repo-key.asc"
HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKeyOfTheTestRootOnly0000000000000000"


@pytest.fixture(scope="module")
def host_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(DATA / "ib-hgx-ports.yaml", tmp_path_factory.mktemp("hostbuild"))


# A managed file system as `blueprint inventory --from-stack` writes it (FSx for Lustre: DNS@tcp:/mountname,
# the options of the FSx user guide plus _netdev).
FSX_MOUNT = {
    "name": "fsx",
    "kind": "lustre",
    "src": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh",
    "path": "/fsx",
    "fstype": "lustre",
    "opts": "relatime,flock,_netdev",
    "server": None,
}


def _generated_hostvars(build_dir: Path, host: str) -> dict:  # type: ignore[type-arg]
    from ruamel.yaml import YAML

    inv = YAML(typ="safe", pure=True).load((build_dir / "ansible" / "inventory.yml").read_text())
    for name, group in inv["all"]["children"].items():
        if name.startswith("pool_") and host in (group.get("hosts") or {}):
            return group["hosts"][host] or {}
    return {}


def _inventory(
    path: Path, hosts: dict[str, str], pool: str = "pool_gpu", build_dir: Path | None = None
) -> Path:
    """One pool (named as generated) whose hosts are chroot directories; fabric addresses as generated."""
    lines = [
        "all:",
        "  vars:",
        "    ansible_connection: community.general.chroot",
        "    ansible_become: false",
        "    ansible_python_interpreter: /usr/bin/python3",
        f"    shared_storage_managed_mounts: {json.dumps([FSX_MOUNT])}",
        "  children:",
        f"    {pool}:",
        "      hosts:",
    ]
    for i, (name, root) in enumerate(sorted(hosts.items()), start=1):
        generated = _generated_hostvars(build_dir, name) if build_dir else {}
        fabric, gateways = generated.get("cb_fabric_addresses"), generated.get("cb_fabric_gateways")
        lines += [
            f"        {name}:",
            f"          ansible_host: {root}",
            f"          cb_mgmt_address: 10.20.1.{i}",
            f"          cb_fabric_addresses: {json.dumps(fabric or {})}",
        ]
        lines += [f"          cb_fabric_gateways: {json.dumps(gateways)}"] if gateways else []
    lines += [
        "    role_gpu:",
        "      children:",
        f"        {pool}: {{}}",
        "    rdma:",
        "      children:",
        f"        {pool}: {{}}",
        "",
    ]
    path.write_text("\n".join(lines))
    return path


def _configure(build_dir: Path, inventory: Path, *args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code, out, err = run_cli("configure", str(build_dir), "-i", str(inventory), "--format", "json", *args)
    try:
        return code, json.loads(out), err
    except ValueError:
        pytest.fail(f"configure printed no JSON (exit {code}): {out}\n{err}")


@pytest.fixture(scope="module")
def runs(host_build: Path, chroot_root: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    inv = _inventory(
        tmp_path_factory.mktemp("inv") / "hosts.yml", {"gpu001": str(chroot_root)}, build_dir=host_build
    )
    # the host's SSH host key (openssh-server makes it on a real host; the test root has no server)
    (chroot_root / "etc/ssh").mkdir(parents=True, exist_ok=True)
    (chroot_root / "etc/ssh/ssh_host_ed25519_key.pub").write_text(HOST_KEY + " root@gpu001\n")
    first = _configure(host_build, inv, "--tags", REAL_TAGS, *NO_HARDWARE)
    second = _configure(host_build, inv, "--tags", REAL_TAGS, *NO_HARDWARE)
    return inv, first, second


def _installed(root: Path) -> set[str]:
    status = (root / "var" / "lib" / "dpkg" / "status").read_text()
    out = set()
    for block in status.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(" ")
        )
        if fields.get("Status") == "install ok installed":
            out.add(fields["Package"])
    return out


def test_first_run_applies_the_roles(runs) -> None:  # type: ignore[no-untyped-def]
    _, (code, result, err), _ = runs
    host = result["hosts"]["gpu001"]
    assert code == 0, json.dumps(result, indent=1) + err
    assert host["failed"] == 0 and host["unreachable"] == 0
    assert host["changed"] >= 10, host


def test_files_packages_and_fstab_are_real(runs, chroot_root: Path, host_build: Path) -> None:  # type: ignore[no-untyped-def]
    r = chroot_root
    # NCCL: what lands on the host is byte-identical to the generator's nccl/ output
    assert (r / "etc/nccl.conf").read_bytes() == (host_build / "nccl/gpu/nccl.conf").read_bytes()
    assert (r / "etc/nccl/nccl.env").read_bytes() == (host_build / "nccl/gpu/nccl.env").read_bytes()
    conf = (r / "etc/nccl.conf").read_text()
    # HGX H200 (OEM) publishes no port table; this test system declares its ports (ib-hgx-ports.yaml), so
    # the device list is exactly the declared one, in rail order
    declared = ",".join(f"mlx5_{i}:1" for i in range(8))
    assert f"NCCL_IB_HCA=={declared}" in conf
    assert "NCCL_IB_SL=1" in conf and "NCCL_COLLNET_ENABLE=0" in conf
    # inbox RDMA stack and the NFS client, installed by apt for real
    pkgs = _installed(r)
    for pkg in (
        "rdma-core",
        "ibverbs-utils",
        "infiniband-diags",
        "perftest",
        "nfs-common",
        "pciutils",
        "lldpd",
    ):
        assert pkg in pkgs, pkg
    # lldp_agent: the settings lldpd reads at start (lldpd(8) FILES: /etc/lldpd.d/*.conf), with the plan name
    lldp = (r / "etc/lldpd.d/cluster-blueprint.conf").read_text().splitlines()
    assert [ln for ln in lldp if not ln.startswith("#")] == [
        "configure system hostname gpu001",
        "configure lldp portidsubtype ifname",
    ]
    assert (r / "usr/sbin/ibstat").exists()
    # mounts written to fstab (not mounted), mount points made
    fstab = (r / "etc/fstab").read_text()
    assert "nfs01:/export/home /home nfs hard,_netdev,vers=4.2,nconnect=8 0 0" in fstab
    assert "mds01@o2ib:/scratch /lustre/scratch lustre flock,_netdev 0 0" in fstab
    # WEKA (docs.weka.io "Mount a filesystem using fstab": <backend>/<fs> <mount> wekafs <options> with
    # x-systemd.requires=weka-agent.service,x-systemd.mount-timeout=infinity,_netdev) and the page's unit
    assert (
        "weka01/weights /mnt/weka wekafs x-systemd.requires=weka-agent.service,"
        "x-systemd.mount-timeout=infinity,_netdev,num_cores=1,net=ib0 0 0" in fstab
    )
    unit = (r / "etc/systemd/system/weka-agent.service").read_text()
    assert (
        "ExecStart=/usr/bin/weka --agent" in unit
        and "RequiredBy=remote-fs-pre.target remote-fs.target" in unit
    )
    assert (r / "home").is_dir() and (r / "lustre/scratch").is_dir() and (r / "mnt/weka").is_dir()
    # configuration files of the other roles
    assert "nvidia_peermem" in (r / "etc/modules-load.d/nvidia-peermem.conf").read_text()
    assert (r / "etc/modules-load.d/cluster-blueprint-rdma.conf").read_text().split()[-3:] == [
        "ib_umad",
        "ib_ipoib",
        "rdma_ucm",
    ]
    assert (
        "* hard memlock unlimited" in (r / "etc/security/limits.d/90-cluster-blueprint-rdma.conf").read_text()
    )
    assert "10.20.1.1 gpu001" in (r / "etc/hosts").read_text()


def test_fabric_access_and_managed_storage_files(runs, chroot_root: Path, host_build: Path) -> None:  # type: ignore[no-untyped-def]
    from ruamel.yaml import YAML

    r = chroot_root
    expected = _generated_hostvars(host_build, "gpu001")["cb_fabric_addresses"]
    # netplan: every IPoIB rail with its planned address (rail subnets /19 of 10.100.0.0/16, first host .10)
    netplan_file = r / "etc/netplan/60-cluster-blueprint-fabric.yaml"
    assert oct(netplan_file.stat().st_mode & 0o777) == "0o600"
    netplan = YAML(typ="safe", pure=True).load(netplan_file.read_text())["network"]
    assert netplan["version"] == 2
    assert {k: v["addresses"] for k, v in netplan["ethernets"].items()} == {
        k: [v] for k, v in expected.items()
    }
    assert netplan["ethernets"]["ib0"]["addresses"] == ["10.100.0.10/19"]
    assert "mtu" not in netplan["ethernets"]["ib0"]  # IPoIB takes the IB port's MTU
    # LNet: Lustre rides the compute fabric (no storage fabric): o2ib over the eight IPoIB rails
    lnet = (r / "etc/modprobe.d/cluster-blueprint-lnet.conf").read_text()
    assert 'options lnet networks="o2ib0(ib0,ib1,ib2,ib3,ib4,ib5,ib6,ib7)"' in lnet
    # managed file system from the stack outputs: in fstab with the vendor's options
    fstab = (r / "etc/fstab").read_text()
    assert f"{FSX_MOUNT['src']} /fsx lustre relatime,flock,_netdev 0 0" in fstab
    # SSH trust: the cluster key (made once on the controller) installed and authorised
    key_dir = host_build / "ansible" / ".cluster-ssh"
    pub = (key_dir / "id_ed25519_cluster.pub").read_text().split()
    assert pub[0] == "ssh-ed25519"
    assert " ".join(pub[:2]) in (r / "root/.ssh/authorized_keys").read_text()
    assert oct((r / "root/.ssh/id_ed25519_cluster").stat().st_mode & 0o777) == "0o600"
    assert "IdentityFile /root/.ssh/id_ed25519_cluster" in (r / "root/.ssh/config").read_text()
    # known host keys (by name and management address) and the MPI host file (8 GPUs per HGX H200)
    assert f"gpu001,10.20.1.1 {HOST_KEY}" in (r / "etc/ssh/ssh_known_hosts").read_text()
    assert "gpu001 slots=8" in (r / "etc/cluster-blueprint/hostfile").read_text().splitlines()


def test_second_run_changes_nothing(runs) -> None:  # type: ignore[no-untyped-def]
    _, _, (code, result, err) = runs
    host = result["hosts"]["gpu001"]
    assert code == 0, err
    assert host["changed"] == 0, host
    assert host["ok"] > 10


def test_driver_ofed_and_nccl_packages_in_check_mode(runs, chroot_root: Path, host_build: Path) -> None:  # type: ignore[no-untyped-def]
    inv = runs[0]
    (chroot_root / KEY_IN_ROOT.lstrip("/")).write_text("test stand-in for a repository signing key\n")
    code, result, err = _configure(
        host_build,
        inv,
        "--check",
        "--tags",
        "drivers,fabric,nccl",
        "-e",
        "cb_hardware_present=false",
        "-e",
        "doca_ofed_kind=doca",
        "-e",
        "nvidia_driver_version=570.124.06",
        "-e",
        f"nvidia_driver_repo_key_url={KEY_IN_ROOT}",
        "-e",
        f"doca_ofed_repo_key_url={KEY_IN_ROOT}",
        "-e",
        f"nccl_repo_key_url={KEY_IN_ROOT}",
    )
    host = result["hosts"]["gpu001"]
    assert code == 0 and host["failed"] == 0, json.dumps(result, indent=1) + err
    assert host["changed"] >= 3  # repositories, pin file, nouveau blacklist would change
    # check mode wrote nothing
    assert not (chroot_root / "etc/apt/sources.list.d/cuda.sources").exists()
    assert not (chroot_root / "etc/apt/sources.list.d/doca.sources").exists()
    assert not (chroot_root / "etc/modprobe.d/blacklist-nouveau.conf").exists()
    assert not (chroot_root / "etc/apt/preferences.d/cluster-blueprint-nvidia.pref").exists()


def test_acceptance_fails_without_a_threshold(runs, host_build: Path) -> None:  # type: ignore[no-untyped-def]
    inv = runs[0]
    code, result, _ = _configure(
        host_build,
        inv,
        "--tags",
        "acceptance",
        "-e",
        "cb_hardware_present=false",
        "-e",
        "acceptance_link_gbytes=0",
        "-e",
        "acceptance_run_nccl_tests=true",  # the threshold is checked for a run (a pool without one is not failed)
    )
    host = result["hosts"]["gpu001"]
    assert code == 1 and host["status"] == "failed"
    assert any("no bus bandwidth threshold" in f["message"] for f in host["failures"]), host


def test_a_failed_host_does_not_hide_the_others(host_build: Path, chroot_root: Path, tmp_path: Path) -> None:
    inv = _inventory(
        tmp_path / "two.yml", {"gpu001": str(chroot_root), "gpu002": str(tmp_path / "no-such-root")}
    )
    code, result, _ = _configure(host_build, inv, "--tags", "base", "-e", "cb_hardware_present=false")
    assert code == 1
    # gpu001 still runs to the end (its /etc/hosts block gains gpu002's address)
    assert (
        result["hosts"]["gpu001"]["status"] in ("ok", "changed") and result["hosts"]["gpu001"]["failed"] == 0
    )
    assert result["hosts"]["gpu001"]["ok"] > 0
    assert result["hosts"]["gpu002"]["status"] in ("unreachable", "failed")
    assert result["hosts"]["gpu002"]["failures"][0]["message"]
    # the text report lists both hosts and the failure
    code, out, err = run_cli(
        "configure", str(host_build), "-i", str(inv), "--tags", "base", "-e", "cb_hardware_present=false"
    )
    assert code == 1
    assert "gpu001" in out and "gpu002" in out and "FAILED" in err


def test_roce_lossless_class_is_rendered_and_idempotent(chroot_root: Path, tmp_path: Path) -> None:
    out = build(DATA / "roce-pcie.yaml", tmp_path / "roce")
    inv = _inventory(tmp_path / "roce.yml", {"l40s001": str(chroot_root)}, pool="pool_l40s", build_dir=out)
    args = (
        "--tags",
        "roce_qos,nccl,host_fabric",
        "-e",
        "cb_hardware_present=false",
        "-e",
        "nccl_install_packages=false",
    )
    code, result, err = _configure(out, inv, *args)
    assert code == 0 and result["hosts"]["l40s001"]["changed"] >= 2, json.dumps(result, indent=1) + err
    script = (chroot_root / "usr/local/sbin/cluster-blueprint-roce-qos").read_text()
    # fabrics.compute.lossless: pfc_priority 4, dscp 24 -> TOS 96; the two compute ports of the pool
    assert 'mlnx_qos -i "$ifc" --trust dscp --pfc 0,0,0,0,1,0,0,0' in script
    # DSCP 24 sits on priority 3 in the NIC's default map: the script moves it onto PFC's priority 4
    assert 'mlnx_qos -i "$ifc" --dscp2prio set,24,4' in script
    # the declared port names (pools[].ports), never a guessed eth1/eth2
    assert "for ifc in ens1f0np0 ens2f0np0; do" in script and "for dev in mlx5_0 mlx5_1; do" in script
    assert 'cma_roce_tos -d "$dev" -t 96' in script and "/ecn/roce_np/enable/4" in script
    assert (
        "ExecStart=/usr/local/sbin/cluster-blueprint-roce-qos"
        in (chroot_root / "etc/systemd/system/cluster-blueprint-roce-qos.service").read_text()
    )
    conf = (chroot_root / "etc/nccl.conf").read_text()
    assert "NCCL_IB_TC=96" in conf and "NCCL_IB_GID_INDEX=3" in conf
    # RoCE rails: each rail's address, and a routing table per rail so traffic from a rail leaves by it
    # (no fabric MTU in the blueprint: the driver's default). Not rail-optimised: one compute subnet per port.
    from ruamel.yaml import YAML

    eth = YAML(typ="safe", pure=True).load(
        (chroot_root / "etc/netplan/60-cluster-blueprint-fabric.yaml").read_text()
    )["network"]["ethernets"]
    # Routed (BGP) leaves: each port a /31 with its leaf port, the gateway; the port's subnet in the main
    # table and the fabric network in the rail's table via it (docs/switches.md "Host addresses")
    assert eth["ens1f0np0"]["addresses"] == ["10.100.0.10/31"] and eth["ens2f0np0"]["addresses"] == [
        "10.100.128.10/31"
    ]
    assert eth["ens1f0np0"]["routes"] == [
        {"to": "10.100.0.0/17", "via": "10.100.0.11"},
        {"to": "10.100.0.0/17", "via": "10.100.0.11", "table": 100},
        {"to": "10.100.0.0/16", "via": "10.100.0.11", "table": 100},
    ]
    assert eth["ens1f0np0"]["routing-policy"] == [{"from": "10.100.0.10", "table": 100}]
    assert eth["ens2f0np0"]["routing-policy"] == [{"from": "10.100.128.10", "table": 101}]
    code, result, err = _configure(out, inv, *args)
    assert code == 0 and result["hosts"]["l40s001"]["changed"] == 0, json.dumps(result, indent=1) + err


def test_a_tenant_pool_gets_ipoib_children_in_its_partition(chroot_root: Path, tmp_path: Path) -> None:
    """A pool in its own partition is a limited member of Default, and the IPoIB interface of each port uses
    the P_Key at index 0 (Default): its hosts got their rail addresses where they cannot reach each other.
    The addresses go on P_Key children in the pool's partition (ipoib: true), which a unit makes at boot
    (`ip link add link ib0 name ib0.8010 type ipoib pkey 0x8010`) and netplan addresses by name."""
    train = {"name": "train", "pkey": 0x10, "pools": ["gpu"], "membership": "full", "ipoib": True}
    blueprint = with_partition(DATA / "ib-hgx-ports.yaml", train, tmp_path / "tenant.yaml")
    out = build(blueprint, tmp_path / "tenant")
    inv = _inventory(tmp_path / "hosts.yml", {"gpu001": str(chroot_root)}, build_dir=out)
    args = ("--tags", "host_fabric", "-e", "cb_hardware_present=false")
    code, result, err = _configure(out, inv, *args)
    assert code == 0, json.dumps(result, indent=1) + err
    unit = (chroot_root / "etc/systemd/system/cluster-blueprint-ipoib-children.service").read_text()
    made = [ln for ln in unit.splitlines() if ln.startswith("ExecStart=")]
    assert made == [
        f"ExecStart=-/usr/sbin/ip link add link ib{r} name ib{r}.8010 type ipoib pkey 0x8010"
        for r in range(8)
    ]
    from ruamel.yaml import YAML

    eth = YAML(typ="safe", pure=True).load(
        (chroot_root / "etc/netplan/60-cluster-blueprint-fabric.yaml").read_text()
    )["network"]["ethernets"]
    assert sorted(eth) == sorted(f"ib{r}.8010" for r in range(8))  # the parents (in Default) get nothing
    assert eth["ib0.8010"]["addresses"] == ["10.100.0.10/19"]
    code, result, err = _configure(out, inv, *args)
    assert code == 0 and result["hosts"]["gpu001"]["changed"] == 0, json.dumps(result, indent=1) + err
