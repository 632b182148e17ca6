"""The Ansible inventory from what `pulumi up` created: `pulumi stack output --json` joined to the build.

Reads the generated inventory (groups, host variables, the planned addresses), the project's cluster.json
(managed file systems with the vendor's mount options and client repositories) and the stack outputs
(`nodes`: hostname -> address; `storage`: name -> protocol, source, mount). Writes the same inventory with
every host's `cb_mgmt_address` set to the address the provider gave it, `ansible_host` and
`ansible_ssh_common_args` to the access path of the build (generator/deploy/access.py), and
`shared_storage_managed_mounts` (plus the Lustre client repository a service publishes) in `all.vars`.
Hosts missing from the stack, or nodes the blueprint does not know, are errors: the two halves must agree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from generator.deploy.access import AccessError, host_access


class StackInventoryError(ValueError):
    """The stack outputs do not fit the build (message names the file and what is wrong)."""


@dataclass(frozen=True)
class StackOutputs:
    blueprint: str
    nodes: dict[str, dict[str, Any]]
    storage: dict[str, dict[str, Any]]
    # the user the program installed the SSH key for (Azure adminUsername, GCP sshUser); AWS and OCI keep
    # the image's default user, which the stack does not report
    login_user: str | None = None


def read_outputs(path: Path) -> StackOutputs:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise StackInventoryError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from exc
    except OSError as exc:
        raise StackInventoryError(f"{path}: {exc.strerror}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("nodes"), dict):
        raise StackInventoryError(
            f"{path}: no `nodes` object: give the output of `pulumi stack output --json`"
        )
    user = raw.get("login_user")
    return StackOutputs(
        str(raw.get("blueprint", "")),
        raw["nodes"],
        dict(raw.get("storage") or {}),
        user if isinstance(user, str) and user else None,
    )


def _hosts(inventory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Host -> its variables, from the pool groups (where the generator writes host variables)."""
    out: dict[str, dict[str, Any]] = {}
    for name, group in inventory["all"]["children"].items():
        if name.startswith("pool_"):
            for host, hv in (group.get("hosts") or {}).items():
                out[host] = hv if hv is not None else {}
                group["hosts"][host] = out[host]
    return out


def managed_mounts(cluster_json: dict[str, Any], outputs: StackOutputs) -> list[dict[str, Any]]:
    """One shared_storage mount per managed file system the stack created, with the vendor's options."""
    mounts = []
    for spec in cluster_json.get("storage") or []:
        out = outputs.storage.get(spec["name"])
        if not out or not out.get("source"):
            raise StackInventoryError(f"storage `{spec['name']}` has no source in the stack outputs")
        kind = out.get("protocol", spec["protocol"])
        mounts.append(
            {
                "name": spec["name"],
                "kind": kind,
                "src": out["source"],
                "path": out.get("mount") or spec["mount"],
                "fstype": "lustre" if kind == "lustre" else "nfs",
                "opts": spec.get("mount_options") or "_netdev",
                "server": None,
            }
        )
    return mounts


def lustre_client_vars(cluster_json: dict[str, Any]) -> dict[str, Any]:
    """shared_storage variables for a Lustre client repository the service publishes (GCP Managed Lustre,
    Azure Managed Lustre)."""
    release = "{{ ansible_distribution_release }}"
    for spec in cluster_json.get("storage") or []:
        client = spec.get("client")
        # no packages: the service publishes none for this OS release, the image or the site provides it
        if spec.get("protocol") == "lustre" and client and client.get("packages"):
            return {
                "shared_storage_lustre_repo_url": client["repo"].replace("{codename}", release),
                "shared_storage_lustre_repo_key_url": client["key_url"],
                "shared_storage_lustre_repo_suite": client["suite"].replace("{codename}", release),
                "shared_storage_lustre_repo_components": client["components"],
                "shared_storage_lustre_packages": [
                    p.replace("{kernel}", "{{ ansible_kernel }}") for p in client["packages"]
                ],
            }
    return {}


def build_inventory(build: Path, outputs: StackOutputs) -> dict[str, Any]:
    yaml = YAML(typ="safe", pure=True)
    inventory = yaml.load((build / "ansible" / "inventory.yml").read_text(encoding="utf-8"))
    cluster_json = json.loads((build / "pulumi" / "cluster.json").read_text(encoding="utf-8"))
    if outputs.blueprint and outputs.blueprint != cluster_json["blueprint"]:
        raise StackInventoryError(
            f"the stack outputs are for blueprint `{outputs.blueprint}`, the build is "
            f"`{cluster_json['blueprint']}`"
        )
    hosts = _hosts(inventory)
    missing = sorted(set(hosts) - set(outputs.nodes))
    unknown = sorted(set(outputs.nodes) - set(hosts))
    if missing or unknown:
        raise StackInventoryError(
            "the stack and the build disagree: "
            + "; ".join(
                part
                for part in (
                    f"not in the stack: {', '.join(missing)}" if missing else "",
                    f"not in the blueprint: {', '.join(unknown)}" if unknown else "",
                )
                if part
            )
        )
    access = cluster_json.get("access") or {"via": "vpn"}
    for host, hv in hosts.items():
        node = outputs.nodes[host] or {}
        try:
            reach = host_access(access, node, host)
        except AccessError as exc:
            raise StackInventoryError(str(exc)) from exc
        hv["ansible_host"] = reach.ansible_host
        hv["cb_mgmt_address"] = node["address"]
        if reach.ssh_common_args is not None:
            hv["ansible_ssh_common_args"] = reach.ssh_common_args
    all_vars: dict[str, Any] = {"shared_storage_managed_mounts": managed_mounts(cluster_json, outputs)}
    if outputs.login_user is not None:
        all_vars["ansible_user"] = outputs.login_user
    all_vars.update(lustre_client_vars(cluster_json))
    inventory["all"]["vars"] = {**(inventory["all"].get("vars") or {}), **all_vars}
    return inventory


def render(inventory: dict[str, Any], outputs_path: Path) -> str:
    """JSON is YAML: every value is quoted and escaped for YAML by construction."""
    header = (
        "# Inventory from the Pulumi stack outputs "
        f"({outputs_path.name}), written by `blueprint inventory --from-stack`.\n"
        "# Regenerate after every `pulumi up`; use with `blueprint configure BUILD -i` this file.\n"
    )
    return header + json.dumps(inventory, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
