"""The host_fabric role's NetworkManager branch (RHEL 9 / Rocky 9), for real, on the Debian test root (chroot)
via `blueprint configure`, with the variables generate writes for a Rocky 9 blueprint.

The host's OS family is given as RedHat (-e ansible_os_family=RedHat: the root is Debian). The role must write
one keyfile profile per fabric interface (/etc/NetworkManager/system-connections, root, 0600) with the
addresses, MTU, routes and policy routing its netplan branch writes, and no netplan; NetworkManager does not
run in the chroot, so its handler must leave the files and not fail. Keyfile keys: nm-settings-keyfile(5),
nm-settings-nmcli(5).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from ansible_helpers import DATA, build, chroot_root_fixture, root_tarball_fixture, with_partition  # noqa: F401  (fixtures)
from conftest import run_cli

pytestmark = pytest.mark.ansible_host

NM_DIR = "etc/NetworkManager/system-connections"
PREFIX = "cluster-blueprint-fabric-"
RHEL = (
    "-e",
    "ansible_os_family=RedHat",
    "-e",
    "ansible_distribution=Rocky",
    "-e",
    "cb_hardware_present=false",
)


def _rocky(source: Path, out: Path) -> Path:
    doc = yaml.safe_load(source.read_text())
    doc.setdefault("software", {})["os"] = "rocky-9"
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def _hostvars(build_dir: Path, host: str) -> dict:  # type: ignore[type-arg]
    inv = yaml.safe_load((build_dir / "ansible" / "inventory.yml").read_text())
    for name, group in inv["all"]["children"].items():
        if name.startswith("pool_") and host in (group.get("hosts") or {}):
            return group["hosts"][host] or {}
    raise AssertionError(f"{host} not in the generated inventory")


def _inventory(path: Path, root: Path, host: str, pool: str, build_dir: Path, **extra: object) -> Path:
    generated = _hostvars(build_dir, host)
    vars_ = {
        "ansible_host": str(root),
        "cb_fabric_addresses": generated.get("cb_fabric_addresses") or {},
        **(
            {"cb_fabric_gateways": generated["cb_fabric_gateways"]}
            if generated.get("cb_fabric_gateways")
            else {}
        ),
        **extra,
    }
    inv = {
        "all": {
            "vars": {
                "ansible_connection": "community.general.chroot",
                "ansible_become": False,
                "ansible_python_interpreter": "/usr/bin/python3",
            },
            # fabric.yml runs on the rdma group (as the generated inventory has it)
            "children": {pool: {"hosts": {host: vars_}}, "rdma": {"children": {pool: {}}}},
        }
    }
    path.write_text(json.dumps(inv))
    return path


def _configure(build_dir: Path, inventory: Path, *args: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code, out, err = run_cli("configure", str(build_dir), "-i", str(inventory), "--format", "json", *args)
    try:
        return code, json.loads(out), err
    except ValueError:
        pytest.fail(f"configure printed no JSON (exit {code}): {out}\n{err}")


def _keyfile(text: str) -> dict[str, dict[str, str]]:
    """GLib key file groups (comments and blank lines skipped); values unescaped as GLib reads them."""
    groups: dict[str, dict[str, str]] = {}
    group: dict[str, str] = {}
    unescape = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("["):
            group = groups.setdefault(line.strip()[1:-1], {})
            continue
        key, raw = line.split("=", 1)
        value, i = "", 0
        while i < len(raw):
            if raw[i] == "\\":
                value += unescape[raw[i + 1]]
                i += 2
            else:
                value += raw[i]
                i += 1
        assert key not in group, f"duplicate key {key}"
        group[key] = value
    return groups


@pytest.fixture()
def clean_root(chroot_root: Path):  # type: ignore[no-untyped-def]
    """The session's root without the profiles and netplan file another test of this module left."""
    for rel in (NM_DIR, "etc/netplan"):
        shutil.rmtree(chroot_root / rel, ignore_errors=True)
    yield chroot_root
    for rel in (NM_DIR, "etc/netplan"):
        shutil.rmtree(chroot_root / rel, ignore_errors=True)


