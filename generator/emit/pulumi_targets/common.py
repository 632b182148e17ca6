"""What every target's project holds: node inventory with plan tags, storage sizing, labels."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generator import __version__
from generator.deploy.images import instance_type
from generator.deploy.managed_storage import managed_storage_spec, size_managed, storage_efa

if TYPE_CHECKING:
    from blueprints.catalog.schema import ManagedStorage
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster, ResolvedPool


@dataclass(frozen=True)
class ConfigKey:
    """A stack configuration key the user sets (not written by the generator)."""

    key: str  # fully qualified (`maas:apiKey`) or project-relative (`sshPublicKey`)
    secret: bool
    description: str
    example: str


@dataclass
class Project:
    """Everything one target contributes to the generated project."""

    data: dict[str, Any]  # → cluster.json
    config: dict[str, Any]  # → Pulumi.<stack>.yaml (non-secret, decided by the blueprint)
    packages: tuple[str, ...]  # provider packages for requirements.txt (pulumi itself is always there)
    user_config: list[ConfigKey] = field(default_factory=list)  # set by the user before `pulumi up`
    credentials: tuple[str, ...] = ()  # README lines: how the provider authenticates
    notes: tuple[str, ...] = ()  # README lines: target specifics


def labels(cluster: ResolvedCluster) -> dict[str, str]:
    """Tags/labels on every resource (lower-case keys and values: valid on all four clouds)."""
    return {"blueprint": cluster.name, "managed-by": "cluster-blueprint"}


def node_rows(cluster: ResolvedCluster, plan: Plan | None, pool: ResolvedPool) -> list[dict[str, Any]]:
    """One row per node: hostname, 1-based index, and the scalable unit / rack the plan put it in."""
    devices = plan.device_by_name if plan is not None else {}
    rows = []
    for i, host in enumerate(pool.hostnames, start=1):
        d = devices.get(host)
        rows.append({"hostname": host, "index": i, "su": d.su if d else None, "rack": d.rack if d else None})
    return rows


def base_data(cluster: ResolvedCluster) -> dict[str, Any]:
    return {
        "schema": 1,
        "blueprint": cluster.name,
        "generator": f"cluster-blueprint {__version__}",
        "source_sha256": cluster.sha256,
        "target": cluster.target,
        "os": cluster.blueprint.software.os,
        "labels": labels(cluster),
    }


def cloud_data(cluster: ResolvedCluster) -> dict[str, Any]:
    """base_data plus what every cloud program reads: the OS image and the file systems to create/mount."""
    from generator.deploy.access import access_data
    from generator.deploy.images import image_for

    data = base_data(cluster)
    data["image"] = image_for(cluster)
    data["access"] = access_data(cluster)
    data["storage"] = managed_storage(cluster)
    data["external_storage"] = external_storage(cluster)
    return data


def pool_data(cluster: ResolvedCluster, plan: Plan | None, pool: ResolvedPool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": pool.name,
        "role": pool.role,
        "count": pool.count,
        "gpus": pool.server.gpus,
        "gpu": pool.gpu_id,
        "nodes": node_rows(cluster, plan, pool),
    }
    if pool.cloud is not None:
        out["instance_type"] = instance_type(pool)
        out["gpu_nics"] = pool.cloud.network_cards
        out["gpu_nic_gbps"] = pool.cloud.nic_gbps
        out["fabric"] = pool.cloud.fabric
    return out


def managed_storage(cluster: ResolvedCluster) -> list[dict[str, Any]]:
    """The `kind: managed` file systems the program creates, already sized to valid service values."""
    spec = managed_storage_spec(cluster)
    out: list[dict[str, Any]] = []
    if spec is None:
        return out
    efa = storage_efa(cluster, spec)
    for st in cluster.blueprint.storage:
        if st.kind != "managed":
            continue
        s = size_managed(spec, st.capacity_tib, st.throughput_gbytes, efa)
        out.append(
            {
                "name": st.name,
                "mount": st.mount,
                # Lustre fsnames are at most 8 letters/digits (GCP and OCI enforce it).
                "filesystem": re.sub(r"[^a-z0-9]", "", st.filesystem or st.name)[:8] or "lustre",
                "service": s.service,
                "protocol": s.protocol,
                "tier": s.tier,
                "size": s.size,
                "unit": s.unit,
                "sku": s.sku,
                "efa": s.efa,
                "throughput_gbytes": s.throughput_gbytes,
                "options": list(st.options),
                # fstab options the vendor documents, then the blueprint's own (for `blueprint inventory`)
                "mount_options": ",".join(
                    dict.fromkeys([*spec.mount_options.split(","), *st.options]).keys()
                ),
                "client": _client(spec, cluster.blueprint.software.os),
            }
        )
    return out


def _client(spec: ManagedStorage, os: str) -> dict[str, Any] | None:
    """The service's client repository with the packages for the blueprint's OS release."""
    if spec.client is None:
        return None
    return {**spec.client.model_dump(exclude={"packages_by_os"}), "packages": spec.client.packages_for(os)}


def external_storage(cluster: ResolvedCluster) -> list[dict[str, Any]]:
    """Storage the program does not create (mounted by Ansible from the named server)."""
    return [
        {"name": st.name, "kind": st.kind, "mount": st.mount, "server": st.server}
        for st in cluster.blueprint.storage
        if st.kind != "managed"
    ]
