"""The ``ansible/`` output: inventory, group_vars and ansible.cfg for one cluster, plus the shipped roles.

Groups (names are Ansible-safe: letters, digits, underscores):

* ``pool_<pool>`` — every host of a pool (host variables live here, once);
* ``role_<role>`` — pools by role (gpu, storage, login, management);
* ``su<N>`` — fat-tree scalable unit / dragonfly group of the host (from the plan);
* ``rack_<rack>`` — the rack the host sits in (``rack_r01_05``);
* ``rail<i>`` — hosts with a compute port on rail *i* (``--limit rail0``);
* ``rdma`` — hosts with a port on an InfiniBand or RoCE fabric (they get the OFED/rdma-core stack).

Management and fabric addresses (on-prem targets ``maas`` and ``none``) come from the address plan in
generator/deploy/addresses.py, the same plan the MAAS program assigns. Cloud targets get their addresses
from the provider: `blueprint inventory build/ --from-stack outputs.json` writes them after `pulumi up`.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from generator.deploy.addresses import onprem_plan
from generator.deploy.cloud import image_tuned
from generator.emit import nccl as nccl_emit
from generator.emit._registry import BuildContext, Emitter
from generator.findings import BlueprintError, Finding, Severity
from generator.platform.ports import interfaces, platform_of, rdma_devices
from generator.safetext import one_line

if TYPE_CHECKING:
    from blueprints.catalog.schema import ContainerInstall, Platform
    from generator.perf.system import System
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster, ResolvedFabric, ResolvedPool

NAME = "ansible"
PLAYBOOKS: tuple[str, ...] = (
    "site.yml",
    "base.yml",
    "fabric.yml",
    "drivers.yml",
    "nccl.yml",
    "storage.yml",
    "acceptance.yml",
)
# run with build/subnet_manager/inventory.yml and build/switches/inventory.yml (docs/switches.md)
PLAYBOOKS += ("opensm.yml", "switches.yml")
DEFAULT_CIDR = "10.0.0.0/16"
# nccl-tests sweep the acceptance role runs (-b .. -e, factor 2); the predictions average the same sizes.
ACCEPTANCE_SIZES = (1 << 30, 2 << 30, 4 << 30, 8 << 30)
ACCEPTANCE_COLLECTIVES = ("all_reduce", "all_gather", "alltoall")
# One-rail runs (NCCL_IB_HCA = one rail's port) between neighbouring hosts: a shorter sweep, all_reduce only.
RAIL_SIZES = (1 << 30, 2 << 30)
RAIL_COLLECTIVES = ("all_reduce",)
WRAP = 130


def applies(cluster: ResolvedCluster) -> bool:
    return bool(cluster.pools)


def group_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


# --------------------------------------------------------------------------- addresses
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


# --------------------------------------------------------------------------- YAML text
# Every string value is data: `!unsafe` tells Ansible never to template it, so a catalogue or blueprint
# string holding `{{ lookup('pipe', ...) }}` stays text on the controller (check mode included).
UNSAFE = "!unsafe "
# The inventory holds only host names and racks (blueprint name patterns) and computed addresses; it stays
# plain so `ansible-inventory --list` shows plain values, and _tagged() proves each one template-free.
PROVEN_PLAIN = ""
TEMPLATE_MARKS = re.compile(r"\{[{%#]|[}%#]\}")


def _scalar(value: Any, tag: str = UNSAFE) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return repr(value)
    return _tagged(str(value), tag)


# The characters json.dumps(ensure_ascii=False) escapes (json.encoder.ESCAPE): a string without them
# is dumped as itself in quotes.
_JSON_ESCAPED = re.compile(r'[\x00-\x1f\\"]')


def _tagged(value: str, tag: str) -> str:
    """A JSON-quoted scalar, ``!unsafe`` unless it is proven free of template syntax (the inventory)."""
    if not tag and TEMPLATE_MARKS.search(value):
        raise ValueError(f"inventory value {value!r} holds template syntax")
    if _JSON_ESCAPED.search(value) is None:  # what json.dumps would leave as it is (most names, addresses)
        return f'{tag}"{value}"'
    return tag + json.dumps(value, ensure_ascii=False)


def _long_string(value: str, indent: int, tag: str = UNSAFE) -> str:
    """A double-quoted scalar folded over lines ≤ WRAP (YAML folds each line break into one space)."""
    text = _tagged(value, tag)
    width = max(40, WRAP - indent)
    if len(text) <= width:  # fits: textwrap would return it as it is (JSON text has no tab or newline)
        return text
    lines = textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False)
    return ("\n" + " " * (indent + 2)).join(lines) if lines else text


def _yaml(obj: Any, indent: int = 0, tag: str = UNSAFE) -> str:
    """Block-style YAML for plain data (dicts keep their order; strings are JSON-quoted)."""
    pad = " " * indent
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        parts = []
        for k, v in obj.items():
            if isinstance(v, dict | list) and v:
                parts.append(f"{pad}{k}:\n{_yaml(v, indent + 2, tag)}")
            else:
                val = (
                    _long_string(v, indent + len(str(k)) + 2, tag)
                    if isinstance(v, str)
                    else _yaml_inline(v, tag)
                )
                parts.append(f"{pad}{k}: {val}")
        return "\n".join(parts)
    if isinstance(obj, list):
        if not obj:
            return "[]"
        parts = []
        for item in obj:
            if isinstance(item, dict | list) and item:
                body = _yaml(item, indent + 2, tag)
                parts.append(f"{pad}- {body[indent + 2 :]}")
            else:
                parts.append(f"{pad}- {_yaml_inline(item, tag)}")
        return "\n".join(parts)
    return _scalar(obj, tag)


def _yaml_inline(v: Any, tag: str = UNSAFE) -> str:
    """Flow style (``{"a": 1}``, ``[1, 2]``) with every string scalar marked ``!unsafe`` too."""
    if isinstance(v, dict):
        items = (f"{json.dumps(str(k))}: {_yaml_inline(x, tag)}" for k, x in v.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_yaml_inline(x, tag) for x in v) + "]"
    return _scalar(v, tag)


def _comment(text: str, indent: int = 0) -> str:
    pad = " " * indent
    return "\n".join(
        f"{pad}# {line}"
        for line in textwrap.wrap(
            one_line(text), width=WRAP - indent - 2, break_long_words=False, break_on_hyphens=False
        )
    )


def _header(cluster: ResolvedCluster, what: str) -> str:
    src = FsPath(cluster.source_file).name
    sha = f" (sha256 {cluster.sha256[:16]})" if cluster.sha256 else ""
    return (
        "---\n"
        + _comment(f"{what} for cluster `{cluster.name}`, generated by cluster-blueprint from {src}{sha}.")
        + "\n# Regenerate instead of editing: `blueprint generate` refuses to overwrite hand edits.\n"
    )


# --------------------------------------------------------------------------- inventory
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
        _header(cluster, "Inventory")
        + _comment(note)
        + "\n"
        + _yaml({"all": {"children": all_children}}, tag=PROVEN_PLAIN)
        + "\n"
    )


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


# --------------------------------------------------------------------------- group_vars
def _storage_mounts(cluster: ResolvedCluster) -> tuple[list[dict[str, Any]], list[str]]:
    mounts: list[dict[str, Any]] = []
    skipped: list[str] = []
    pools = {p.name: p for p in cluster.pools}
    fab = cluster.fabrics.get("storage") or cluster.fabrics.get("compute")
    lnet = "o2ib" if fab is not None and fab.kind == "infiniband" else "tcp"
    for s in cluster.blueprint.storage:
        server = s.server or (pools[s.pool].hostnames[0] if s.pool in pools else None)
        opts = list(s.options)
        if s.kind == "nfs" and server:
            src, fstype, base = f"{server}:{s.export}", "nfs", ["hard", "_netdev"]
        elif s.kind == "lustre" and server:
            src, fstype, base = f"{server}@{lnet}:/{s.filesystem or s.name}", "lustre", ["flock", "_netdev"]
        elif s.kind == "vast" and server:
            # VAST serves its views over NFS (the client is the kernel's NFS client).
            src, fstype, base = f"{server}:{s.export or '/'}", "nfs", ["hard", "_netdev"]
        elif s.kind == "beegfs" and server:
            src, fstype = "beegfs_nodev", "beegfs"
            base = ["rw", "relatime", f"cfgFile=/etc/beegfs/beegfs-client-{s.name}.conf", "_netdev"]
        elif s.kind == "weka" and server and not _weka_gap(s.options, cluster.target):
            # docs.weka.io "Mount filesystems" (weka/docs-weka-io), "Mount a filesystem using fstab":
            # <backends>/<fs> <mount> wekafs <mount options>,x-systemd.requires=weka-agent.service,
            # x-systemd.mount-timeout=infinity,_netdev (a stateless client: the agent joins on mount)
            src, fstype = f"{server}/{s.filesystem or s.name}", "wekafs"
            base = ["x-systemd.requires=weka-agent.service", "x-systemd.mount-timeout=infinity", "_netdev"]
        else:
            skipped.append(_not_in_fstab(s.name, s.kind, server, cluster.target, s.options))
            continue
        merged = base + [o for o in opts if o not in base]
        mounts.append(
            {
                "name": s.name,
                "kind": "nfs" if s.kind == "vast" else s.kind,
                "src": src,
                "path": s.mount,
                "fstype": fstype,
                "opts": ",".join(merged),
                "server": server,
            }
        )
    return mounts, skipped


def _weka_gap(options: list[str], target: str) -> str:
    """What a WEKA stateless mount lacks: docs.weka.io says `net=` "must be specified for on-premises
    installation and must not be specified for AWS installations"."""
    has_net = any(o.startswith("net=") or o.startswith("net:") for o in options)
    if target == "aws" and has_net:
        return "on AWS the WEKA client must not be given `net=` (remove it from options)"
    if target != "aws" and not has_net:
        return "on-premises WEKA clients need `net=<netdev>` in options (e.g. net=ib0; docs.weka.io)"
    return ""


