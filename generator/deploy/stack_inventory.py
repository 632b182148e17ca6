"""The Ansible inventory from what `pulumi up` created: `pulumi stack output --json` joined to the build.

Reads the generated inventory (groups, host variables, the planned addresses), the project's cluster.json
(managed file systems with the vendor's mount options and client repositories, the target, the access path)
and the stack outputs, through the target's typed model (generator/deploy/stack_outputs.py: addresses are
IP addresses, ids/zones/projects/users match the provider's syntax). Writes the same inventory with every
host's `cb_mgmt_address` set to the address the provider gave it, `ansible_host` and
`ansible_ssh_common_args` to the access path of the build (generator/deploy/access.py), and
`shared_storage_managed_mounts` (plus the Lustre client repository a service publishes) in `all.vars`.

The stack only fills what the blueprint left to the provider (addresses, instance ids, the mount source,
the login user); the blueprint keeps its decisions (protocol, mount point): a stack value that contradicts
one is refused at its JSON path. Hosts missing from the stack, or nodes the blueprint does not know, are
errors too: the two halves must agree. Every value taken from the stack that holds a brace (the start of every
Jinja delimiter) is written `!unsafe`, so Ansible never templates it, on top of its syntax admitting no
`{{`/`{%`; the others are double-quoted strings, which Ansible never templates either (generator/yamltext.py:
ansible-core 2.19 reads an `!unsafe` scalar as if it were unquoted). The one exception is template text the
build writes on purpose, the facts of a Lustre client repository (`Templated`): written untagged, so that
Ansible fills them in on each host.
"""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from generator.deploy.access import AccessError, host_access
from generator.deploy.stack_outputs import StackOutputs, read_stack_outputs, source_problem, where_of
from generator.foreign import (
    ByteBudget,
    ForeignInputError,
    json_path,
    parse_json,
    parse_yaml,
    pydantic_refusal,
    read_foreign_text,
)
from generator.safetext import one_line
from generator.yamltext import (
    JINJA2_OVERRIDE,
    PROVEN_PLAIN,
    TEMPLATE_MARKS,
    UNSAFE,
    ansible_scalar,
    double_quoted,
)

UNSAFE_TAG = UNSAFE  # the one YAML writer's Ansible tag (generator/yamltext.py says why)


class Foreign(str):
    """A string taken from the stack outputs: rendered `!unsafe` where it holds a brace."""


class Templated(str):
    """A string the build templated on purpose (lustre_client_vars): written untagged, so that Ansible fills
    in the facts it names, when FACTS are its only template text; `!unsafe` like any other otherwise."""


# the facts lustre_client_vars substitutes (gathered on each host: the vendor's repository per OS release and
# its client package per kernel)
FACTS = ("{{ ansible_distribution_release }}", "{{ ansible_kernel }}")


def _only_facts(value: str) -> bool:
    """Whether FACTS are the only template text of `value` (a hand-edited cluster.json may hold more)."""
    rest = value
    for fact in FACTS:
        rest = rest.replace(fact, "")
    return "{" not in rest and "}" not in rest and JINJA2_OVERRIDE not in rest


class StackInventoryError(ForeignInputError):
    """The stack outputs do not fit the build (located at the outputs' JSON path; exit 2)."""


def build_target(build: Path) -> str:
    return str(_cluster_json(build).get("target", ""))


def read_outputs(path: str | Path, target: str, budget: ByteBudget | None = None) -> StackOutputs:
    """The stack outputs, typed for the build's target (bounded read, located refusals)."""
    return read_stack_outputs(path, target, budget)


# what `generate` writes there: the 100k-GPU build's inventory.yml is ~30 MB
BUILD_FILE_LIMIT = 256 * 1024 * 1024
_REGENERATE = "not what `blueprint generate` wrote (edited or cut short?): regenerate the build"


