"""Hostile Pulumi stack outputs given to `blueprint inventory BUILD --from-stack outputs.json`.

An attacker who controls the stack state (or the file handed to the command) tries to run code on the
operator's machine through Ansible templating or the IAP ProxyCommand, to move a file system's mount point,
or to exhaust the command. Each is refused at its JSON path with exit 2, nothing is written and no payload
runs; the inventory written from valid outputs is read by the real consumers: `ansible-inventory`/`ansible`
(values from the stack are `!unsafe`) and OpenSSH (`ssh -G`, then the ProxyCommand run by `sh -c` as ssh
runs it, with `gcloud` a stub that records its argv).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, run_cli
from real_tools import missing_executables, needs
from ruamel.yaml import YAML

PAYLOAD = "{{ lookup('pipe', 'touch CANARY') }}"
VENV_BIN = Path(sys.executable).parent


# ---- builds and valid outputs in the shape the programs export (templates/pulumi/<target>/__main__.py)
@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("stack-builds")
    out = {}
    for target, example in (("gcp", "gcp-a3-ultra"), ("aws", "aws-p5-efa")):
        code, stdout, err = run_cli(
            "generate",
            str(EXAMPLES / f"{example}.yaml"),
            "-o",
            str(root / target),
            "--only",
            "ansible,pulumi",
        )
        assert code == 0, stdout + err
        out[target] = root / target
    return out


def _hosts(build: Path) -> list[str]:
    inventory = YAML(typ="safe", pure=True).load((build / "ansible" / "inventory.yml").read_text())
    return sorted(
        h for g, grp in inventory["all"]["children"].items() if g.startswith("pool_") for h in grp["hosts"]
    )


def valid_outputs(build: Path) -> dict[str, Any]:
    cluster = json.loads((build / "pulumi" / "cluster.json").read_text())
    target = cluster["target"]
    nodes = {}
    for i, host in enumerate(_hosts(build)):
        node: dict[str, Any] = {"address": f"10.0.{i // 200}.{i % 200 + 10}", "pool": "gpu", "su": 0}
        if target == "gcp":
            node.update(zone="europe-west1-b", project="test-project")
        if target == "aws":
            node["instance"] = f"i-{i:017x}"
        nodes[host] = node
    storage = {
        s["name"]: {
            "protocol": s["protocol"],
            "source": f"10.9.0.4@tcp:/{s['filesystem']}" if s["protocol"] == "lustre" else "10.9.0.4:/",
            "mount": s["mount"],
        }
        for s in cluster["storage"]
    }
    out = {"blueprint": cluster["blueprint"], "nodes": nodes, "storage": storage}
    if target == "gcp":
        out["login_user"] = "cluster"
    return out


@pytest.fixture
def case(builds: dict[str, Path], tmp_path: Path):  # type: ignore[no-untyped-def]
    """(build copy, outputs path, valid outputs) for a target; the canary path is in tmp_path."""

    def make(target: str) -> tuple[Path, Path, dict[str, Any]]:
        build = tmp_path / target
        shutil.copytree(builds[target], build)
        return build, tmp_path / "outputs.json", valid_outputs(build)

    return make


def refused(build: Path, outputs: Path, where: str, *words: str) -> str:
    """`inventory --from-stack` exits 2 with the located refusal; nothing written, no payload ran."""
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2, out + err
    assert "Traceback" not in err
    assert f"{outputs}{where}" in err, err
    for word in words:
        assert word in err, err
    assert not (build / "ansible" / "inventory.stack.yml").exists()
    assert not (build.parent / "CANARY").exists() and not Path("CANARY").exists()
    return err


def first_host(data: dict[str, Any]) -> str:
    return sorted(data["nodes"])[0]


# ---- each hostile class, refused at its JSON path ------------------------------------------------------
def test_template_in_the_address_is_refused(case: Any) -> None:
    build, outputs, data = case("gcp")
    host = first_host(data)
    data["nodes"][host]["address"] = PAYLOAD
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.nodes.{host}.address", "not an IP address")


def test_template_in_the_login_user_is_refused(case: Any) -> None:
    build, outputs, data = case("gcp")
    data["login_user"] = PAYLOAD
    outputs.write_text(json.dumps(data))
    refused(build, outputs, ": $.login_user", "not a Linux user name")


@pytest.mark.parametrize("source", [PAYLOAD, "10.9.0.4@tcp:/x$(touch CANARY)", "10.9.0.4@tcp:/lustre\n"])
def test_template_or_shell_in_the_storage_source_is_refused(case: Any, source: str) -> None:
    build, outputs, data = case("gcp")
    (name,) = data["storage"]
    data["storage"][name]["source"] = source
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.storage.{name}.source")


def test_an_nfs_source_for_a_lustre_file_system_is_refused(case: Any) -> None:
    build, outputs, data = case("gcp")
    (name,) = data["storage"]
    data["storage"][name]["source"] = "10.9.0.4:/export"
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.storage.{name}.source", "not a lustre mount source")


@pytest.mark.parametrize(
    "key,value",
    [
        ("zone", "europe-west1-b$(touch CANARY)"),
        ("zone", "europe-west1-b' ; touch CANARY; '"),
        ("project", "test-project`touch CANARY`"),
        ("project", "%h"),
    ],
)
def test_shell_in_the_iap_zone_or_project_is_refused(case: Any, key: str, value: str) -> None:
    build, outputs, data = case("gcp")
    host = first_host(data)
    data["nodes"][host][key] = value
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.nodes.{host}.{key}", "Google Cloud")


def test_shell_in_the_aws_instance_id_is_refused(case: Any) -> None:
    build, outputs, data = case("aws")
    host = first_host(data)
    data["nodes"][host]["instance"] = "i-0123456789abcdef0;touch CANARY"
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.nodes.{host}.instance", "EC2 instance id")


def test_the_blueprint_mount_point_wins_over_the_stack(case: Any) -> None:
    build, outputs, data = case("gcp")
    (name,) = data["storage"]
    data["storage"][name]["mount"] = "/etc"
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.storage.{name}.mount", "the blueprint decides `mount`", "/lustre")


def test_the_blueprint_protocol_wins_over_the_stack(case: Any) -> None:
    build, outputs, data = case("gcp")
    (name,) = data["storage"]
    data["storage"][name].update(protocol="nfs", source="10.9.0.4:/share")
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.storage.{name}.protocol", "the blueprint decides `protocol`")


def test_an_address_literal_as_a_node_name_is_refused(case: Any) -> None:
    build, outputs, data = case("gcp")
    data["nodes"]["0x7f000001"] = {"address": "127.0.0.1"}
    outputs.write_text(json.dumps(data))
    refused(build, outputs, ': $.nodes["0x7f000001"]', "hexadecimal")


def test_a_100k_deep_document_is_refused_at_its_line(case: Any) -> None:
    build, outputs, _ = case("gcp")
    outputs.write_text('{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    refused(build, outputs, ":1", "nested deeper than")


@pytest.mark.parametrize(
    "mutate,where",
    [
        (lambda d, h: d.update(nodes=[]), ": $.nodes"),
        (lambda d, h: d["nodes"].update({h: "10.0.0.1"}), ": $.nodes.{h}"),
        (lambda d, h: d["nodes"][h].update(address=167772161), ": $.nodes.{h}.address"),
        (lambda d, h: d["nodes"][h].update(su="abc"), ": $.nodes.{h}.su"),
        (lambda d, h: d["nodes"][h].update(su=10**400), ": $.nodes.{h}.su"),
        (lambda d, h: d["nodes"][h].update(shell="rm -rf /"), ": $.nodes.{h}.shell"),
        (lambda d, h: d.update(storage=[]), ": $.storage"),
        (lambda d, h: d.update(login_user=["root"]), ": $.login_user"),
    ],
)
def test_wrongly_typed_outputs_are_refused(case: Any, mutate: Any, where: str) -> None:
    build, outputs, data = case("gcp")
    host = first_host(data)
    mutate(data, host)
    outputs.write_text(json.dumps(data))
    refused(build, outputs, where.format(h=host))


def test_nan_is_not_json(case: Any) -> None:
    build, outputs, data = case("gcp")
    outputs.write_text(json.dumps(data).replace('"su": 0', '"su": NaN', 1))
    refused(build, outputs, "", "not JSON this command reads")


def test_a_symlink_to_dev_zero_is_refused_without_reading_it(case: Any) -> None:
    build, outputs, _ = case("gcp")
    outputs.symlink_to("/dev/zero")
    started = time.monotonic()
    refused(build, outputs, "", "not a regular file")
    assert time.monotonic() - started < 5


def test_an_oversized_file_is_refused(case: Any) -> None:
    build, outputs, _ = case("gcp")
    with outputs.open("wb") as fh:
        fh.truncate(16 * 1024 * 1024 + 1)
    refused(build, outputs, "", "larger than")


# ---- the real consumers read what is written from valid outputs --------------------------------------
def _written(case: Any, target: str) -> tuple[Path, dict[str, Any], Path]:
    build, outputs, data = case(target)
    outputs.write_text(json.dumps(data))
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 0, out + err
    return build / "ansible" / "inventory.stack.yml", data, build


def _tool(name: str) -> str:
    exe = VENV_BIN / name
    needs(missing_executables([str(exe)]), "the test extra installs ansible-core")
    return str(exe)


def test_ansible_reads_every_stack_value_unsafe(case: Any) -> None:
    inventory, data, _ = _written(case, "gcp")
    done = subprocess.run(
        [_tool("ansible-inventory"), "-i", str(inventory), "--list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    listed = json.loads(done.stdout)
    host = first_host(data)
    hv = listed["_meta"]["hostvars"][host]
    # the same strings: no value holds a brace, so none is tagged (ansible-core 2.19 reads a `!unsafe` scalar
    # as if it were unquoted: an address tagged so could come back as a number)
    assert hv["cb_mgmt_address"] == data["nodes"][host]["address"]
    assert hv["ansible_user"] == "cluster"
    assert isinstance(hv["ansible_ssh_common_args"], str)
    (mount,) = hv["shared_storage_managed_mounts"]
    assert mount["src"] == "10.9.0.4@tcp:/scratch" and mount["path"] == "/lustre"


def _debug(inventory: Path, host: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_HOME": str(tmp / "ansible-home")}
    return subprocess.run(
        [
            _tool("ansible"),
            "-i",
            str(inventory),
            host,
            "-c",
            "local",
            "-m",
            "debug",
            "-a",
            "var=cb_mgmt_address",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
        env=env,
    )


def test_a_payload_written_unsafe_never_runs_in_ansible(case: Any, tmp_path: Path) -> None:
    """Defence in depth: were a lookup ever to pass the syntax checks, the `!unsafe` tag keeps it text. The
    same inventory with the tag removed runs it (the canary appears): the test can fail."""
    from generator.deploy.stack_inventory import UNSAFE_TAG, Foreign, _dump

    inventory, data, _ = _written(case, "gcp")
    host = first_host(data)
    canary = tmp_path / "CANARY"
    payload = json.dumps(PAYLOAD.replace("CANARY", str(canary)))
    # the payload as the writer renders a stack value holding it, in the address's place
    rendered = _dump(Foreign(json.loads(payload)), 0)
    assert rendered == UNSAFE_TAG + payload
    text = inventory.read_text().replace(json.dumps(data["nodes"][host]["address"]), rendered, 1)
    inventory.write_text(text)
    shown = _debug(inventory, host, tmp_path)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "lookup('pipe'" in shown.stdout and not canary.exists()
    inventory.write_text(text.replace(UNSAFE_TAG + payload, payload))
    _debug(inventory, host, tmp_path)
    assert canary.exists()


def _ssh_g(args: list[str], host: str) -> dict[str, str]:
    needs(missing_executables(["ssh"]), "apt-get install openssh-client")
    done = subprocess.run(
        ["ssh", "-G", "-F", "/dev/null", *args, host], capture_output=True, text=True, timeout=30, check=True
    )
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)


def _run_proxy(proxy: str, host: str, tmp: Path) -> list[str]:
    """Run the ProxyCommand as ssh does (`exec` of it by the user's shell, %h/%p expanded) with a `gcloud`
    stub that records its arguments, one per line."""
    stub_dir = tmp / "bin"
    stub_dir.mkdir(exist_ok=True)
    record = tmp / "argv"
    stub = stub_dir / "gcloud"
    stub.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > {shlex.quote(str(record))}\n')
    stub.chmod(0o755)
    command = proxy.replace("%h", host).replace("%p", "22")
    env = {"PATH": f"{stub_dir}:/usr/bin:/bin", "HOME": str(tmp)}
    subprocess.run(["sh", "-c", f"exec {command}"], env=env, cwd=tmp, timeout=30, check=True)
    return record.read_text().splitlines()


def test_ssh_runs_the_iap_command_with_the_stack_values_as_plain_arguments(case: Any, tmp_path: Path) -> None:
    inventory, data, _ = _written(case, "gcp")
    host = first_host(data)
    hv = json.loads("\n".join(inventory.read_text().replace("!unsafe ", "").splitlines()[2:]))
    hv = next(g["hosts"][host] for n, g in hv["all"]["children"].items() if host in (g.get("hosts") or {}))
    ssh = _ssh_g(shlex.split(hv["ansible_ssh_common_args"]), hv["ansible_host"])
    expected = "gcloud compute start-iap-tunnel '%h' '%p' --listen-on-stdin --project=test-project --zone=europe-west1-b"
    assert ssh["proxycommand"] == expected
    argv = _run_proxy(ssh["proxycommand"], host, tmp_path)
    assert argv == [
        "compute",
        "start-iap-tunnel",
        host,
        "22",
        "--listen-on-stdin",
        "--project=test-project",
        "--zone=europe-west1-b",
    ]


def test_the_proxy_command_quotes_each_value_even_past_the_syntax_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: with the syntax check switched off, a `$(touch …)` zone reaches ssh and the shell
    as one quoted word: gcloud receives it literally and nothing runs."""
    import re

    from generator.deploy import access

    monkeypatch.setattr(access, "SYNTAX", {k: re.compile(r".*", re.S) for k in access.SYNTAX})
    canary = tmp_path / "CANARY"
    zone = f"europe-west1-b$(touch {canary})`touch {canary}`'\";touch {canary}"
    iap = {
        "via": "iap",
        "host": "name",
        "proxy_command": "gcloud compute start-iap-tunnel '%h' '%p' --listen-on-stdin --project={project} --zone={zone}",
        "ssh_options": {"ProxyUseFdpass": "no"},
    }
    reach = access.host_access(
        iap, {"address": "10.0.0.5", "zone": zone, "project": "test-project"}, "gpu001"
    )
    ssh = _ssh_g(shlex.split(reach.ssh_common_args or ""), reach.ansible_host)
    argv = _run_proxy(ssh["proxycommand"], "gpu001", tmp_path)
    assert argv[-1] == f"--zone={zone}" and not canary.exists()


# ---- the build's own files and the command's outputs ---------------------------------------------------
@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("pulumi/cluster.json", '{"blueprint": "x", "target"', "cluster.json:1"),
        ("pulumi/cluster.json", "[]", "a JSON object with `blueprint`"),
        ("ansible/inventory.yml", "all:\n  children: [broken\n", "inventory.yml:"),
        ("ansible/inventory.yml", "all: 3\n", "`all.children`"),
        # a self-referencing anchor recursed to exit 3; a 768-byte alias bomb took gigabytes
        (
            "ansible/inventory.yml",
            "all: &a\n  children:\n    loop:\n      vars: {me: *a}\n",
            "anchor or alias",
        ),
        (
            "ansible/inventory.yml",
            "all:\n  vars:\n    l0: &l0 [1, 1, 1]\n    l1: [*l0, *l0, *l0]\n  children: {}\n",
            "inventory.yml:3: ",
        ),
        ("ansible/inventory.yml", "all:\n  children: " + "[" * 100 + "]" * 100 + "\n", "deeper than 64"),
        # a scalar the safe loader cannot make as its type was an internal error (exit 3)
        (
            "ansible/inventory.yml",
            "all:\n  vars: {when: 2001-13-01}\n  children: {}\n",
            "cannot read as its type",
        ),
    ],
)
def test_a_build_file_cut_short_or_edited_is_located(case: Any, name: str, text: str, says: str) -> None:
    """JSONDecodeError, AttributeError and ParserError were internal errors (exit 3)."""
    build, outputs, data = case("aws")
    outputs.write_text(json.dumps(data))
    (build / name).write_text(text)
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2 and "internal error" not in err, err
    assert says in err and "regenerate" in err, err