def _not_in_fstab(name: str, kind: str, server: str | None, target: str, options: list[str]) -> str:
    """Why a declared file system is not written to fstab, and what the user must do instead."""
    if kind == "gpfs":
        # IBM Storage Scale 6.0.1 command reference (ibm.com/docs/en/storage-scale): mmaddnode -N (issued on a
        # node already in the cluster; Storage Scale installed on the new nodes first), mmchlicense
        # {client|server} [--accept] -N, mmstartup -N, mmmount Device -N: a join, not an fstab mount.
        return (
            f"{name} (gpfs): IBM Storage Scale clients are not mounted from fstab: install the licensed "
            "Storage Scale packages on the nodes, then on a node of the Storage Scale cluster run "
            "`mmaddnode -N <nodes>`, `mmchlicense client --accept -N <nodes>`, `mmstartup -N <nodes>` and "
            "`mmmount <device> -N <nodes>`; the generator does not do this: supply it"
        )
    if kind == "weka":
        why = _weka_gap(options, target) if server else "needs `server` (a WEKA backend host)"
        return f"{name} (weka): {why}"
    if kind == "managed":
        return (
            f"{name} (managed): created by `pulumi up`; its address is known only then: "
            "`blueprint inventory BUILD --from-stack outputs.json` adds it to shared_storage_managed_mounts "
            "with the vendor's options, and the shared_storage role mounts it"
        )
    return f"{name} ({kind}): mounted by its own client, not by fstab"


