"""MAAS (on-prem bare metal): fabrics/VLANs/subnets, tags per pool/SU/rack/rail, machine deployment."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

from blueprints.models.deployment import maas_tag
from generator.deploy.addresses import management_interface, onprem_plan, reserved_range
from generator.deploy.images import maas_series
from generator.emit.pulumi_targets.common import ConfigKey, Project, base_data, external_storage, pool_data

if TYPE_CHECKING:
    from generator.deploy.addresses import OnPremPlan
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

PACKAGES = ("pulumi-maas",)


def _tag(cluster: ResolvedCluster, *parts: object) -> str:
    """A MAAS tag of the cluster, in MAAS's tag character set (DEP014 refuses two racks of one tag)."""
    return maas_tag(cluster.name, *parts)


class TaggedPools(NamedTuple):
    pools: list[dict[str, Any]]  # pool rows with every node's addresses, interfaces and tags
    tags: dict[str, list[str]]  # MAAS tag -> hosts


def project(cluster: ResolvedCluster, plan: Plan | None) -> Project:
    maas = cluster.blueprint.deployment.maas
    addresses = onprem_plan(cluster)
    data = base_data(cluster)
    tagged = _tagged_pools(cluster, plan, addresses)
    data["maas"] = {
        "management_cidr": maas.management_cidr if maas else "10.0.0.0/16",
        "zone": maas.zone if maas else None,
        "resource_pool": maas.resource_pool if maas else None,
        "distro_series": maas_series(cluster),
    }
    data["fabrics"] = _fabric_subnets(cluster, addresses, maas.vlan_base if maas else 100)
    data["pools"] = tagged.pools
    data["tags"] = {name: sorted(set(hosts)) for name, hosts in sorted(tagged.tags.items())}
    data["external_storage"] = external_storage(cluster)
    api_url_key = maas.api_url_config if maas else "maas:apiUrl"
    config: dict[str, object] = {
        "maas:apiVersion": "2.0",
        "apiUrlConfig": api_url_key,
        "distroSeries": maas_series(cluster),
    }
    return Project(
        data=data,
        config=config,
        packages=PACKAGES,
        user_config=_user_config(api_url_key),
        credentials=CREDENTIALS,
        notes=_notes(data["maas"]["management_cidr"]),
    )


CREDENTIALS = (
    "A MAAS API key (`maas apikey --username <user>`), stored as the secret `maas:apiKey`; the user "
    "needs permission to allocate and deploy machines and to create fabrics, VLANs, subnets and "
    "tags.",
    "pulumi-maas is a community provider (github.com/juhnny5/pulumi-maas, a bridge of the "
    "canonical/maas Terraform provider), not a Pulumi-maintained package: pin it and review "
    "upgrades.",
)


def _fabric_subnets(cluster: ResolvedCluster, addresses: OnPremPlan, vlan_base: int) -> list[dict[str, Any]]:
    """Fabric subnets: one VLAN + subnet per compute rail, one for storage; the planned static addresses
    (generator/deploy/addresses.py, as in the inventory) are reserved so MAAS never assigns them."""
    fabrics: list[dict[str, Any]] = []
    for fname in ("compute", "storage"):
        rf = cluster.fabrics.get(fname)
        if rf is None:
            continue
        rows = []
        for s in addresses.subnets:
            if s.fabric != fname:
                continue
            vid = vlan_base + s.rail if s.rail is not None else vlan_base + 100
            reserved = reserved_range(s)
            rows.append(
                {
                    "name": s.name,
                    "cidr": s.cidr,
                    "vid": vid,
                    "rail": s.rail,
                    "reserved": list(reserved) if reserved else None,
                }
            )
        fabrics.append(
            {"name": fname, "technology": rf.technology, "kind": rf.kind, "mtu": rf.spec.mtu, "subnets": rows}
        )
    return fabrics


def _tagged_pools(cluster: ResolvedCluster, plan: Plan | None, addresses: OnPremPlan) -> TaggedPools:
    tags: dict[str, list[str]] = defaultdict(list)
    pools = []
    for pool in cluster.pools:
        row = pool_data(cluster, plan, pool)
        row["server"] = pool.server_id
        row["management_interface"] = management_interface(cluster, pool)
        for node in row["nodes"]:
            _node_row(cluster, addresses, pool.name, node)
            for t in node["tags"]:
                tags[t].append(node["hostname"])
        pools.append(row)
    return TaggedPools(pools, tags)


def _node_row(cluster: ResolvedCluster, addresses: OnPremPlan, pool: str, node: dict[str, Any]) -> None:
    """The node's planned management address, fabric interfaces and MAAS tags (pool, SU, rack, rails)."""
    host = node["hostname"]
    node_tags = [_tag(cluster, "pool", pool)]
    if node["su"] is not None:
        node_tags.append(_tag(cluster, f"su{node['su']}"))
    if node["rack"] is not None:
        node_tags.append(_tag(cluster, "rack", node["rack"]))
    node["management_address"] = addresses.management.get(host)
    node["interfaces"] = [
        {"netdev": a.interface, "rdma_dev": a.rdma_dev, "subnet": a.subnet, "address": a.address}
        for a in addresses.fabric.get(host, [])
        # a tenant's IPoIB P_Key child is no interface MAAS commissions: the host_fabric role makes it
        if a.interface is not None and a.child_of is None
    ]
    node_tags += [
        _tag(cluster, f"rail{a.rail}") for a in addresses.fabric.get(host, []) if a.rail is not None
    ]
    node["tags"] = sorted(set(node_tags))


def _user_config(api_url_key: str) -> list[ConfigKey]:
    return [
        ConfigKey(api_url_key, False, "MAAS region API URL", "http://maas.example.net:5240/MAAS"),
        ConfigKey(
            "managementInterface",
            False,
            "name of the machines' management (PXE) interface as MAAS shows it after commissioning; the "
            "planned management address is set on it as a static link",
            "<interface name from `maas admin interfaces read <system_id>`>",
        ),
        ConfigKey(
            "maas:apiKey",
            True,
            "MAAS API key of the deploying user (`maas apikey --username=...`)",
            "<consumer:token:secret>",
        ),
    ]


def _notes(management_cidr: str) -> tuple[str, ...]:
    return (
        "Machines must already be commissioned in MAAS under the blueprint's hostnames (enlist them with "
        "their BMC and rename them, e.g. `maas admin machine update <system_id> hostname=<name>`); the "
        "program tags, allocates (by hostname) and deploys them with the blueprint's OS.",
        f"The management network {management_cidr} must already be a MAAS subnet (the "
        "rack controller's PXE network); it is looked up, not created.",
        "Compute/storage fabric subnets are created for address management only: the per-node static "
        "addresses in cluster.json (also exported as `nodes`) are reserved in MAAS and configured on "
        "the IPoIB/RoCE interfaces by the Ansible roles, because MAAS does not configure InfiniBand.",
    )
