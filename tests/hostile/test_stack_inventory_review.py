"""`blueprint inventory --from-stack` after a review: what it writes, read by the real Ansible; the build's own
files edited by hand; the stack's values compared in the form a machine sees them. The builds and valid
outputs are test_stack_outputs.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, run_cli
from test_stack_outputs import PAYLOAD, _tool, _written, builds, case, first_host

__all__ = ["builds", "case"]  # the fixtures, found by pytest in this module's names

LUSTRE_PLAY = """\
- hosts: all
  connection: local
  gather_facts: true
  gather_subset: [min]
  tasks:
    - ansible.builtin.debug:
        msg: "suite=<{{ shared_storage_lustre_repo_suite }}> pkgs=<{{ shared_storage_lustre_packages | join(',') }}>"
"""


def _lustre_debug(inventory: Path, host: str, tmp: Path) -> str:
    play = tmp / "lustre.yml"
    play.write_text(LUSTRE_PLAY)
    env = {**os.environ, "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_HOME": str(tmp / "ansible-home")}
    interpreter = json.dumps({"ansible_python_interpreter": sys.executable})
    done = subprocess.run(
        [_tool("ansible-playbook"), "-i", str(inventory), "-l", host, str(play), "-e", interpreter],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_ansible_fills_in_the_lustre_client_facts(case: Any, tmp_path: Path) -> None:
    """The Lustre client repository's suite and package name the host's OS release and kernel: written
    `!unsafe`, Ansible installed `lustre-client-modules-{{ ansible_kernel }}` literally. Template text a
    hand-edited cluster.json adds beside them stays `!unsafe` (the canary is never made)."""
    inventory, data, build = _written(case, "gcp")
    host = first_host(data)
    shown = _lustre_debug(inventory, host, tmp_path)
    assert f"lustre-client-modules-{os.uname().release}," in shown, shown
    assert "suite=<lustre-client-ubuntu-" in shown and "{{" not in shown, shown
    canary = tmp_path / "CANARY"
    cluster = json.loads((build / "pulumi" / "cluster.json").read_text())
    (lustre,) = (s for s in cluster["storage"] if s["protocol"] == "lustre")
    lustre["client"]["suite"] = "{codename}" + PAYLOAD.replace("CANARY", str(canary))
    (build / "pulumi" / "cluster.json").write_text(json.dumps(cluster))
    inventory.unlink()
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(tmp_path / "outputs.json"))
    assert code == 0, out + err
    shown = _lustre_debug(inventory, host, tmp_path)
    assert "lookup('pipe'" in shown and not canary.exists(), shown


def test_one_machine_under_two_spellings_is_refused(case: Any) -> None:
    """`::ffff:10.0.0.10` is 10.0.0.10 (an IPv4-mapped IPv6 address) and DNS names have no case: two hosts
    at `GPU-U1-000001` and `gpu-u1-000001`, or at an address and its mapped form, passed the one-machine-
    per-host check, which compared the strings."""
    from generator.deploy.stack_inventory import StackInventoryError, _own_address

    build, outputs, data = case("aws")
    first, second = sorted(data["nodes"])[:2]
    data["nodes"][second]["address"] = "::ffff:" + data["nodes"][first]["address"]
    outputs.write_text(json.dumps(data))
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2 and f"{outputs}: $.nodes.{second}.address" in err, out + err
    assert f"also {first}'s address" in err and not (build / "ansible" / "inventory.stack.yml").exists()
    seen: dict[str, str] = {"hosts": "gpu001 gpu002"}
    _own_address("outputs", "gpu001", None, {"address": "GPU-U1-000001"}, seen)
    try:
        _own_address("outputs", "gpu002", None, {"address": "gpu-u1-000001"}, seen)
    except StackInventoryError as exc:
        assert exc.where == "outputs: $.nodes.gpu002.address", exc.where
    else:
        raise AssertionError("two hosts at one computer name were accepted")
    # a planned address and its mapped form are one address (MAAS plans the management addresses)
    _own_address("outputs", "gpu003", "10.1.0.7", {"address": "::ffff:10.1.0.7"}, seen)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        ({"access": {"via": "bastion"}}, "$.access"),
        ({"access": "bastion"}, "$.access"),
        ({"access": {"via": "iap", "proxy_command": "gcloud %h"}}, "$.access"),
        ({"storage": "x"}, "$.storage"),
        ({"storage": [{}]}, "$.storage[0].name"),
        ({"storage": [{"name": [1]}]}, "$.storage[0].name"),
        ({"storage": [{"name": "scratch", "protocol": "smb"}]}, "$.storage[0].protocol"),
        (
            {"storage": [{"name": "scratch", "protocol": "lustre", "client": {"repo": 1}}]},
            "$.storage[0].client",
        ),
    ],
)
def test_a_cluster_json_edited_by_hand_is_located(case: Any, edit: dict[str, Any], where: str) -> None:
    """A bastion path without its host was a KeyError, `"access": "bastion"` an AttributeError, a storage
    list of the wrong shape a TypeError or KeyError: internal errors, exit 3."""
    build, outputs, data = case("aws")
    outputs.write_text(json.dumps(data))
    path = build / "pulumi" / "cluster.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **edit}))
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2 and "Traceback" not in err and "internal error" not in err, out + err
    assert f"{path}: {where}" in err and "regenerate" in err, err
    assert not (build / "ansible" / "inventory.stack.yml").exists()


@pytest.mark.parametrize("value", ["5", "[a, b]", "text"])
def test_a_host_of_the_inventory_edited_by_hand_is_located(case: Any, value: str) -> None:
    """`gpu001: 5` in ansible/inventory.yml was an AttributeError (exit 3)."""
    build, outputs, data = case("aws")
    outputs.write_text(json.dumps(data))
    path = build / "ansible" / "inventory.yml"
    host = first_host(data)
    text = path.read_text()
    assert f"        {host}:" in text
    lines = [
        f"        {host}: {value}" if ln.startswith(f"        {host}:") else ln for ln in text.splitlines()
    ]
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2 and "Traceback" not in err and "internal error" not in err, out + err
    assert f"{path}:" in err and f"host `{host}`" in err and "regenerate" in err, err


def _maas(tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """A MAAS build, the outputs its program exports (planned addresses), and the inventory's host vars."""
    from ruamel.yaml import YAML

    build = tmp_path / "maas"
    code, out, err = run_cli(
        "generate", str(EXAMPLES / "maas-onprem-h100.yaml"), "-o", str(build), "--only", "ansible,pulumi"
    )
    assert code == 0, out + err
    inventory = YAML(typ="safe", pure=True).load((build / "ansible" / "inventory.yml").read_text())
    hosts = {
        h: hv
        for g, grp in inventory["all"]["children"].items()
        if g.startswith("pool_")
        for h, hv in grp["hosts"].items()
    }
    nodes = {
        h: {"address": hv["cb_mgmt_address"], "fabric_addresses": hv.get("cb_fabric_addresses") or {}}
        for h, hv in hosts.items()
    }
    cluster = json.loads((build / "pulumi" / "cluster.json").read_text())
    return build, {"blueprint": cluster["blueprint"], "nodes": nodes}, hosts