class _Written(BaseModel):
    """What this module reads of a file `generate` writes: the types it wrote them with (a hand edit to
    `"storage": "x"` or an `access` without its bastion was a KeyError or TypeError, exit 3)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, defer_build=True)


class _Client(_Written):
    repo: str
    key_url: str
    suite: str
    components: list[str]
    packages: list[str] = []


class _Storage(_Written):
    name: Annotated[str, Field(min_length=1)]
    protocol: Literal["lustre", "nfs"] | None = None
    mount: str | None = None
    mount_options: str | None = None
    client: _Client | None = None


class _Access(_Written):
    via: str = "vpn"
    bastion: str | None = None
    host: Literal["instance", "name"] | None = None
    proxy_command: str | None = None
    ssh_options: dict[str, str] = {}

    @model_validator(mode="after")
    def _complete(self) -> _Access:
        # what generator/deploy/access.py host_access reads for each path
        if self.via == "bastion" and not self.bastion:
            raise ValueError("`via: bastion` without the `bastion` host")
        if self.proxy_command is not None and self.host is None:
            raise ValueError("a `proxy_command` without the `host` it connects to")
        return self


class _ClusterJson(_Written):
    blueprint: str
    target: str = ""
    access: _Access | None = None
    storage: list[_Storage] = []


def _cluster_json(build: Path) -> dict[str, Any]:
    """The build's pulumi/cluster.json; a located refusal when it is not what `generate` wrote there (no JSON
    object with ``blueprint``, truncated, `[]`, a value of another type: JSONDecodeError, AttributeError and
    KeyError were internal errors, exit 3)."""
    path = build / "pulumi" / "cluster.json"
    text = read_foreign_text(path, BUILD_FILE_LIMIT)
    try:
        data = parse_json(text, str(path))  # depth-bounded: 100,000 nested brackets were a RecursionError
    except ForeignInputError as exc:
        raise ForeignInputError(exc.where, f"{_REGENERATE}: {one_line(exc.message)[:120]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("blueprint"), str):
        raise ForeignInputError(f"{path}:1", f"{_REGENERATE}: a JSON object with `blueprint` is expected")
    try:
        _ClusterJson.model_validate(data)
    except ValidationError as exc:
        refusal = pydantic_refusal(str(path), exc.errors())
        said = re.sub(r" or instance of \w+", "", refusal.message)  # the model's name says nothing to a user
        raise ForeignInputError(refusal.where, f"{_REGENERATE}: {said}") from None
    return data


def build_access_via(build: Path) -> str:
    """The build's access path (pulumi/cluster.json `access`), `vpn` for builds without one."""
    return str((_cluster_json(build).get("access") or {}).get("via", "vpn"))


def _build_inventory_yml(build: Path) -> dict[str, Any]:
    """The build's ansible/inventory.yml; a located refusal when it is no YAML with ``all.children`` (a
    ParserError was an internal error, exit 3)."""
    path = build / "ansible" / "inventory.yml"
    text = read_foreign_text(path, BUILD_FILE_LIMIT)
    try:
        data = parse_yaml(text, str(path))
    except ForeignInputError as exc:
        raise ForeignInputError(exc.where, f"{_REGENERATE}: {exc.message}") from None
    top = data.get("all") if isinstance(data, dict) else None
    children = top.get("children") if isinstance(top, dict) else None
    if not isinstance(children, dict):
        raise ForeignInputError(f"{path}:1", f"{_REGENERATE}: `all.children` is expected")
    if not isinstance(top, dict) or not isinstance(top.get("vars") or {}, dict):
        raise ForeignInputError(f"{path}:1", f"{_REGENERATE}: `all.vars` is expected to be a mapping")
    for name, group in children.items():
        if not isinstance(group, dict) or not isinstance(group.get("hosts") or {}, dict):
            raise ForeignInputError(f"{path}:1", f"{_REGENERATE}: group `{one_line(str(name))[:80]}`")
        for host, hv in (group.get("hosts") or {}).items():
            if hv is not None and not isinstance(hv, dict):  # the generator writes each host's variables
                raise ForeignInputError(
                    f"{path}:1",
                    f"{_REGENERATE}: host `{one_line(str(host))[:80]}` of group `{one_line(str(name))[:80]}` "
                    "holds no mapping of variables",
                )
    return data