@pytest.mark.parametrize("target", ["outputs", "ansible/inventory.yml", "manifest.json"])
def test_the_inventory_never_replaces_an_input(case: Any, target: str) -> None:
    """`-o outputs.json` replaced the stack outputs; `-o BUILD/ansible/inventory.yml` the generated inventory
    (the next `generate` then refused it as edited by hand), and `-o BUILD/manifest.json` the manifest (the
    next `generate` could not read it)."""
    build, outputs, data = case("aws")
    outputs.write_text(json.dumps(data))
    path = outputs if target == "outputs" else build / target
    before = path.read_bytes()
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs), "-o", str(path))
    assert code == 2 and "would replace" in err, out + err
    assert path.read_bytes() == before


@pytest.mark.parametrize("key", ["address", "instance"])
def test_two_hosts_at_one_address_or_instance_are_refused(case: Any, key: str) -> None:
    """Every host at one address sent the whole inventory to one machine; it was accepted."""
    build, outputs, data = case("aws")
    first, second = sorted(data["nodes"])[:2]
    data["nodes"][second][key] = data["nodes"][first][key]
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.nodes.{second}.{key}", f"also {first}'s {key}")


def test_an_address_other_than_the_planned_one_is_refused(tmp_path: Path) -> None:
    """MAAS hosts get the build's static management addresses: a stack naming other ones (another site's
    stack, or every node at 192.168.66.6) was accepted and every ansible_host pointed off the plan."""
    build = tmp_path / "maas"
    code, out, err = run_cli(
        "generate", str(EXAMPLES / "maas-onprem-h100.yaml"), "-o", str(build), "--only", "ansible,pulumi"
    )
    assert code == 0, out + err
    inventory = YAML(typ="safe", pure=True).load((build / "ansible" / "inventory.yml").read_text())
    planned = {
        h: hv["cb_mgmt_address"]
        for g, grp in inventory["all"]["children"].items()
        if g.startswith("pool_")
        for h, hv in grp["hosts"].items()
    }
    cluster = json.loads((build / "pulumi" / "cluster.json").read_text())
    outputs = tmp_path / "outputs.json"
    nodes = {h: {"address": a} for h, a in planned.items()}
    outputs.write_text(json.dumps({"blueprint": cluster["blueprint"], "nodes": nodes}))
    code, out, err = run_cli(
        "inventory", str(build), "--from-stack", str(outputs), "-o", str(tmp_path / "i.yml")
    )
    assert code == 0, out + err  # the planned addresses: accepted
    host = sorted(planned)[0]
    nodes[host] = {"address": "192.168.66.6"}
    outputs.write_text(json.dumps({"blueprint": cluster["blueprint"], "nodes": nodes}))
    refused(build, outputs, f": $.nodes.{host}.address", f"planned {planned[host]} for {host}")


