"""``inventory.yml`` and ``appliances.yml``: hosts by pool, role, scalable unit, rack and rail, with their
management addresses from the on-prem address plan."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from generator.deploy.addresses import FabricAddress, onprem_plan
from generator.emit.ansible.yaml_text import comment, group_name, header, yaml_block
from generator.findings import BlueprintError, Finding, Severity
from generator.yamltext import PROVEN_PLAIN

if TYPE_CHECKING:
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster, ResolvedPool


def management_addresses(cluster: ResolvedCluster) -> dict[str, str]:
    """Host → management address from the on-prem address plan ({} for cloud targets).

    The plan (generator/deploy/addresses.py) is the one the MAAS program assigns; DEP010 reports at
    `validate` what does not fit, so this only raises when called without validation."""
    if cluster.is_cloud:
        return {}
    plan = onprem_plan(cluster)
    if plan.problems:
        raise BlueprintError(
            [
                Finding("ANS001", Severity.ERROR, message, path, "use a larger network (see DEP010)")
                for path, message in plan.problems
            ]
        )
    return plan.management


def inventory(cluster: ResolvedCluster, plan: Plan) -> str:
    addresses = management_addresses(cluster)
    groups = _Groups()
    all_children: dict[str, Any] = {
        f"pool_{group_name(pool.name)}": {"hosts": _pool_hosts(cluster, plan, pool, addresses, groups)}
        for pool in cluster.pools
    }
    all_children.update(groups.blocks(cluster))
    note = (
        "Management addresses: the on-prem address plan (docs/pulumi.md, generator/deploy/addresses.py), "
        "the addresses the MAAS program assigns; cb_fabric_addresses: the IPoIB/RoCE address per interface."
        if addresses
        else f"Cloud target `{cluster.target}`: hosts are reached by name; the provider assigns "
        "the addresses: after `pulumi up` run `blueprint inventory build/ --from-stack outputs.json`."
    )
    return (
        header(cluster, "Inventory")
        + comment(note)
        + "\n"
        + yaml_block({"all": {"children": all_children}}, tag=PROVEN_PLAIN)
        + "\n"
    )


def appliance_inventory(cluster: ResolvedCluster, plan: Plan) -> str:
    """The devices on fabric switch ports (blueprint ``appliances:``): group ``appliances`` with a child group
    per role (``appliance_ufm``, ``appliance_host``). A separate inventory: UFM appliances run NVIDIA's own OS
    and CLI, so none of the playbooks (base.yml runs on ``all``) may configure them."""
    from generator.plan.subnet_manager import sm_fabrics, sm_plan

    sm_of: dict[str, list[str]] = defaultdict(list)
    for fabric in sm_fabrics(cluster):
        for m in sm_plan(cluster, fabric, plan).members:
            sm_of[m.name].append(fabric)
    cables: dict[str, list[str]] = defaultdict(list)
    for link in plan.links:
        if link.layer == "appliance_switch":
            cables[link.b.device].append(f"{link.a.device}:{link.a.port}")
    children: dict[str, Any] = {}
    addresses = {} if cluster.is_cloud else onprem_plan(cluster).fabric
    for d in sorted((d for d in plan.devices if d.kind == "appliance"), key=lambda d: d.name):
        entry: dict[str, Any] = {
            "cb_appliance_model": d.model,
            "cb_fabric": d.fabric,
            "cb_switch_ports": cables[d.name],
        }
        if d.rack:
            entry["cb_rack"] = d.rack
        if sm_of.get(d.name):
            entry["cb_subnet_manager_fabrics"] = sm_of[d.name]
        entry.update(_appliance_addresses(addresses.get(d.name, ())))
        group = children.setdefault(f"appliance_{group_name(d.role)}", {"hosts": {}})
        group["hosts"][d.name] = entry
    doc = {"all": {"children": {"appliances": {"children": dict(sorted(children.items()))}}}}
    return (
        header(cluster, "Appliance inventory")
        + comment("Devices cabled to fabric switch ports (appliances:); no playbook here touches them")
        + "\n"
        + yaml_block(doc, tag=PROVEN_PLAIN)
        + "\n"
    )


def _appliance_addresses(rows: Sequence[FabricAddress]) -> dict[str, Any]:
    """A routed fabric's /31 per appliance cable, by its plan port (p1, as in cb_switch_ports): what its
    own OS is to be given; the leaf port's end is in the switch configuration (deploy/addresses.py)."""
    if not rows:
        return {}
    return {
        "cb_fabric_addresses": {a.port: a.address for a in rows},
        "cb_fabric_gateways": {a.port: a.gateway for a in rows if a.gateway},
        "cb_fabric_routes": {a.port: list(a.routes) for a in rows if a.routes},
    }


@dataclass
class _Groups:
    """The inventory's groups besides the pools: hosts by rack, SU and rail; pools by role and RDMA."""

    hosts: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    pools: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def blocks(self, cluster: ResolvedCluster) -> dict[str, Any]:
        rdma_kinds = {n for n, f in cluster.fabrics.items() if f.kind in ("infiniband", "roce")}
        for pool in cluster.pools:
            pg = f"pool_{group_name(pool.name)}"
            self.pools[f"role_{group_name(pool.role)}"].append(pg)
            if any(pool.ports_for(f) for f in rdma_kinds) or (
                pool.cloud is not None and pool.cloud.fabric in cluster.catalog.fabrics
            ):
                self.pools["rdma"].append(pg)
        out: dict[str, Any] = {g: {"children": {c: {} for c in self.pools[g]}} for g in sorted(self.pools)}
        for g in sorted(self.hosts, key=_group_order):
            out[g] = {"hosts": {h: {} for h in sorted(self.hosts[g])}}
        return out


def _group_order(name: str) -> tuple[str, int, str]:
    """rail2 before rail10: a trailing number sorts as a number."""
    m = re.match(r"^([a-z_]+?)(\d+)$", name)
    return (m.group(1), int(m.group(2)), name) if m else (name, -1, name)


def _pool_hosts(
    cluster: ResolvedCluster, plan: Plan, pool: ResolvedPool, addresses: dict[str, str], groups: _Groups
) -> dict[str, Any]:
    """Each host's variables (addresses, rack, SU), and its rack, SU and rail groups into ``groups``."""
    fabric_addresses = onprem_plan(cluster).fabric
    rails = [f"rail{port.index}" for port in pool.ports_for("compute")]
    hosts: dict[str, Any] = {}
    for host in pool.hostnames:
        hv: dict[str, Any] = {}
        if host in addresses:
            hv["ansible_host"] = addresses[host]
            hv["cb_mgmt_address"] = addresses[host]
        named = {a.interface: a.address for a in fabric_addresses.get(host, ()) if a.interface is not None}
        if named:
            hv["cb_fabric_addresses"] = named
        # routed (BGP) fabrics: each port's gateway, its leaf port (generator/deploy/addresses.py)
        gateways = {
            a.interface: a.gateway for a in fabric_addresses.get(host, ()) if a.interface and a.gateway
        }
        if gateways:
            hv["cb_fabric_gateways"] = gateways
        dev = plan.device_by_name.get(host)
        if dev is not None and dev.rack:
            hv["cb_rack"] = dev.rack
            groups.hosts[f"rack_{group_name(dev.rack)}"].add(host)
        if dev is not None and dev.su is not None:
            hv["cb_su"] = dev.su
            groups.hosts[f"su{dev.su}"].add(host)
        for rail in rails:
            groups.hosts[rail].add(host)
        hosts[host] = hv
    return hosts
