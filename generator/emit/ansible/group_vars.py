"""``group_vars/``: ``all.yml`` (every host: OS, storage mounts) and one ``pool_<pool>.yml`` per pool (fabric
interfaces, GPU and NCCL settings, RoCE QoS, the acceptance run and its predicted bus bandwidth)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from blueprints.catalog.perf import perf_data
from blueprints.catalog.schema import for_branch
from generator.deploy.addresses import onprem_plan
from generator.deploy.images import image_tuned
from generator.emit import nccl as nccl_emit
from generator.emit.ansible.yaml_text import comment, header, yaml_block
from generator.platform.ports import interfaces, platform_of, rdma_devices, ships_driver
from generator.resolve.imex_channels import channel_mode, slurm_switch
from generator.resolve.nvlink_blocks import named_domains

if TYPE_CHECKING:
    from blueprints.catalog.schema import (
        ContainerInstall,
        DriverPackages,
        ImexFacts,
        NvswitchPackage,
        Platform,
    )
    from blueprints.models.software import Software
    from generator.perf.system import System
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster, ResolvedFabric, ResolvedPool
    from generator.resolve.model import NicPort


# nccl-tests sweep the acceptance role runs (-b .. -e, factor 2); the predictions average the same sizes.
ACCEPTANCE_SIZES = (1 << 30, 2 << 30, 4 << 30, 8 << 30)


ACCEPTANCE_COLLECTIVES = ("all_reduce", "all_gather", "alltoall")


# One-rail runs (NCCL_IB_HCA = one rail's port) between neighbouring hosts: a shorter sweep, all_reduce only.
RAIL_SIZES = (1 << 30, 2 << 30)


RAIL_COLLECTIVES = ("all_reduce",)


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
    out = [header(cluster, "Variables for every host")]
    out.append(
        "# Hosts without GPUs/HCAs (image staging, tests) set this false: services, modules and\n"
        "# hardware checks are skipped; files and packages are still installed."
    )
    out.append(yaml_block({"cb_hardware_present": True, "cb_cluster_name": cluster.name, "cb_os": sw.os}))
    out.append("\n# Pinned versions [software.*]")
    out.append(
        yaml_block(
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
    out += _cuda_repo_vars(cluster)
    if image_tuned(cluster):
        out.append(
            "\n# The cloud's HPC image (Azure/azhpc-images) ships DOCA-OFED, NCCL and its own tuning: "
            "keep them\n"
            "# (no vendor repository, no NCCL packages on top) [blueprints/catalog/data/cloud.yaml images]"
        )
        out.append(
            yaml_block(
                {"cb_image_tuned": True, "doca_ofed_manage_repo": False, "nccl_install_packages": False}
            )
        )
    out.append("\n# Shared storage [storage]: written to fstab by the shared_storage role")
    for note in skipped:
        out.append(comment("not in fstab: " + note))
    out.append(yaml_block({"shared_storage_mounts": mounts}))
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
        "in GB/s; the role's fall-back threshold is this × acceptance_efficiency",
        "acceptance_prediction_margin: the share of the prediction a run must reach, the acceptance ratio "
        "acceptance-report applies (the catalogue's policy.acceptance_ratio)",
    ]
    predicted, rail_predicted, predicted_notes = _acceptance_predictions(cluster, plan, pool)
    rails, rail_notes = _rail_hcas(pool)
    alone: dict[str, Any] = {}
    if not compute:  # a collective between its hosts has no network: the role checks the GPUs only
        alone = {"acceptance_run_nccl_tests": False}
        notes.append("acceptance_run_nccl_tests: false, the pool has no port on the compute fabric")
    return alone | {
        "acceptance_link_gbytes": link,
        "acceptance_gpus_per_node": pool.server.gpus,
        "acceptance_min_bytes": "1G",
        "acceptance_max_bytes": "8G",
        "acceptance_expected_hcas": hcas,
        "acceptance_expected_nvlink": nvlink,
        "acceptance_predicted_busbw": predicted,
        "acceptance_prediction_margin": perf_data().policy.acceptance_ratio.value,
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
                **({"routes": list(a.routes)} if a.routes else {}),  # via the host's cb_fabric_gateways
                # a tenant's IPoIB: the P_Key child the role creates on this parent (addresses.ipoib_child)
                **({"parent": a.child_of[0], "pkey": f"0x{a.child_of[1]:04x}"} if a.child_of else {}),
            }
        )
    out = [
        "\n# Fabric interfaces [deployment.maas.compute_cidr/storage_cidr, address plan]: the host_fabric "
        "role writes\n# them to netplan (Ubuntu, Debian) or NetworkManager profiles (RHEL / Rocky 9) "
        "with each host's\n# cb_fabric_addresses; RoCE rails route by their own table."
    ]
    out.append(yaml_block({"host_fabric_interfaces": interfaces}))
    lustre = [s for s in cluster.blueprint.storage if s.kind == "lustre"]
    named = [a for a in addresses if a.interface]  # LNet needs the interface's OS name
    lnet_on = [a for a in named if a.purpose == "storage"] or [a for a in named if a.purpose == "compute"]
    if lustre and lnet_on:
        fabric = cluster.fabrics[lnet_on[0].purpose]
        net = "o2ib0" if fabric.kind == "infiniband" else "tcp0"
        ifaces = ",".join(a.interface for a in lnet_on if a.interface)
        out.append(f"\n# LNet for Lustre over the {lnet_on[0].purpose} fabric ({fabric.technology})")
        out.append(yaml_block({"shared_storage_lustre_lnet_networks": f"{net}({ifaces})"}))
    return "\n".join(out)


def _platform_checks(profile: nccl_emit.NcclProfile, platform: Platform | None) -> str:
    """The names and files the nccl role checks on the host, and the plug-in install its vendor publishes."""
    install = platform.plugin.install if platform is not None and platform.plugin is not None else None
    return yaml_block(
        {
            "nccl_expected_devices": list(profile.device_ports),
            "nccl_expected_interfaces": list(profile.interfaces),
            "nccl_keep_files": list(profile.keep_files),
            "nccl_plugin_path": profile.plugin_path,
            "nccl_plugin_profile": profile.plugin_profile,
            # NCCL_IB_PKEY: the index and the full-member P_Key each NCCL port's table must hold there
            "nccl_expected_pkey": _expected_pkey(profile),
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


def _expected_pkey(profile: nccl_emit.NcclProfile) -> dict[str, object] | None:
    """NCCL_IB_PKEY's index, the full-member P_Key each NCCL port's table must hold there, and those ports
    (``device/port``, from NCCL_IB_HCA), for the nccl role's check."""
    hca = profile.get("NCCL_IB_HCA")
    if profile.pkey is None or hca is None:
        return None
    ports = [e.replace(":", "/") if ":" in e else f"{e}/1" for e in hca.value.lstrip("=^").split(",") if e]
    return {"index": profile.pkey[0], "pkey": f"0x{profile.pkey[1]:04x}", "ports": ports}


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
    out = [header(cluster, f"Variables for pool `{pool.name}` ({pool.count} × {pool.server_id})")]
    out.append(_fabric_vars(cluster, pool))
    out.append(_lldp_vars(cluster, pool))
    compute_fabric = cluster.fabrics.get("compute")
    if pool.server.gpus == 0 or pool.gpu is None:
        transport = (
            {"infiniband": "ib", "roce": "roce"}.get(compute_fabric.kind, "socket")
            if compute_fabric is not None and pool.ports_for("compute")
            else "none"
        )
        out.append(yaml_block({"cb_compute_transport": transport}))
        out.extend(_roce_qos_vars(cluster, pool, compute=transport == "roce"))
        return "\n".join(out) + "\n"
    profile = nccl_emit.derive(cluster, pool, plan)
    out.extend(_gpu_vars(cluster, pool, profile))
    out.extend(_imex_vars(cluster, pool))
    out.extend(_roce_qos_vars(cluster, pool, compute=profile.transport == "roce"))
    acc, notes = _acceptance(cluster, plan, pool)
    out.append("\n# Acceptance thresholds and expectations from the plan")
    out.extend(comment(n) for n in notes)
    out.append(yaml_block(acc))
    return "\n".join(out) + "\n"


