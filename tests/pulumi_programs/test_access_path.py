"""The access path per target: `blueprint inventory --from-stack` writes what reaches the private nodes.

Each cloud example's program runs under Pulumi's mocks; the inventory written from its outputs is read by
the real `ansible-inventory --list`, and each host's ssh arguments are handed to the real OpenSSH client
(`ssh -G`, which prints the configuration it would use without connecting). The ProxyCommand it reports
must be the vendor's command line, kept here as test data with its source.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from real_tools import missing_executables, needs
from test_stack_inventory import _load, stack_build

pytestmark = pytest.mark.pulumi

# AWS Systems Manager User Guide, "Allow and control permissions for SSH connections through Session
# Manager" (session-manager-getting-started-enable-ssh-connections.html), Linux and macOS ~/.ssh/config:
#   host i-* mi-*
#       ProxyCommand sh -c "aws ssm start-session --target %h --document-name AWS-StartSSHSession --parameters 'portNumber=%p'"
SSM_PROXY = (
    'sh -c "aws ssm start-session --target %h --document-name AWS-StartSSHSession '
    "--parameters 'portNumber=%p'\""
)
# Google Cloud SDK googlecloudsdk/command_lib/compute/ssh_utils.py, _BuildIapTunnelProxyCommandArgs: what
# `gcloud compute ssh --tunnel-through-iap` passes to ssh (OpenSSH suite; gcloud on PATH).
IAP_PROXY = "gcloud compute start-iap-tunnel '%h' '%p' --listen-on-stdin --project={project} --zone={zone}"
IAP_OPTIONS = {"proxyusefdpass": "no"}


def _inventory_hosts(path: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    """hostvars as the real ansible-inventory resolves them."""
    local = Path(sys.executable).parent / "ansible-inventory"  # the test extra's, beside this Python
    exe = str(local) if local.exists() else "ansible-inventory"
    needs(missing_executables([exe]), "the test extra installs ansible-core")
    done = subprocess.run(
        [exe, "-i", str(path), "--list"], capture_output=True, text=True, timeout=120, check=True
    )
    return _plain(json.loads(done.stdout)["_meta"]["hostvars"])  # type: ignore[no-any-return]


def _plain(value: object) -> object:
    """ansible-inventory prints a `!unsafe` value (every value taken from the stack outputs) as
    {"__ansible_unsafe": value} (ansible.parsing.ajson.AnsibleJSONEncoder): the value it marks."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _ssh_config(hv: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """What OpenSSH makes of the host's ansible_ssh_common_args (split as Ansible splits them)."""
    needs(missing_executables(["ssh"]), "apt-get install openssh-client")
    args = shlex.split(hv.get("ansible_ssh_common_args", ""))
    done = subprocess.run(
        ["ssh", "-G", "-F", "/dev/null", *args, hv["ansible_host"]],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)


def _stack_inventory(example: str, tmp: Path, blueprint: Path | None = None) -> tuple[Path, dict]:  # type: ignore[type-arg]
    build, outputs, raw = stack_build(example, tmp, blueprint)
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 0, out + err
    return build / "ansible" / "inventory.stack.yml", raw


def test_aws_nodes_are_reached_through_session_manager(tmp_path: Path) -> None:
    inventory, raw = _stack_inventory("aws-p5-efa", tmp_path)
    hostvars = _inventory_hosts(inventory)
    assert set(hostvars) == set(raw["nodes"])
    for host, hv in hostvars.items():
        node = raw["nodes"][host]
        assert hv["ansible_host"] == node["instance"]  # %h is the instance id
        assert hv["cb_mgmt_address"] == node["address"]
        ssh = _ssh_config(hv)
        assert ssh["hostname"] == node["instance"]
        assert ssh["proxycommand"] == SSM_PROXY