def all_vars(cluster: ResolvedCluster) -> str:
    sw = cluster.software
    mounts, skipped = _storage_mounts(cluster)
    out = [_header(cluster, "Variables for every host")]
    out.append(
        "# Hosts without GPUs/HCAs (image staging, tests) set this false: services, modules and\n"
        "# hardware checks are skipped; files and packages are still installed."
    )
    out.append(_yaml({"cb_hardware_present": True, "cb_cluster_name": cluster.name, "cb_os": sw.os}))
    out.append("\n# Pinned versions [software.*]")
    out.append(
        _yaml(
            {
                "nvidia_driver_branch": sw.driver_branch,
                "nvidia_driver_version": sw.driver_version or "",
                "nccl_version": sw.nccl,
                "nccl_cuda": sw.cuda,
                "nccl_tests_version": sw.nccl_tests,
                "doca_ofed_kind": sw.ofed.kind,
                "doca_ofed_version": sw.ofed.version,
            }
        )
    )
    if image_tuned(cluster):
        out.append(
            "\n# The cloud's HPC image (Azure/azhpc-images) ships DOCA-OFED, NCCL and its own tuning: "
            "keep them\n"
            "# (no vendor repository, no NCCL packages on top) [blueprints/catalog/data/cloud.yaml images]"
        )
        out.append(
            _yaml({"cb_image_tuned": True, "doca_ofed_manage_repo": False, "nccl_install_packages": False})
        )
    out.append("\n# Shared storage [storage]: written to fstab by the shared_storage role")
    for note in skipped:
        out.append(_comment("not in fstab: " + note))
    out.append(_yaml({"shared_storage_mounts": mounts}))
    return "\n".join(out) + "\n"