def _hosts(inventory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Host -> its variables, from the pool groups (where the generator writes host variables)."""
    out: dict[str, dict[str, Any]] = {}
    for name, group in inventory["all"]["children"].items():
        if name.startswith("pool_"):
            for host, hv in (group.get("hosts") or {}).items():
                out[host] = hv if hv is not None else {}
                group["hosts"][host] = out[host]
    return out


def _at(where: str, *loc: str) -> str:
    return f"{where}: {json_path(list(loc))}"


def _decided(where: str, name: str, key: str, blueprint_value: Any, stack_value: Any) -> Any:
    """The blueprint's value; the stack's only where the blueprint left it open. A stack value that differs
    from the blueprint's is refused: outputs of another build, or edited to move data elsewhere."""
    if blueprint_value is None:
        return stack_value
    if stack_value is not None and stack_value != blueprint_value:
        raise StackInventoryError(
            _at(where, "storage", name, key),
            f"the blueprint decides `{key}` of `{name}` ({blueprint_value}); the stack says {stack_value}: "
            "the outputs are not this build's (regenerate, `pulumi up`, export the outputs again)",
        )
    return blueprint_value


def _mount(where: str, spec: dict[str, Any], outputs: StackOutputs) -> dict[str, Any]:
    name = spec["name"]
    out = outputs.storage.get(name)
    if out is None or not out.source:
        raise StackInventoryError(_at(where, "storage", name, "source"), f"storage `{name}` has no source")
    kind = _decided(where, name, "protocol", spec.get("protocol"), out.protocol)
    problem = source_problem(kind, out.source)
    if problem is not None:
        raise StackInventoryError(_at(where, "storage", name, "source"), problem)
    path = _decided(where, name, "mount", spec.get("mount"), out.mount)
    if path is None:
        raise StackInventoryError(
            _at(where, "storage", name, "mount"), f"storage `{name}` has no mount point"
        )
    return {
        "name": name,
        "kind": kind,
        "src": Foreign(out.source),
        "path": path if spec.get("mount") is not None else Foreign(path),
        "fstype": "lustre" if kind == "lustre" else "nfs",
        "opts": spec.get("mount_options") or "_netdev",
        "server": None,
    }


def managed_mounts(cluster_json: dict[str, Any], outputs: StackOutputs, where: str) -> list[dict[str, Any]]:
    """One shared_storage mount per managed file system the stack created, with the vendor's options."""
    specs = cluster_json.get("storage") or []
    unknown = sorted(set(outputs.storage) - {s["name"] for s in specs})
    if unknown:
        raise StackInventoryError(
            _at(where, "storage", unknown[0]),
            "a file system the build does not create: not this build's outputs",
        )
    return [_mount(where, spec, outputs) for spec in specs]


def lustre_client_vars(cluster_json: dict[str, Any]) -> dict[str, Any]:
    """shared_storage variables for a Lustre client repository the service publishes (GCP Managed Lustre,
    Azure Managed Lustre). From the catalogue, not the stack: templated by Ansible on purpose."""
    release, kernel = FACTS
    for spec in cluster_json.get("storage") or []:
        client = spec.get("client")
        # no packages: the service publishes none for this OS release, the image or the site provides it
        if spec.get("protocol") == "lustre" and client and client.get("packages"):
            return {
                "shared_storage_lustre_repo_url": Templated(client["repo"].replace("{codename}", release)),
                "shared_storage_lustre_repo_key_url": client["key_url"],
                "shared_storage_lustre_repo_suite": Templated(client["suite"].replace("{codename}", release)),
                "shared_storage_lustre_repo_components": client["components"],
                "shared_storage_lustre_packages": [
                    Templated(p.replace("{kernel}", kernel)) for p in client["packages"]
                ],
            }
    return {}


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:10])
    return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")


def _same_hosts(where: str, hosts: dict[str, Any], outputs: StackOutputs) -> None:
    missing = sorted(set(hosts) - set(outputs.nodes))
    unknown = sorted(set(outputs.nodes) - set(hosts))
    if missing or unknown:
        parts = (
            f"not in the stack: {_names(missing)}" if missing else "",
            f"not in the blueprint: {_names(unknown)}" if unknown else "",
        )
        raise StackInventoryError(
            _at(where, "nodes"), "the stack and the build disagree: " + "; ".join(p for p in parts if p)
        )


def _reach_hosts(where: str, hosts: dict[str, Any], outputs: StackOutputs, access: dict[str, Any]) -> None:
    seen: dict[str, str] = {"hosts": " ".join(hosts)}  # host names hold no spaces (RFC 1123 labels)
    for host, hv in hosts.items():
        node = outputs.nodes[host].model_dump(exclude_none=True)
        _own_address(where, host, hv.get("cb_mgmt_address"), node, seen)
        _own_fabric(where, host, hv.get("cb_fabric_addresses"), node.get("fabric_addresses") or {})
        try:
            reach = host_access(access, node, host)
        except AccessError as exc:
            raise StackInventoryError(_at(where, "nodes", host, exc.field), exc.message) from None
        # the IAP path connects to the inventory's own name (%h), not to a stack value
        hv["ansible_host"] = reach.ansible_host if reach.ansible_host == host else Foreign(reach.ansible_host)
        hv["cb_mgmt_address"] = Foreign(node["address"])
        if reach.ssh_common_args is not None:
            hv["ansible_ssh_common_args"] = Foreign(reach.ssh_common_args)


def _machine(value: str) -> str:
    """The form two names of one machine share: an IPv4-mapped IPv6 address as its IPv4 address (RFC 4291
    2.5.5.2: `::ffff:10.0.0.5` reaches 10.0.0.5), other addresses canonical, host names lower-cased (DNS
    names have no case, RFC 4343)."""
    if ":" not in value:  # an IPv4 address (canonical already, stack_outputs._ip) or a host name
        return value.lower()
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return value.lower()
    return str(getattr(address, "ipv4_mapped", None) or address)


def _interface(value: Any) -> Any:
    """An address/prefix in its canonical form, to compare (the stack's are canonical, stack_outputs)."""
    try:
        return ipaddress.ip_interface(str(value))
    except ValueError:
        return value