def test_aws_program_gives_the_instances_the_ssm_instance_profile(tmp_path: Path) -> None:
    from pulumi_cases import generate, run_target

    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    attachments = [r for r in run.resources if r.type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment"]
    # AWS managed policy reference: AmazonSSMManagedInstanceCore
    assert [a.inputs["policyArn"] for a in attachments] == [
        "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    ]
    templates = [r for r in run.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert templates and all(t.inputs.get("iamInstanceProfile", {}).get("arn") for t in templates)


def test_gcp_nodes_are_reached_through_iap(tmp_path: Path) -> None:
    inventory, raw = _stack_inventory("gcp-a3-ultra", tmp_path)
    for host, hv in _inventory_hosts(inventory).items():
        node = raw["nodes"][host]
        assert hv["ansible_host"] == host  # the instance name: the program names instances by hostname
        ssh = _ssh_config(hv)
        assert ssh["proxycommand"] == IAP_PROXY.format(project=node["project"], zone=node["zone"])
        for option, value in IAP_OPTIONS.items():
            assert ssh[option] == value


def _variant(example: str, tmp: Path, access: dict | None) -> Path:  # type: ignore[type-arg]
    data = _load(EXAMPLES / f"{example}.yaml")
    data["deployment"]["cloud"]["access"] = access
    path = tmp / f"{example}-access.yaml"
    path.write_text(json.dumps(data))
    return path


def test_a_declared_bastion_is_the_jump_host(tmp_path: Path) -> None:
    blueprint = _variant(
        "azure-ndh100v5", tmp_path, {"via": "bastion", "bastion": "ops@jump.example.org:2222"}
    )
    inventory, raw = _stack_inventory("azure-ndh100v5", tmp_path, blueprint)
    for host, hv in _inventory_hosts(inventory).items():
        assert hv["ansible_host"] == raw["nodes"][host]["address"]
        assert _ssh_config(hv)["proxyjump"] == "ops@jump.example.org:2222"  # ssh_config(5) ProxyJump


@pytest.mark.parametrize("example,user", [("azure-ndh100v5", "azureuser"), ("gcp-a3-ultra", "cluster")])
def test_the_login_user_is_the_one_the_program_installed_the_key_for(
    example: str, user: str, tmp_path: Path
) -> None:
    """Azure's adminUsername and GCP's sshUser (the generated stack configuration) reach ansible_user."""
    config = (tmp_path / "build").joinpath
    inventory, raw = _stack_inventory(example, tmp_path)
    key = "adminUsername" if example.startswith("azure") else "sshUser"
    assert f'{key}: "{user}"' in next(config("pulumi").glob("Pulumi.*.yaml")).read_text().replace(
        f"{example}:", ""
    )
    assert raw["login_user"] == user
    for hv in _inventory_hosts(inventory).values():
        assert hv["ansible_user"] == user


def test_vpn_connects_directly(tmp_path: Path) -> None:
    inventory, raw = _stack_inventory("oci-bm-h100", tmp_path)  # OCI: no declared path, the default
    code, out, err = run_cli(
        "inventory", str(tmp_path / "build"), "--from-stack", str(tmp_path / "outputs.json")
    )
    assert code == 0 and "reached at their private addresses" in out + err
    for host, hv in _inventory_hosts(inventory).items():
        assert hv["ansible_host"] == raw["nodes"][host]["address"]
        assert "ansible_ssh_common_args" not in hv
        assert "proxycommand" not in _ssh_config(hv)


@pytest.mark.parametrize(
    "example,access,message",
    [
        ("azure-ndh100v5", {"via": "ssm"}, "access via ssm works on target aws only"),
        ("aws-p5-efa", {"via": "iap"}, "access via iap works on target gcp only"),
        ("oci-bm-h100", {"via": "bastion"}, "`bastion: [user@]host[:port]` goes with `via: bastion`"),
        ("oci-bm-h100", {"via": "bastion", "bastion": "a b"}, "bastion"),
        # OpenSSH refuses the whole ProxyJump: "Invalid ProxyJump"
        ("oci-bm-h100", {"via": "bastion", "bastion": "ops@jump.example.org:99999"}, "99999 is not a TCP port"),
        ("oci-bm-h100", {"via": "bastion", "bastion": "jump.example.org:0"}, "0 is not a TCP port"),
    ],
)
def test_an_impossible_access_path_is_a_located_error(
    example: str,
    access: dict,
    message: str,
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    code, out, err = run_cli("validate", str(_variant(example, tmp_path, access)))
    assert code == 2 and message in out + err
    assert f"{example}-access.yaml:" in out + err