def _acceptance_predictions(
    cluster: ResolvedCluster, plan: Plan, pool: ResolvedPool
) -> tuple[dict[str, dict[int, float]], dict[str, float], list[str]]:
    """Predicted busbw per collective: by node count (every rail), and for one rail between two nodes."""
    from generator.perf.system import PerfError, system_for

    predicted: dict[str, dict[int, float]] = {}
    rail: dict[str, float] = {}
    try:
        system = system_for(cluster, plan, pool.name)
        counts = sorted({n for n in (2**k for k in range(1, 20)) if n <= pool.count} | {pool.count} - {1})
        for coll in ACCEPTANCE_COLLECTIVES:
            row = {n: _mean_busbw(system, coll, ACCEPTANCE_SIZES, n, 1.0) for n in counts}
            if row:
                predicted[coll] = row
        if pool.count > 1 and system.net_ports > 1:
            share = 1.0 / system.net_ports
            rail = {c: _mean_busbw(system, c, RAIL_SIZES, 2, share) for c in RAIL_COLLECTIVES}
    except PerfError as exc:  # the model refusing a design leaves the line-rate threshold in force;
        # any other exception is a bug and surfaces as an internal error
        why = f"no performance-model prediction ({type(exc).__name__}: {exc})"
        return {}, {}, [why + "; threshold = line rate × efficiency"]
    notes = []
    if predicted:
        notes.append(
            "acceptance_predicted_busbw: generator.perf's predicted nccl-tests bus bandwidth (GB/s, "
            "mean over 1-8 GiB) by node count; the role requires prediction × "
            "acceptance_prediction_margin for the largest count not above the hosts in the play"
        )
    if rail:
        notes.append(
            "acceptance_predicted_rail_busbw: the same for one rail (NCCL_IB_HCA = that rail's port) "
            "between two nodes, mean over 1-2 GiB"
        )
    return predicted, rail, notes


def _mean_busbw(system: System, collective: str, sizes: tuple[int, ...], nodes: int, share: float) -> float:
    from generator.perf.predict import predict_on

    vals = [predict_on(system, collective, s, nodes, net_share=share).busbw_gbytes for s in sizes]
    return round(sum(vals) / len(vals), 2)


def _rail_hcas(pool: ResolvedPool) -> tuple[list[dict[str, Any]], list[str]]:
    """One entry per compute rail: the NCCL_IB_HCA device of that rail's port (port map or pools[].ports)."""
    compute = pool.ports_for("compute")
    if pool.cloud is not None or len(compute) < 2:
        return [], []
    devices = rdma_devices(compute)
    if devices is None:
        return [], [
            "acceptance_rail_hcas: none, so no one-rail runs: the compute ports' RDMA device names of "
            f"`{pool.server_id}` are not published; declare pools[].ports"
        ]
    rails = [
        {"rail": p.index, "hca": dev, "rate_gbps": p.speed_gbps}
        for p, dev in zip(compute, devices, strict=True)
    ]
    return rails, [
        "acceptance_rail_hcas: each compute rail's port as NCCL_IB_HCA names it; the role runs "
        f"{', '.join(RAIL_COLLECTIVES)} on one rail at a time between neighbouring hosts, so "
        "acceptance-report can tell a weak cable from a weak rail"
    ]