def test_maas_fabric_addresses_other_than_the_planned_ones_are_refused(tmp_path: Path) -> None:
    """The MAAS program exports each node's planned fabric addresses: a stack naming others (another site's,
    or an interface the build has none of) was validated, then ignored."""
    build, data, hosts = _maas(tmp_path)
    outputs = tmp_path / "outputs.json"
    host = sorted(h for h, hv in hosts.items() if hv.get("cb_fabric_addresses"))[0]
    netdev = sorted(data["nodes"][host]["fabric_addresses"])[0]
    outputs.write_text(json.dumps(data))
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs), "-o", str(tmp_path / "i"))
    assert code == 0, out + err  # the planned addresses: accepted
    for netdev_, address in ((netdev, "192.168.77.7/24"), ("evil0", "10.9.9.9/8")):
        changed = json.loads(json.dumps(data))
        changed["nodes"][host]["fabric_addresses"][netdev_] = address
        outputs.write_text(json.dumps(changed))
        code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
        assert code == 2 and f"{outputs}: $.nodes.{host}.fabric_addresses" in err, out + err
        assert address in err and "not this build's stack" in err, err
        assert not (build / "ansible" / "inventory.stack.yml").exists()


def test_dash_as_the_inventory_output_is_standard_output(
    case: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-o -` wrote a file named `-` in the current folder, and said `next: configure -i -`."""
    from ruamel.yaml import YAML

    build, outputs, data = case("aws")
    outputs.write_text(json.dumps(data))
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs), "-o", "-")
    assert code == 0, out + err
    assert list(here.iterdir()) == [] and not (build / "ansible" / "inventory.stack.yml").exists()
    listed = YAML(typ="safe", pure=True).load(out.replace("!unsafe ", ""))
    assert first_host(data) in listed["all"]["children"]["pool_gpu"]["hosts"], out[:500]
    assert "next:" not in err and "standard output" in err, err