def _own_fabric(where: str, host: str, planned: Any, stack: dict[str, str]) -> None:
    """The MAAS stack's fabric addresses are the build's plan (the program exports the planned interfaces,
    templates/pulumi/maas/__main__.py): another one was validated, then ignored. Each must be the planned
    address of a planned interface; the stack may leave some out (it omits IPoIB P_Key children, which the
    host_fabric role makes)."""
    plan = planned if isinstance(planned, dict) else {}
    for netdev, address in sorted(stack.items()):
        if netdev not in plan or _interface(plan[netdev]) != _interface(address):
            wanted = f"planned {plan[netdev]}" if netdev in plan else "planned no such interface"
            raise StackInventoryError(
                _at(where, "nodes", host, "fabric_addresses", netdev),
                f"{one_line(netdev)[:64]}: {one_line(address)[:64]}, but the build {wanted} for {host} "
                "(not this build's stack?)",
            )


def _own_address(where: str, host: str, planned: Any, node: dict[str, Any], seen: dict[str, str]) -> None:
    """A host's stack address is its own: the one the build planned where it planned one (MAAS static
    management addresses), and no other host's (every host at one address sent the whole inventory to one
    machine), compared in the form one machine's names share (_machine); the same for cloud instance ids."""
    address = str(node["address"])
    if _machine(address) in seen.get("hosts", "").lower().split() and address.lower() != host.lower():
        raise StackInventoryError(
            _at(where, "nodes", host, "address"),
            f"{one_line(address)[:64]} is the name of another host of this inventory, not {host}'s address",
        )
    if planned is not None and _machine(str(planned)) != _machine(address):
        raise StackInventoryError(
            _at(where, "nodes", host, "address"),
            f"{one_line(address)[:64]}, but the build planned {planned} for {host} (not this build's stack?)",
        )
    for key in ("address", "instance"):
        value = node.get(key)
        if value is None:
            continue
        first = seen.setdefault(f"{key}={_machine(str(value)) if key == 'address' else value}", host)
        if first != host:
            raise StackInventoryError(
                _at(where, "nodes", host, key), f"{one_line(str(value))[:64]} is also {first}'s {key}"
            )


def build_inventory(build: Path, outputs: StackOutputs, where: str = "outputs") -> dict[str, Any]:
    """The generated inventory joined to the stack outputs (`where` names the outputs in refusals)."""
    inventory = _build_inventory_yml(build)
    cluster_json = _cluster_json(build)
    if outputs.blueprint and outputs.blueprint != cluster_json["blueprint"]:
        raise StackInventoryError(
            _at(where, "blueprint"),
            f"the stack outputs are for blueprint `{outputs.blueprint}`, the build is "
            f"`{cluster_json['blueprint']}`",
        )
    hosts = _hosts(inventory)
    _same_hosts(where, hosts, outputs)
    _reach_hosts(where, hosts, outputs, cluster_json.get("access") or {"via": "vpn"})
    all_vars: dict[str, Any] = {"shared_storage_managed_mounts": managed_mounts(cluster_json, outputs, where)}
    if outputs.login_user is not None:
        all_vars["ansible_user"] = Foreign(outputs.login_user)
    all_vars.update(lustre_client_vars(cluster_json))
    inventory["all"]["vars"] = {**(inventory["all"].get("vars") or {}), **all_vars}
    return inventory


def _dump(value: Any, indent: int) -> str:
    """JSON-shaped YAML with each stack value that holds a brace tagged `!unsafe` (scalars by the one YAML
    writer's Ansible mode, generator/yamltext.py)."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict) and value:
        items = (f"{inner}{double_quoted(str(k))}: {_dump(v, indent + 2)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(f"{inner}{_dump(v, indent + 2)}" for v in value) + f"\n{pad}]"
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    if isinstance(value, Templated) and _only_facts(value):
        return double_quoted(str(value))  # no tag: Ansible fills in the facts (a tag kept `{{ ... }}` text)
    # a build value holding template syntax (a hand-edited inventory) is tagged too: never templated
    unsafe = isinstance(value, Foreign) or (
        isinstance(value, str) and (TEMPLATE_MARKS.search(value) is not None or JINJA2_OVERRIDE in value)
    )
    return ansible_scalar(value, UNSAFE if unsafe else PROVEN_PLAIN)


def render(inventory: dict[str, Any], outputs_path: str | Path) -> str:
    """JSON-shaped YAML: every value quoted and escaped by construction, stack values with a brace
    `!unsafe`."""
    name = Path(where_of(outputs_path)).name
    header = (
        "# Inventory from the Pulumi stack outputs "
        f"({json.dumps(name, ensure_ascii=True)}), written by `blueprint inventory --from-stack`.\n"
        "# Regenerate after every `pulumi up`; use with `blueprint configure BUILD -i` this file.\n"
    )
    return header + _dump(inventory, 0) + "\n"