def _acceptance(cluster: ResolvedCluster, plan: Plan, pool: ResolvedPool) -> tuple[dict[str, Any], list[str]]:
    compute = pool.ports_for("compute")
    gpus = max(1, pool.server.gpus)
    link = round(sum(p.speed_gbps for p in compute) / gpus / 8, 3) if compute else 0.0
    fabric = cluster.fabrics.get("compute")
    layer = "InfiniBand" if fabric is not None and fabric.kind == "infiniband" else "Ethernet"
    hcas = [
        {"dev": p.rdma_dev, "port": p.port, "rate_gbps": p.speed_gbps, "link_layer": layer}
        for p in compute
        if pool.cloud is None
    ]
    nvlink = ""
    if pool.gpu is not None and pool.gpu.nvlink is not None and pool.server.nvswitches > 0:
        nvlink = f"NV{pool.gpu.nvlink.links}"
    notes = [
        f"acceptance_link_gbytes: the node's compute line rate per GPU ({len(compute)} ports, {gpus} GPUs) "
        "in GB/s; the role's fall-back threshold is this × acceptance_efficiency"
    ]
    predicted, rail_predicted, predicted_notes = _acceptance_predictions(cluster, plan, pool)
    rails, rail_notes = _rail_hcas(pool)
    return {
        "acceptance_link_gbytes": link,
        "acceptance_gpus_per_node": pool.server.gpus,
        "acceptance_min_bytes": "1G",
        "acceptance_max_bytes": "8G",
        "acceptance_expected_hcas": hcas,
        "acceptance_expected_nvlink": nvlink,
        "acceptance_predicted_busbw": predicted,
        "acceptance_rail_hcas": rails,
        "acceptance_rail_collectives": list(RAIL_COLLECTIVES),
        "acceptance_rail_min_bytes": "1G",
        "acceptance_rail_max_bytes": "2G",
        "acceptance_predicted_rail_busbw": rail_predicted,
    }, notes + predicted_notes + rail_notes


# Routing tables of the RoCE rails (table = base + rail): local numbers, any unused 1-252 would do.
ROCE_RAIL_TABLE_BASE = 100