def _lldp_vars(cluster: ResolvedCluster, pool: ResolvedPool) -> str:
    """lldp_agent on hosts whose own ports (not a BMC) are cabled into an Ethernet/RoCE fabric of the site:
    verify-cabling reads those cables from the switches' LLDP neighbours, which name the host only when it
    advertises (docs/cabling.md). Cloud instances have no cables to verify."""
    switched = {name for name, fab in cluster.fabrics.items() if fab.kind in ("ethernet", "roce")}
    host_ports = [
        p for p in pool.ports if p.purpose in switched and (p.purpose != "management" or p.role == "inband")
    ]
    enabled = pool.cloud is None and bool(host_ports)
    return (
        "\n# LLDP [lldp_agent]: the hosts advertise their plan name and interface names on their "
        "Ethernet/RoCE\n# fabric ports, which `blueprint verify-cabling` reads from the switches "
        "(docs/cabling.md)\n" + yaml_block({"lldp_agent_enabled": enabled})
    )


def _gpu_vars(cluster: ResolvedCluster, pool: ResolvedPool, profile: nccl_emit.NcclProfile) -> list[str]:
    """Driver facts, the NCCL settings with their reasons, the platform's names and the topology file."""
    assert pool.gpu is not None
    platform = platform_of(cluster.catalog, pool.server_id)
    out = [
        yaml_block(
            {
                "cb_compute_transport": profile.transport,
                "cb_gpu_vendor": pool.gpu.vendor,
                "nvidia_driver_nvswitch": pool.server.nvswitches > 0,
                # the platform image ships a driver: checked against the branch, never replaced
                "nvidia_driver_shipped": ships_driver(cluster.catalog, pool.server_id),
            }
        ),
        *_driver_packages(cluster, pool),
        "\n# NCCL settings derived from the resolved fabric (generator/emit/nccl.py); the reason and the\n"
        "# blueprint fact [source] of each are kept with it and land in /etc/nccl.conf.",
        yaml_block(
            {"nccl_pool": pool.name, "nccl_transport": profile.transport, "nccl_plugin": profile.plugin}
        ),
        *(comment(n) for n in profile.notes),
        "# Names and files from the platform's port map / vendor entry; the nccl role fails when the host\n"
        "# lacks one of them (generator/platform/ports.py, blueprints/catalog/data/platforms.yaml).",
        _platform_checks(profile, platform),
        "nccl_settings:",
    ]
    for s in profile.settings:
        out.append(comment(f"{s.name}={s.value}: {s.reason} [{s.source}]", 2))
        out.append(
            yaml_block([{"name": s.name, "value": s.value, "reason": s.reason, "source": s.source}], 2)
        )
    topo = nccl_emit.topology_vars(profile)
    if topo is not None:
        out.append(comment("NCCL_TOPO_FILE layout: " + str(topo["reason"])))
    out.append(yaml_block({"nccl_topology": topo}))
    return out