def test_a_huge_unknown_key_is_named_in_a_line_of_bounded_length(case: Any) -> None:
    """An unknown key of 100,000 characters was echoed whole: a 100 KB error line."""
    build, outputs, data = case("gcp")
    key = "A" * 100_000
    data["nodes"][first_host(data)][key] = 1
    outputs.write_text(json.dumps(data))
    err = refused(build, outputs, f": $.nodes.{first_host(data)}.{'A' * 80}… (100,000 characters)")
    assert len(err) < 1_000, len(err)


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "0.0.0.0", "255.255.255.255", "224.0.0.1", "::1", "::ffff:127.0.0.1", "::ffff:0.0.0.0"],
)
def test_an_address_no_node_can_have_is_refused(case: Any, address: str) -> None:
    """127.0.0.1 became ansible_host with VPN or bastion access: `configure` ran on the controller."""
    build, outputs, data = case("aws")
    data["nodes"][first_host(data)]["address"] = address
    outputs.write_text(json.dumps(data))
    refused(build, outputs, f": $.nodes.{first_host(data)}.address", "no machine's address")


def test_a_host_name_address_that_means_this_machine_or_another_host_is_refused() -> None:
    """Azure exports computer names: `localhost`, or another inventory host's name, passed the
    one-address-per-host check (it compares the strings of addresses only)."""
    from generator.deploy.stack_inventory import StackInventoryError, _own_address
    from generator.deploy.stack_outputs import _ip_or_host_name

    for name in ("localhost", "LOCALHOST", "ip6-localhost", "localhost4", "localhost6.localdomain6"):
        with pytest.raises(ValueError, match="names the machine reading it"):
            _ip_or_host_name(name)
    assert _ip_or_host_name("gpu-u1-000000") == "gpu-u1-000000"
    seen = {"hosts": "gpu001 gpu002 gpu003"}
    for other in ("gpu003", "GPU003"):  # DNS names have no case
        with pytest.raises(StackInventoryError, match="is the name of another host of this inventory"):
            _own_address("outputs", "gpu002", None, {"address": other}, dict(seen))
    _own_address("outputs", "gpu002", None, {"address": "gpu002"}, dict(seen))  # its own name: the IAP path


def test_a_host_given_twice_is_refused(case: Any) -> None:
    """Two `gpu001` entries: json.loads kept the second and the first was silently dropped."""
    build, outputs, data = case("aws")
    host = first_host(data)
    text = json.dumps(data)
    entry = json.dumps({host: data["nodes"][host]})[1:-1]
    outputs.write_text(text.replace('"nodes": {', '"nodes": {' + entry + ", ", 1))
    refused(build, outputs, "", f"the key `{host}` is given twice in one object")