def _fabric_vars(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """host_fabric interfaces of the pool (same for every host; addresses are host vars) and LNet networks."""
    planned = onprem_plan(cluster).fabric.get(pool.hostnames[0], []) if pool.hostnames else []
    addresses = [a for a in planned if a.interface is not None]  # unnamed ports: PLT001, no host config
    interfaces = []
    for a in addresses:
        fabric = cluster.fabrics[a.purpose]
        kind = {"infiniband": "ipoib", "roce": "roce"}.get(fabric.kind, "ethernet")
        table = ROCE_RAIL_TABLE_BASE + a.rail if kind == "roce" and a.rail is not None else None
        mtu = fabric.spec.mtu if kind != "ipoib" else None  # IPoIB takes its MTU from the IB port
        interfaces.append(
            {
                "interface": a.interface,
                "purpose": a.purpose,
                "rail": a.rail,
                "kind": kind,
                "subnet": a.cidr,
                "mtu": mtu,
                "table": table,
            }
        )
    out = [
        "\n# Fabric interfaces [deployment.maas.compute_cidr/storage_cidr, address plan]: the host_fabric "
        "role "
        "writes\n# them to netplan with each host's cb_fabric_addresses; RoCE rails route by their own table."
    ]
    out.append(_yaml({"host_fabric_interfaces": interfaces}))
    lustre = [s for s in cluster.blueprint.storage if s.kind == "lustre"]
    named = [a for a in addresses if a.interface]  # LNet needs the interface's OS name
    lnet_on = [a for a in named if a.purpose == "storage"] or [a for a in named if a.purpose == "compute"]
    if lustre and lnet_on:
        fabric = cluster.fabrics[lnet_on[0].purpose]
        net = "o2ib0" if fabric.kind == "infiniband" else "tcp0"
        ifaces = ",".join(a.interface for a in lnet_on if a.interface)
        out.append(f"\n# LNet for Lustre over the {lnet_on[0].purpose} fabric ({fabric.technology})")
        out.append(_yaml({"shared_storage_lustre_lnet_networks": f"{net}({ifaces})"}))
    return "\n".join(out)


def _platform_checks(profile: nccl_emit.NcclProfile, platform: Platform | None) -> str:
    """The names and files the nccl role checks on the host, and the plug-in install its vendor publishes."""
    install = platform.plugin.install if platform is not None and platform.plugin is not None else None
    return _yaml(
        {
            "nccl_expected_devices": list(profile.devices),
            "nccl_expected_interfaces": list(profile.interfaces),
            "nccl_keep_files": list(profile.keep_files),
            "nccl_plugin_path": profile.plugin_path,
            "nccl_plugin_profile": profile.plugin_profile,
            # catalog:platforms.<id>.plugin.install: the vendor's steps, replayed by the nccl role
            "nccl_plugin_install": None
            if install is None
            else {
                "apt_keys": list(install.apt_keys),
                "steps": [{"repo": st.repo, "packages": list(st.packages)} for st in install.steps],
                "container": None if install.container is None else _container_install(install.container),
                "profile_lines": list(install.profile_lines),
                "profile_lines_on": list(install.profile_lines_on),
                "hold": list(install.hold),
                "login_profile": install.login_profile,
                "source": install.source,
            },
            # catalog:platforms.<id>.plugin.job_script: the vendor's Slurm job prolog/epilog, installed by
            # the nccl role where the Slurm fragment's Prolog=/Epilog= name it
            "nccl_job_script": _job_script(platform),
        }
    )


def _job_script(platform: Platform | None) -> dict[str, object] | None:
    js = platform.plugin.job_script if platform is not None and platform.plugin is not None else None
    if js is None:
        return None
    return {"url": js.url, "path": js.path, "mode": js.mode, "dir_mode": js.dir_mode, "source": js.source}


def _container_install(c: ContainerInstall) -> dict[str, object]:
    """catalog:platforms.<id>.plugin.install.container: the installer image and the commands around it."""
    return {
        "login": list(c.login),
        "login_path": c.login_path,
        "removes": c.removes,
        "image": c.image,
        "run": list(c.run),
        "args": list(c.args),
        "source": c.source,
    }


def pool_vars(cluster: ResolvedCluster, plan: Plan, pool: ResolvedPool) -> str:
    out = [_header(cluster, f"Variables for pool `{pool.name}` ({pool.count} × {pool.server_id})")]
    out.append(_fabric_vars(cluster, pool))
    compute_fabric = cluster.fabrics.get("compute")
    if pool.server.gpus == 0 or pool.gpu is None:
        transport = (
            {"infiniband": "ib", "roce": "roce"}.get(compute_fabric.kind, "socket")
            if compute_fabric is not None and pool.ports_for("compute")
            else "none"
        )
        out.append(_yaml({"cb_compute_transport": transport}))
        return "\n".join(out) + "\n"
    profile = nccl_emit.derive(cluster, pool, plan)
    out.extend(_gpu_vars(cluster, pool, profile))
    if profile.transport == "roce" and compute_fabric is not None:
        out.extend(_roce_qos_vars(pool, compute_fabric))
    acc, notes = _acceptance(cluster, plan, pool)
    out.append("\n# Acceptance thresholds and expectations from the plan")
    out.extend(_comment(n) for n in notes)
    out.append(_yaml(acc))
    return "\n".join(out) + "\n"


def _gpu_vars(cluster: ResolvedCluster, pool: ResolvedPool, profile: nccl_emit.NcclProfile) -> list[str]:
    """Driver facts, the NCCL settings with their reasons, the platform's names and the topology file."""
    assert pool.gpu is not None
    platform = platform_of(cluster.catalog, pool.server_id)
    out = [
        _yaml(
            {
                "cb_compute_transport": profile.transport,
                "cb_gpu_vendor": pool.gpu.vendor,
                "nvidia_driver_nvswitch": pool.server.nvswitches > 0,
                # the platform image ships a driver: checked against the branch, never replaced
                "nvidia_driver_shipped": bool(platform is not None and platform.ships_driver),
            }
        ),
        "\n# NCCL settings derived from the resolved fabric (generator/emit/nccl.py); the reason and the\n"
        "# blueprint fact [source] of each are kept with it and land in /etc/nccl.conf.",
        _yaml({"nccl_pool": pool.name, "nccl_transport": profile.transport, "nccl_plugin": profile.plugin}),
        *(_comment(n) for n in profile.notes),
        "# Names and files from the platform's port map / vendor entry; the nccl role fails when the host\n"
        "# lacks one of them (generator/platform/ports.py, blueprints/catalog/data/platforms.yaml).",
        _platform_checks(profile, platform),
        "nccl_settings:",
    ]
    for s in profile.settings:
        out.append(_comment(f"{s.name}={s.value}: {s.reason} [{s.source}]", 2))
        out.append(_yaml([{"name": s.name, "value": s.value, "reason": s.reason, "source": s.source}], 2))
    topo = nccl_emit.topology_vars(profile)
    if topo is not None:
        out.append(_comment("NCCL_TOPO_FILE layout: " + str(topo["reason"])))
    out.append(_yaml({"nccl_topology": topo}))
    return out


def _roce_qos_vars(pool: ResolvedPool, compute_fabric: ResolvedFabric) -> list[str]:
    """The RoCE lossless class the roce_qos role sets on the compute ports the port map names."""
    from blueprints.models.fabric import Lossless

    ll = compute_fabric.spec.lossless or Lossless()
    ports = pool.ports_for("compute")
    ifaces, devices = interfaces(ports), rdma_devices(ports)
    out = ["\n# RoCE lossless class [fabrics.compute.lossless] on the compute ports of the port map"]
    if ifaces is None or devices is None:  # both or neither: the role pairs them one to one
        ifaces = devices = None
        out.append(_comment(f"compute port names of `{pool.server_id}` not published: declare pools[].ports"))
    out.append(
        _yaml(
            {
                "roce_qos_interfaces": list(ifaces or ()),
                "roce_qos_rdma_devices": [d.split(":")[0] for d in devices or ()],
                "roce_qos_pfc": ll.pfc,
                "roce_qos_pfc_priority": ll.pfc_priority,
                "roce_qos_ecn": ll.ecn,
                "roce_qos_dscp": ll.dscp,
                "roce_qos_trust": ll.trust,
            }
        )
    )
    return out


ANSIBLE_CFG = """\
# Generated by cluster-blueprint. Paths are relative to this directory.
[defaults]
inventory = inventory.yml
roles_path = roles
forks = 50
gathering = smart
interpreter_python = auto_silent
callback_result_format = yaml
retry_files_enabled = False

[ssh_connection]
pipelining = True
"""


def emit(cluster: ResolvedCluster, plan: Plan, out: FsPath) -> None:
    from generator.fsutil import atomic_write_text
    from generator.resources import playbooks_dir

    src = playbooks_dir()
    for name in PLAYBOOKS:
        atomic_write_text(out / name, (src / name).read_text(encoding="utf-8"))
    shutil.copytree(src / "roles", out / "roles", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    atomic_write_text(out / "ansible.cfg", ANSIBLE_CFG)
    atomic_write_text(out / "inventory.yml", inventory(cluster, plan))
    atomic_write_text(out / "group_vars" / "all.yml", all_vars(cluster))
    for pool in cluster.pools:
        atomic_write_text(
            out / "group_vars" / f"pool_{group_name(pool.name)}.yml", pool_vars(cluster, plan, pool)
        )


class AnsibleEmitter(Emitter):
    name = NAME
    order = 20

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out)
