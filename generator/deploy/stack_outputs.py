"""What `pulumi stack output --json` may hold, per target: a typed, bounded reader of a foreign file.

The stack outputs are written by the generated Pulumi programs (templates/pulumi/<target>/__main__.py), but
the file `blueprint inventory --from-stack` reads is whatever the operator hands it: a compromised state
backend or a hand-edited file must not reach Ansible or a shell. Each target's model accepts exactly the
node fields its program exports (`nodes`, `storage`, `login_user`, `blueprint`), each checked against the
provider's documented syntax, so no accepted value can hold template (`{{`, `{%`), shell (`$`, `` ` ``,
`;`, quotes, spaces) or ssh token (`%`) syntax. Unknown top-level outputs (vpc_id, resource_group, a user's
own exports) are never read and are ignored; unknown node or storage fields are refused (the outputs are not
from this build's program). Every refusal is a :class:`ForeignInputError` at its JSON path (exit 2).

Decisions stay the blueprint's: a file system's `protocol` and `mount` come from the build (cluster.json);
a stack value that differs is refused at its path (stack_inventory.managed_mounts), and the stack's mount is
taken only where the build leaves the mount point to the provider.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from blueprints.models.deployment import GCP_PROJECT
from generator.deploy.targets import cloud_target  # each target's record names its outputs model
from generator.foreign import (
    THIS_MACHINE,
    ByteBudget,
    ForeignInputError,
    host_name_problem,
    parse_json,
    pydantic_refusal,
    read_foreign_text,
)

# `pulumi stack output --json` of a 100k-node cluster is ~20 MB at most with every field our programs export;
# the largest real build (examples/) writes a few hundred kB.
MAX_OUTPUTS_BYTES = 16 * 1024 * 1024
# nodes -> host -> fabric_addresses -> netdev is the deepest our programs write (4 levels)
MAX_OUTPUTS_DEPTH = 8

# --------------------------------------------------------------------------------------------- syntaxes
# Amazon EC2 User Guide, "Resource IDs" (resource-ids.html): `i-` then 8 (before 2016) or 17 characters,
# lower-case hexadecimal (example i-1234567890abcdef0).
AWS_INSTANCE_ID = re.compile(r"i-(?:[0-9a-f]{8}|[0-9a-f]{17})")
# Google Cloud zones (cloud.google.com/compute/docs/regions-zones; google-cloud-pubsublite CloudZone.parse:
# "<location>-<direction><number>-<letter>", e.g. us-central1-a, europe-west1-b).
GCP_ZONE = re.compile(r"[a-z]+-[a-z]+[0-9]+-[a-z]")
# GCP_PROJECT (imported above) is the blueprint's own project-id syntax, one pattern for both readers.
# OCI "Resource Identifiers" (docs.oracle.com/iaas/Content/General/Concepts/identifiers.htm):
# ocid1.<RESOURCE TYPE>.<REALM>.[REGION][.FUTURE USE].<UNIQUE ID>; region and future use may be empty.
OCID = re.compile(r"ocid1\.[a-z0-9]+\.[a-z0-9]+\.[a-z0-9-]*(?:\.[a-z0-9-]*)?\.[A-Za-z0-9]+")
# useradd(8) (shadow-utils): "begin with a lower case letter or an underscore, followed by lower case
# letters, digits, underscores, or dashes"; "up to 32 characters long". Inside Azure's adminUsername limit
# (Linux: 1-64 characters, OSProfile reference) and GCP's sshUser (the metadata key's user, a Linux account).
LOGIN_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
# RFC 1123 section 2.1 host name: dot-separated labels of letters, digits, hyphens; 253 characters in all.
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
DNS_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_IPV4 = r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}"
_HOST = rf"(?:{_IPV4}|{_LABEL}(?:\.{_LABEL})*)"
# nfs(5): the device is `host:/path`; the exports our programs create (EFS `/`, Filestore `/share`, Azure
# Files `/account/share`, OCI File Storage `/name`) use only letters, digits, `.`, `_` and `-`.
NFS_SOURCE = re.compile(rf"{_HOST}:/[A-Za-z0-9._/-]{{0,200}}")
# mount.lustre(8): `<mgsspec>:/<fsname>`, mgsspec := mgsnode[:mgsnode], mgsnode := mgsnid[,mgsnid]; a NID is
# `address@<network type><number>` (tcp, tcp0, o2ib1). The file system name is at most 8 characters (Lustre
# wiki, "Working with File System Labels"); FSx MountName pattern `[A-Za-z0-9_-]{1,8}`
# (SageMaker API ClusterFsxLustreConfig).
_NID = rf"{_HOST}@[a-z]+[0-9]*"
_MGS_NODE = rf"{_NID}(?:,{_NID})*"
LUSTRE_SOURCE = re.compile(rf"{_MGS_NODE}(?::{_MGS_NODE})*:/[A-Za-z0-9_-]{{1,8}}")
# the blueprint's own mount point syntax (blueprints/models/base.py PathStr), without `..` components
MOUNT_PATH = re.compile(r"/[A-Za-z0-9._/-]{0,200}")
# Printable text for the fields nothing reads (pool, rack, scale set): no control characters, bounded.
_TEXT = re.compile(r"[^\x00-\x1f\x7f]{0,256}")

SOURCE_SYNTAX = {"nfs": NFS_SOURCE, "lustre": LUSTRE_SOURCE}
SOURCE_FORM = {"nfs": "host:/path (nfs(5))", "lustre": "mgsnid@net:/fsname (mount.lustre(8))"}


def _matching(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if len(value) > 300 or not pattern.fullmatch(value):
            raise ValueError(f"not {what}")
        return value

    return AfterValidator(check)


# Dotted-quad IPv4 with no leading zeros: already canonical, accepted without building an ipaddress object
# (the common case; 100k nodes cost 1 s less).
_CANONICAL_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
)
# A label that starts with a letter is neither all digits, nor `0x…`, nor an address literal (no `.`/`:`):
# host_name_problem() would accept it, without its costlier address parse.
_LETTER_LABEL = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _ip(value: str) -> str:
    """An IPv4/IPv6 address, written back in its canonical form (no zone index: `%` is an ssh token), that a
    machine of the cluster can have: not loopback, unspecified, multicast or the broadcast address (with VPN
    or bastion access the address becomes ansible_host, and 127.0.0.1 ran `configure` on the controller)."""
    if "%" in value or len(value) > 45:
        raise ValueError("not an IP address")
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        raise ValueError("not an IP address") from None
    # an IPv6 form of an IPv4 address (::ffff:127.0.0.1) reaches that address: judged as it
    inner = getattr(address, "ipv4_mapped", None) or getattr(address, "sixtofour", None) or address
    for a in {address, inner}:
        if a.is_loopback or a.is_unspecified or a.is_multicast or str(a) == _BROADCAST:
            raise ValueError(
                "a loopback, unspecified, multicast or broadcast address is no machine's address"
            )
    return value if _CANONICAL_IPV4.fullmatch(value) else str(address)


_BROADCAST = "255.255.255.255"
_NO_MACHINE = "a loopback, unspecified, multicast or broadcast address is no machine's address"


def _ip_interface(value: str) -> str:
    """An address with its prefix length (``10.100.0.10/19``, as the MAAS program exports a fabric port's),
    written back in its canonical form; a bare address is taken as a host prefix."""
    if "%" in value or len(value) > 49:
        raise ValueError("not an IP address with a prefix length")
    try:
        return str(ipaddress.ip_interface(value))
    except ValueError:
        raise ValueError("not an IP address with a prefix length") from None


def _ip_or_host_name(value: str) -> str:
    """Azure exports the VM's computer name (resolved by the VNet's DNS) where others export the address."""
    if value.lower() in THIS_MACHINE:
        raise ValueError(f"`{value}` names the machine reading it, not a node")
    if host_name_problem(value) is None:
        return value
    try:
        return _ip(value)
    except ValueError:
        raise ValueError("not an IP address or a host name (RFC 1123 label)") from None


def _host_key(value: str) -> str:
    if _LETTER_LABEL.fullmatch(value):
        return value
    problem = host_name_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _mount(value: str) -> str:
    if not MOUNT_PATH.fullmatch(value) or ".." in value.split("/"):
        raise ValueError("not an absolute mount path of letters, digits, `.`, `_`, `-` and `/`")
    return value


IpAddress = Annotated[str, AfterValidator(_ip)]
IpInterface = Annotated[str, AfterValidator(_ip_interface)]
IpOrHostName = Annotated[str, AfterValidator(_ip_or_host_name)]
HostName = Annotated[str, AfterValidator(_host_key)]
AwsInstanceId = Annotated[str, _matching(AWS_INSTANCE_ID, "an EC2 instance id (i- and 17 hex digits)")]
GcpZone = Annotated[str, _matching(GCP_ZONE, "a Google Cloud zone name (e.g. us-central1-a)")]
GcpProject = Annotated[str, _matching(GCP_PROJECT, "a Google Cloud project ID (6-30 of a-z, 0-9, -)")]
Ocid = Annotated[str, _matching(OCID, "an OCI OCID (ocid1.instance.<realm>.<region>.<id>)")]
LoginUser = Annotated[str, _matching(LOGIN_USER, "a Linux user name ([a-z_][a-z0-9_-]*, at most 32)")]
DnsName = Annotated[str, _matching(DNS_NAME, "a DNS name")]
Text = Annotated[str, _matching(_TEXT, "printable text of at most 256 characters")]
MountPath = Annotated[str, AfterValidator(_mount)]
Source = Annotated[
    str, _matching(re.compile(f"{NFS_SOURCE.pattern}|{LUSTRE_SOURCE.pattern}"), "a mount source")
]


# defer_build: the target records (generator/deploy/targets/) name these models, and rule DEP005 reads the
# records on every `validate`; Pydantic then builds each validator on its first use (--from-stack), not at
# import (~20 ms of CPU on the benchmark machine, benchmarks/startup.py, issue 32).
class _Strict(BaseModel):
    # strict: a string is a string, an integer an integer (no "1" -> 1, no 1 -> "1")
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


# Counters our programs export (scalable unit, rack, scale-set instance): never used, but bounded.
Count = Annotated[int, Field(ge=0, le=1_000_000)]


class _Node(_Strict):
    address: IpAddress
    pool: Text | None = None
    su: Count | None = None
    rack: Text | Count | None = None


class AwsNode(_Node):
    instance: AwsInstanceId | None = None  # the access path (SSM) requires it: AccessError names the node


class GcpNode(_Node):
    zone: GcpZone | None = None  # the IAP ProxyCommand requires them
    project: GcpProject | None = None


class AzureNode(_Node):
    address: IpOrHostName
    scale_set: Text | None = None
    instance_id: Count | None = None


class OciNode(_Node):
    instance: Ocid | None = None


class MaasNode(_Node):
    fqdn: DnsName | None = None
    fabric_addresses: dict[Text, IpInterface] = {}  # netdev -> address/prefix (MAAS interface links)


class StorageOutput(_Strict):
    protocol: Literal["lustre", "nfs"]
    # Azure Managed Lustre exports None until the service reports its MGS address
    source: Source | None = None
    mount: MountPath | None = None


class StackOutputs(BaseModel):
    """The outputs every program exports; `nodes` is typed per target by the subclasses."""

    # other outputs (vpc_id, resource_group, management_subnet, a user's own) are never read
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, defer_build=True)
    blueprint: Annotated[str, _matching(re.compile(r"[A-Za-z0-9._-]{1,128}"), "a blueprint name")] | None = (
        None
    )
    # the user the program installed the SSH key for (Azure adminUsername, GCP sshUser); AWS and OCI keep
    # the image's default user, which the stack does not report
    login_user: LoginUser | None = None
    nodes: Mapping[HostName, _Node]  # each target's model narrows the node type
    storage: dict[Annotated[str, _matching(_TEXT, "a storage name")], StorageOutput] = {}


class AwsOutputs(StackOutputs):
    nodes: dict[HostName, AwsNode]


class GcpOutputs(StackOutputs):
    nodes: dict[HostName, GcpNode]


class AzureOutputs(StackOutputs):
    nodes: dict[HostName, AzureNode]


class OciOutputs(StackOutputs):
    nodes: dict[HostName, OciNode]


class MaasOutputs(StackOutputs):
    nodes: dict[HostName, MaasNode]


def where_of(path: str | Path) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def read_stack_outputs(path: str | Path, target: str, budget: ByteBudget | None = None) -> StackOutputs:
    """The stack outputs in `path` (`-`: standard input) as the `target` program exports them."""
    where = where_of(path)
    record = cloud_target(target)
    model = record.stack_outputs if record is not None else None
    if model is None:
        raise ForeignInputError(where, f"the build's target `{target}` has no Pulumi stack outputs to read")
    text = read_foreign_text(path, MAX_OUTPUTS_BYTES, budget or ByteBudget())
    raw: Any = parse_json(text, where, MAX_OUTPUTS_DEPTH)
    if not isinstance(raw, dict) or "nodes" not in raw:
        raise ForeignInputError(
            f"{where}: $", "no `nodes` object: give the output of `pulumi stack output --json`"
        )
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise pydantic_refusal(where, [_key_error(e) for e in exc.errors()]) from None


def _key_error(error: Any) -> Any:
    """Pydantic locates a refused mapping key as `…, key, "[key]"`: say it is the name that is refused."""
    loc = tuple(error["loc"])
    if loc and loc[-1] == "[key]":
        return {**error, "loc": loc[:-1], "msg": f"this name: {error['msg']}"}
    return error


def source_problem(protocol: str, source: str) -> str | None:
    """Why `source` is not a `protocol` mount source (None when it is)."""
    if SOURCE_SYNTAX[protocol].fullmatch(source):
        return None
    return f"not a {protocol} mount source: expected {SOURCE_FORM[protocol]}"