# The roles that add NVIDIA's CUDA repository, and those that lock packages with
# community.general.yum_versionlock (which needs the DNF plug-in): each gets the same catalogue values.
CUDA_REPO_ROLES = ("nvidia_driver", "nccl")
VERSIONLOCK_ROLES = ("nvidia_driver", "nccl", "doca_ofed")


def _cuda_repo_vars(cluster: ResolvedCluster) -> list[str]:
    """NVIDIA's CUDA repository for the blueprint's OS (base URL, distribution and architecture directories,
    signing key) and the DNF versionlock plug-in, from one catalogue entry for every role that uses them."""
    compat = cluster.catalog.software
    os = cluster.software.os
    pkgs = compat.driver_packages_for(os) if compat is not None else None
    if compat is None or pkgs is None:
        return []
    out: list[str] = []
    repo = compat.cuda_repo
    if repo is not None:
        facts = {
            "repo_base": repo.url,
            "repo_distro": pkgs.repo_dirs[os],
            "repo_arches": dict(repo.arch_dirs),
            "repo_key_file": pkgs.repo_key,
        }
        out += [
            "",
            comment(
                f"NVIDIA's CUDA repository for {os}, <base><distro>/<arches[architecture]>/ "
                f"[catalog:software.cuda_repo, software.driver_packages]: {repo.source}; "
                f"{pkgs.repo_dirs_source}; key {pkgs.repo_key_source}"
            ),
            yaml_block(
                {f"{role}_{name}": value for role in CUDA_REPO_ROLES for name, value in facts.items()}
            ),
        ]
    if pkgs.versionlock_package:
        out += [
            "",
            comment(f"DNF versionlock plugin [catalog:software.driver_packages]: {pkgs.versionlock_source}"),
            yaml_block(
                {f"{role}_versionlock_package": pkgs.versionlock_package for role in VERSIONLOCK_ROLES}
            ),
        ]
    return out


