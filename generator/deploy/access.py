"""How the operator's Ansible controller reaches nodes that have only private addresses.

`deployment.cloud.access` chooses the path (default: AWS Session Manager on AWS, IAP TCP forwarding on
Google Cloud, a direct connection — the operator's VPN — elsewhere); the vendors' ProxyCommands live in the
catalogue (data/cloud.yaml `access`, with their sources). The generator writes the choice into the build
(pulumi/cluster.json `access`); `blueprint inventory --from-stack` turns it into each host's
`ansible_host` and `ansible_ssh_common_args` once the stack has given the instance ids, names and zones.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.deploy.stack_outputs import AWS_INSTANCE_ID, GCP_PROJECT, GCP_ZONE, OCID
from generator.deploy.targets import cloud_target
from generator.foreign import host_name_problem

if TYPE_CHECKING:
    from generator.resolve import ResolvedCluster


class AccessError(ValueError):
    """The stack outputs lack what the access path needs, or hold a value its syntax refuses: `field` is the
    node's output at fault (the caller locates it in the file: `$.nodes["gpu001"].zone`)."""

    def __init__(self, host: str, field: str, message: str) -> None:
        super().__init__(f"node `{host}` {field}: {message}")
        self.host = host
        self.field = field
        self.message = message


@dataclass(frozen=True)
class HostAccess:
    """What Ansible connects to for one node, and the ssh options that get it there."""

    ansible_host: str
    ssh_common_args: str | None


def default_via(target: str) -> str:
    """The path a target takes when the blueprint declares none (its record's `default_access`: the
    provider's own private-node access that its program sets up, else a direct connection)."""
    record = cloud_target(target)
    return record.default_access if record is not None else "vpn"


def access_data(cluster: ResolvedCluster) -> dict[str, Any]:
    """The build's record of the access path (pulumi/cluster.json `access`)."""
    cloud = cluster.blueprint.deployment.cloud
    declared = cloud.access if cloud is not None else None
    via = declared.via if declared is not None else default_via(cluster.target)
    out: dict[str, Any] = {"via": via}
    if declared is not None and declared.bastion is not None:
        out["bastion"] = declared.bastion
    path = cluster.catalog.access.get(via)
    if path is not None:
        out.update(host=path.host, proxy_command=path.proxy_command, ssh_options=dict(path.ssh_options))
    return out


# What a value substituted into the ssh command line must be: the provider's documented syntax
# (generator/deploy/stack_outputs.py cites each), which admits no shell, ssh-token (`%`) or template syntax.
SYNTAX = {
    "zone": GCP_ZONE,
    "project": GCP_PROJECT,
    "instance": re.compile(f"{AWS_INSTANCE_ID.pattern}|{OCID.pattern}"),
}


_PLACEHOLDER = re.compile(r"\{(project|zone)\}")


def _node_value(node: dict[str, Any], key: str, host: str) -> str:
    """The node's `key` output, checked against its syntax here too (the command line is built from it)."""
    value = node.get(key)
    if not isinstance(value, str) or not value:
        raise AccessError(host, key, "missing from the stack outputs (needed to reach the node)")
    pattern = SYNTAX.get(key)
    if pattern is not None and not pattern.fullmatch(value):
        raise AccessError(host, key, f"{value!r} is not a valid {key}: refused in an ssh command line")
    return value


def _address(node: dict[str, Any], host: str) -> str:
    value = _node_value(node, "address", host)
    if host_name_problem(value) is not None:
        try:
            value = str(ipaddress.ip_address(value))
        except ValueError:
            raise AccessError(
                host, "address", f"{value!r} is neither an IP address nor a host name"
            ) from None
    if "%" in value:  # an IPv6 zone index: `%` is an ssh token
        raise AccessError(host, "address", f"{value!r}: no zone index")
    return value


def _proxy_args(access: dict[str, Any], node: dict[str, Any], host: str) -> list[str]:
    """`-o ProxyCommand=…` with the stack's values filled in, then the vendor's further options. The
    ProxyCommand is run by the user's shell (ssh_config(5)): each value, already checked against the
    provider's syntax (no `%`, which ssh expands as a token before the shell runs), is substituted
    shell-quoted: OpenSSH runs `$SHELL -c "exec <ProxyCommand>"` (sshconnect.c, ssh_proxy_connect)."""
    # one pass: a substituted value is never scanned for placeholders again
    command = _PLACEHOLDER.sub(
        lambda m: shlex.quote(_node_value(node, m.group(1), host)), str(access["proxy_command"])
    )
    args = ["-o", f"ProxyCommand={command}"]
    for option, value in sorted((access.get("ssh_options") or {}).items()):
        args += ["-o", f"{option}={value}"]
    return args


def host_access(access: dict[str, Any], node: dict[str, Any], host: str) -> HostAccess:
    """Where ssh connects for `host` and how: the instance id (SSM) or name (IAP) as %h behind the
    vendor's ProxyCommand, the address behind a ProxyJump bastion, or the address directly (VPN).
    Ansible splits ansible_ssh_common_args with shlex, so the arguments are joined with shlex quoting."""
    address = _address(node, host)
    via = access.get("via", "vpn")
    if via == "bastion":
        return HostAccess(address, shlex.join(["-o", f"ProxyJump={access['bastion']}"]))
    if "proxy_command" not in access:
        return HostAccess(address, None)
    target = _node_value(node, "instance", host) if access["host"] == "instance" else host
    return HostAccess(target, shlex.join(_proxy_args(access, node, host)))