def test_roce_rails_get_profiles_with_routes_and_rules(clean_root: Path, tmp_path: Path) -> None:
    out = build(_rocky(DATA / "roce-pcie.yaml", tmp_path / "rocky.yaml"), tmp_path / "build")
    inv = _inventory(tmp_path / "hosts.json", clean_root, "l40s001", "pool_l40s", out)
    code, result, err = _configure(out, inv, "--tags", "host_fabric", *RHEL)
    assert code == 0 and result["hosts"]["l40s001"]["failed"] == 0, json.dumps(result, indent=1) + err
    nm = clean_root / NM_DIR
    assert sorted(p.name for p in nm.iterdir()) == [
        f"{PREFIX}ens1f0np0.nmconnection",
        f"{PREFIX}ens2f0np0.nmconnection",
    ]
    assert not (clean_root / "etc/netplan").exists()  # no netplan on a RHEL host
    path = nm / f"{PREFIX}ens1f0np0.nmconnection"
    st = path.stat()
    assert oct(st.st_mode & 0o777) == "0o600" and st.st_uid == 0 and st.st_gid == 0
    kf = _keyfile(path.read_text())
    assert kf["connection"]["type"] == "ethernet" and kf["connection"]["interface-name"] == "ens1f0np0"
    assert kf["connection"]["id"] == f"{PREFIX}ens1f0np0" and len(kf["connection"]["uuid"]) == 36
    # the same as netplan (test_host_run.py): a /31 with the leaf port as gateway; the port's subnet in the
    # main table, and in rail 0's table 100 with the fabric network; traffic from the address uses table 100
    assert kf["ipv4"] == {
        "method": "manual",
        "address1": "10.100.0.10/31",
        "route1": "10.100.0.0/17,10.100.0.11",
        "route2": "10.100.0.0/17,10.100.0.11",
        "route2_options": "table=100",
        "route3": "10.100.0.0/16,10.100.0.11",
        "route3_options": "table=100",
        "routing-rule1": "priority 30100 from 10.100.0.10/32 table 100",
    }
    assert kf["ipv6"] == {"method": "link-local"}
    assert "mtu" not in kf.get("ethernet", {})  # no fabric MTU in the blueprint: the driver's default
    other = _keyfile((nm / f"{PREFIX}ens2f0np0.nmconnection").read_text())
    assert other["ipv4"]["address1"] == "10.100.128.10/31"
    assert other["ipv4"]["routing-rule1"] == "priority 30101 from 10.100.128.10/32 table 101"
    # NetworkManager is not running in the chroot: the handler ran, found it so, and changed nothing
    code, result, err = _configure(out, inv, "--tags", "host_fabric", *RHEL)
    assert code == 0 and result["hosts"]["l40s001"]["changed"] == 0, json.dumps(result, indent=1) + err


def test_ipoib_rails_and_tenant_children(clean_root: Path, tmp_path: Path) -> None:
    """IPoIB rails are infiniband profiles (datagram); a tenant pool's P_Key children are created by
    NetworkManager itself (infiniband.parent, p-key), not by the systemd unit the netplan branch writes."""
    train = {"name": "train", "pkey": 0x10, "pools": ["gpu"], "membership": "full", "ipoib": True}
    blueprint = with_partition(
        _rocky(DATA / "ib-hgx-ports.yaml", tmp_path / "r.yaml"), train, tmp_path / "t.yaml"
    )
    out = build(blueprint, tmp_path / "build")
    inv = _inventory(tmp_path / "hosts.json", clean_root, "gpu001", "pool_gpu", out)
    code, result, err = _configure(out, inv, "--tags", "host_fabric", *RHEL)
    assert code == 0, json.dumps(result, indent=1) + err
    nm = clean_root / NM_DIR
    assert sorted(p.name for p in nm.iterdir()) == sorted(
        f"{PREFIX}ib{r}.8010.nmconnection" for r in range(8)
    )
    kf = _keyfile((nm / f"{PREFIX}ib0.8010.nmconnection").read_text())
    assert kf["connection"]["type"] == "infiniband" and kf["connection"]["interface-name"] == "ib0.8010"
    assert kf["infiniband"] == {"transport-mode": "datagram", "parent": "ib0", "p-key": str(0x8010)}
    assert kf["ipv4"] == {"method": "manual", "address1": "10.100.0.10/19"}  # IPoIB: no table, no routes
    unit = clean_root / "etc/systemd/system/cluster-blueprint-ipoib-children.service"
    assert not unit.exists()


def test_a_name_needing_escaping_is_escaped_and_unsafe_names_refused(
    clean_root: Path, tmp_path: Path
) -> None:
    """A kernel-valid interface name with a backslash is GLib-escaped in the profile (it reads back as
    itself); a name that would be another line of the profile is refused at the role's check, nothing written."""
    nic = {"interface": "ib\\0", "purpose": "compute", "rail": 0, "kind": "ipoib", "subnet": "10.100.0.0/19",
           "mtu": None, "table": None}  # fmt: skip
    out = build(_rocky(DATA / "ib-hgx-ports.yaml", tmp_path / "r.yaml"), tmp_path / "build")
    inv = _inventory(
        tmp_path / "hosts.json", clean_root, "gpu001", "pool_gpu", out,
        host_fabric_interfaces=[nic], cb_fabric_addresses={"ib\\0": "10.100.0.10/19"},
    )  # fmt: skip
    code, result, err = _configure(out, inv, "--tags", "host_fabric", *RHEL)
    assert code == 0, json.dumps(result, indent=1) + err
    text = (clean_root / NM_DIR / f"{PREFIX}ib\\0.nmconnection").read_text()
    assert "interface-name=ib\\\\0\n" in text
    assert _keyfile(text)["connection"]["interface-name"] == "ib\\0"
    shutil.rmtree(clean_root / NM_DIR)
    bad = nic | {"interface": "ib0\n[ipv4]"}
    inv = _inventory(
        tmp_path / "bad.json", clean_root, "gpu001", "pool_gpu", out,
        host_fabric_interfaces=[bad], cb_fabric_addresses={"ib0\n[ipv4]": "10.100.0.10/19"},
    )  # fmt: skip
    code, result, err = _configure(out, inv, "--tags", "host_fabric", *RHEL)
    assert code == 1, json.dumps(result, indent=1) + err
    [failure] = result["hosts"]["gpu001"]["failures"]
    # the host, the name as JSON (its newline shown, not printed) and why
    assert failure["message"].startswith('gpu001: fabric interface(s) ["ib0\\n[ipv4]"] cannot be written'), (
        failure
    )
    assert not (clean_root / NM_DIR).exists() or not list((clean_root / NM_DIR).iterdir())