def _driver_packages(cluster: ResolvedCluster, pool: ResolvedPool) -> list[str]:
    """The driver's kernel-module flavour for the pool's GPU architecture and the package names and DNF
    module stream of the blueprint's OS, from blueprints/catalog/data/software.yaml (its repository and
    key: _cuda_repo_vars)."""
    compat = cluster.catalog.software
    if compat is None or pool.gpu is None or pool.gpu.vendor != "nvidia":
        return []
    flavour = compat.kernel_modules(pool.gpu.sm_arch)
    found = compat.arch_of(pool.gpu.sm_arch)
    why = found[1].kernel_modules_source if found is not None and found[1].kernel_modules else None
    where = f"catalog:software.architectures.{found[0]}" if found is not None else "catalog:software"
    out = [
        "",
        comment(f"NVIDIA kernel-module flavour [{where}]: " + (why or "none required, the proprietary kept")),
        yaml_block({"nvidia_driver_flavor": flavour}),
    ]
    sw = cluster.software
    pkgs = compat.driver_packages_for(sw.os)
    if pkgs is None:
        return out
    kind = pkgs.flavour(flavour)
    branch = sw.driver_branch
    fabricmanager, fabricmanager_source = _nvswitch_package(sw, pkgs, "fabricmanager")
    nscq, nscq_source = _nvswitch_package(sw, pkgs, "nscq")
    names: dict[str, Any] = {
        "nvidia_driver_packages": [for_branch(p, branch) for p in kind.packages],
        "nvidia_driver_version_package": for_branch(kind.version_package, branch),
        "nvidia_driver_module_stream": for_branch(kind.module_stream, branch) if kind.module_stream else "",
        # '' where neither the catalogue nor the blueprint names one: SFT011 refuses such a blueprint on
        # NVSwitch pools, and the role stops before installing a guessed name
        "nvidia_driver_fabricmanager_package": fabricmanager,
        "nvidia_driver_nscq_package": nscq,
    }
    out.append(comment(f"Driver packages for {sw.os} [catalog:software.driver_packages]: {kind.source}"))
    out.append(comment(f"Fabric Manager {fabricmanager_source}"))
    out.append(comment(f"NSCQ {nscq_source}"))
    out.append(yaml_block(names))
    return out


def _nvswitch_package(sw: Software, pkgs: DriverPackages, which: NvswitchPackage) -> tuple[str, str]:
    """The Fabric Manager (``which`` fabricmanager) or NSCQ (nscq) package of software.driver_branch for the
    OS and where its name comes from: the blueprint's ``software.<which>_package``, else the catalogue's
    range holding the branch, else none (SFT011)."""
    declared = sw.fabricmanager_package if which == "fabricmanager" else sw.nscq_package
    if declared:
        return declared, f"software.{which}_package (driver branch {sw.driver_branch})"
    entry = pkgs.nvswitch_for(which, sw.driver_branch)
    if entry is None:
        return "", f"driver branch {sw.driver_branch}: no package recorded for {sw.os} (SFT011)"
    return for_branch(entry.name, sw.driver_branch), f"branch {sw.driver_branch}: {entry.source}"


def _roce_qos_vars(cluster: ResolvedCluster, pool: ResolvedPool, *, compute: bool) -> list[str]:
    """The RoCE lossless class of each RoCE fabric the pool's ports are cabled to, which the roce_qos role
    sets on those ports: the compute fabric's where the pool's compute traffic is RoCE (``compute``), and
    every other RoCE fabric's (storage) on a site's own hosts, whose switches carry the class (a cloud
    provider configures its own fabrics: NET004). Nothing where no class applies: the role skips the pool."""
    classes: list[dict[str, Any]] = []
    notes: list[str] = []
    for name, fabric in cluster.fabrics.items():
        ports = pool.ports_for(name)
        if fabric.kind != "roce" or not ports:
            continue
        if (name == "compute" and not compute) or (name != "compute" and pool.cloud is not None):
            continue
        qos, note = _roce_qos_class(pool, fabric, ports)
        classes.append(qos)
        notes.extend([note] if note else [])
    if not classes:
        return []
    classes.sort(key=lambda c: c["fabric"] != "compute")  # the compute class first
    head = "\n# RoCE lossless class [fabrics.<fabric>.lossless] on each RoCE fabric's ports of the port map"
    return [head, *(comment(n) for n in notes), yaml_block({"roce_qos_classes": classes})]


def _roce_qos_class(
    pool: ResolvedPool, fabric: ResolvedFabric, ports: tuple[NicPort, ...]
) -> tuple[dict[str, Any], str | None]:
    """One fabric's class on the pool's ports of it, and a note when their names are not published (the
    role then fails, asking for pools[].ports)."""
    from blueprints.models.fabric import Lossless

    ll = fabric.spec.lossless or Lossless()
    ifaces, devices = interfaces(ports), rdma_devices(ports)
    note = None
    if ifaces is None or devices is None:  # both or neither: the role pairs them one to one
        ifaces = devices = None
        note = f"{fabric.name} port names of `{pool.server_id}` not published: declare pools[].ports"
    qos: dict[str, Any] = {
        "fabric": fabric.name,
        "interfaces": list(ifaces or ()),
        "rdma_devices": [d.split(":")[0] for d in devices or ()],
        "pfc": ll.pfc,
        "pfc_priority": ll.pfc_priority,
        "ecn": ll.ecn,
        "dscp": ll.dscp,
        "trust": ll.trust,
    }
    if fabric.spec.mtu:  # the role sets it after netplan has; without it, the role's default
        qos["mtu"] = fabric.spec.mtu
    return qos, note


def nvlink_domains(cluster: ResolvedCluster) -> dict[str, dict[str, tuple[str, ...]]]:
    """Each pool's multi-node NVLink domains by name (``nvl01``, ...): the Slurm blocks' names and nodes
    (generator/resolve/nvlink_blocks.named_domains), so an IMEX domain is a Slurm block of the same name."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for name, pool, hosts in named_domains(cluster.pools):
        out.setdefault(pool.name, {})[name] = hosts
    return out


def _imex_vars(cluster: ResolvedCluster, pool: ResolvedPool) -> list[str]:
    """The nvidia_imex role's variables where the pool's NVLink domain spans nodes (GB200 NVL72); nothing
    elsewhere. CUDA imports memory across trays only through IMEX ([IMEX] "Deployment Models": the service
    "must be initiated and initialized before launching CUDA applications"). The domains name host names:
    the role writes their addresses (cb_mgmt_address) at play time, so a cloud's provider-given addresses
    (`blueprint inventory --from-stack`) are the ones used."""
    domains = nvlink_domains(cluster).get(pool.name)
    imex = cluster.catalog.software.imex if cluster.catalog.software is not None else None
    if not domains or imex is None:
        return []
    head = "\n" + comment(
        f"NVIDIA IMEX [catalog:software.imex]: the NVLink domain of {pool.server.nvlink_domain_gpus} GPUs "
        f"spans {pool.server.nodes_per_nvlink_domain} nodes; the nvidia_imex role writes each host's domain "
        "(its hosts' cb_mgmt_address, one a line) to the node list and runs the service"
    )
    package, package_source = _imex_package(cluster, imex)
    facts = {
        "nvidia_imex_domains": {name: list(hosts) for name, hosts in domains.items()},
        # the package of software.driver_branch ('' where neither the catalogue nor the blueprint names
        # one: SFT010 refuses that blueprint, and the role stops before installing a guessed name)
        "nvidia_imex_package": package,
        "nvidia_imex_service": f"{imex.service}.service",
        "nvidia_imex_config_file": imex.config_file,
        "nvidia_imex_node_config_key": imex.node_config_key,
        "nvidia_imex_nodes_config_file": imex.nodes_config_file,
        # channel 0 for every job only where Slurm does not give each job its own (resolve/imex_channels.py)
        "nvidia_imex_create_channel0": channel_mode(cluster) != "slurm",
    }
    sources = [
        package_source,
        imex.service_source,
        imex.config_source,
        imex.nodes_config_source,
        _channels_source(cluster),
    ]
    return [head, *(comment(s) for s in sources), yaml_block(facts)]


def _channels_source(cluster: ResolvedCluster) -> str:
    """Why the role makes channel 0 for every job, or not."""
    mode = channel_mode(cluster)
    switch = slurm_switch(cluster)
    if mode == "slurm" and switch is not None:
        return f"IMEX channels: Slurm {cluster.software.slurm} gives each job its own ({switch.source})"
    if mode == "asked":
        return "IMEX channels: channel 0 for every job (software.imex_channels: shared)"
    return "IMEX channels: channel 0 for every job, Slurm does not hand them out (SLM001)"


def _imex_package(cluster: ResolvedCluster, imex: ImexFacts) -> tuple[str, str]:
    """The IMEX package of software.driver_branch and where its name comes from: the blueprint's
    ``software.imex_package``, else the catalogue's entry for the branch, else none (SFT010)."""
    sw = cluster.software
    if sw.imex_package:
        return sw.imex_package, f"software.imex_package (driver branch {sw.driver_branch})"
    entry = imex.package_for(sw.driver_branch)
    if entry is None:
        return "", f"driver branch {sw.driver_branch}: no IMEX package recorded (SFT010)"
    return for_branch(entry.name, sw.driver_branch), f"branch {sw.driver_branch}: {entry.source}"
