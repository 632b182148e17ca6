"""One ``ResolvedPool`` per blueprint pool: its server (catalogue, spec or cloud instance), GPU and NVLink,
ports and host names (checked templates, no name produced twice)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from blueprints.catalog import Catalog, CatalogError
from blueprints.catalog.schema import CATALOG_ID_RE, CloudInstance, Gpu, Server, ServerNic
from blueprints.models import NodePool
from blueprints.models.naming import is_safe_name, render_template, template_fields
from blueprints.models.nodes import ServerSpec
from generator.findings import Finding, Path, Severity
from generator.platform.ports import declared_gpu_problems, port_names
from generator.resolve.model import ResolvedPool
from generator.resolve.ports import extra_ports, pool_ports


def _server_from_spec(spec: ServerSpec) -> Server:
    return Server(
        name="custom server",
        gpu=spec.gpu,
        gpus=spec.gpus,
        gpu_interconnect=spec.gpu_interconnect,
        nvswitches=spec.nvswitches,
        nvlink_domain_gpus=spec.nvlink_domain_gpus
        if spec.nvlink_domain_gpus is not None
        else (spec.gpus if spec.gpu_interconnect.startswith("nvlink") else 1),
        pcie_gen=spec.pcie_gen,
        power_kw=spec.power_kw,
        rack_units=spec.rack_units,
        nics=tuple(
            ServerNic(
                purpose=n.purpose,
                model=n.model,
                count=n.count,
                ports=n.ports,
                speed_gbps=n.speed_gbps,
                cage_ports=n.cage_ports,
            )
            for n in spec.nics
        ),
    )


def _server_from_cloud(inst: CloudInstance) -> Server:
    return Server(
        name="cloud instance",
        gpu=inst.gpu,
        gpus=inst.gpus,
        gpu_interconnect=inst.gpu_interconnect,
        nvswitches=inst.nvswitches,
        nvlink_domain_gpus=inst.gpus,
        pcie_gen=5,
        power_kw=0.0,  # the provider's racks, not the blueprint's: nothing to place or budget
        rack_units=1,
        nics=(
            ServerNic(purpose="compute", model="cloud", count=inst.network_cards, speed_gbps=inst.nic_gbps),
        ),
    )


def _hostnames(pool: NodePool, su_size: int | None = None) -> tuple[str, ...]:
    """Explicit names, names from the pool's template, or ``<prefix><NNN>``."""
    if pool.hostnames is not None:
        return tuple(pool.hostnames)
    if pool.hostname_template is not None:
        per_rack = pool.placement.nodes_per_rack
        out = []
        for i in range(1, pool.count + 1):
            values: dict[str, object] = {"pool": pool.name, "index": i}
            if su_size:
                values.update(su=(i - 1) // su_size + 1, su_index=(i - 1) % su_size + 1)
            if per_rack:
                values.update(rack=(i - 1) // per_rack + 1, slot=(i - 1) % per_rack + 1)
            out.append(render_template(pool.hostname_template, values))
        return tuple(out)
    prefix = pool.hostname_prefix or pool.name
    width = max(3, len(str(pool.count)))
    return tuple(f"{prefix}{i:0{width}d}" for i in range(1, pool.count + 1))


def _template_errors(pool: NodePool, su_size: int | None, path: tuple[str | int, ...]) -> list[Finding]:
    """Fields a host template uses that this blueprint cannot fill, as located errors."""
    if pool.hostname_template is None:
        return []
    need = {"su": su_size, "su_index": su_size, "rack": pool.placement.nodes_per_rack}
    need["slot"] = need["rack"]
    missing = [f for f in template_fields(pool.hostname_template) if f in need and not need[f]]
    bad = [n for n in dict.fromkeys(_hostnames(pool, su_size) if not missing else ()) if not is_safe_name(n)]
    out = []
    if missing:
        what = "placement.nodes_per_rack" if {"rack", "slot"} & set(missing) else "a compute scalable_unit"
        out.append(
            Finding(
                "CAT003",
                Severity.ERROR,
                f"hostname_template `{pool.hostname_template}` uses {', '.join(missing)}, which needs {what}",
                (*path, "hostname_template"),
                "declare it, or use explicit `hostnames`",
            )
        )
    elif bad or len(set(_hostnames(pool, su_size))) != pool.count:
        out.append(
            Finding(
                "CAT003",
                Severity.ERROR,
                f"hostname_template `{pool.hostname_template}` gives "
                + (f"an invalid name `{bad[0]}`" if bad else "the same name to two nodes"),
                (*path, "hostname_template"),
                "add {index} with a width that holds the pool's count",
            )
        )
    return out


def _spec_id_problems(spec: ServerSpec, spath: Path) -> list[Finding]:
    """A finding for each GPU or NIC id of a server spec that no catalogue entry could have (ids keep the
    catalogue's pattern, CATALOG_ID_RE): the value is not echoed, it may hold anything."""
    ids: list[tuple[Path, str]] = [((*spath, "gpu"), spec.gpu)] if spec.gpu is not None else []
    ids += [((*spath, "nics", i, "model"), nic.model) for i, nic in enumerate(spec.nics)]
    message = (
        "not a catalogue id: 1 to 64 letters, digits, `.`, `_`, `+` or `-`, starting with a letter or digit"
    )
    return [
        Finding("CAT001", Severity.ERROR, message, where, "`blueprint catalog` lists the ids")
        for where, value in ids
        if not re.fullmatch(CATALOG_ID_RE, value)
    ]


class _PoolServer(NamedTuple):
    server: Server
    cloud: CloudInstance | None  # the cloud instance type the server was made from
    path: Path  # where the server's NICs, GPU and interconnect are declared (spec or server)


def _pool_server(pool: NodePool, ppath: Path, cat: Catalog, errors: list[Finding]) -> _PoolServer | None:
    """The pool's server: an explicit spec, a cloud instance type (``aws/p5.48xlarge``) or a catalogue id."""
    if pool.spec is not None:
        spath: Path = (*ppath, "spec")
        problems = _spec_id_problems(pool.spec, spath)
        if problems:
            errors.extend(problems)
            return None
        return _PoolServer(_server_from_spec(pool.spec), None, spath)
    assert pool.server is not None  # the model requires one of server / spec
    try:
        if "/" in pool.server:
            provider, _, itype = pool.server.partition("/")
            inst = cat.cloud_instance(provider, itype)
            return _PoolServer(_server_from_cloud(inst), inst, (*ppath, "server"))
        return _PoolServer(cat.server(pool.server), None, (*ppath, "server"))
    except CatalogError as exc:
        errors.append(Finding("CAT001", Severity.ERROR, exc.message, (*ppath, "server"), exc.hint))
        return None


class _Nvlink(NamedTuple):
    generation: int | None
    gbytes_bidir: float  # per GPU, article convention (0 without NVLink)


def _nvlink(srv: _PoolServer, gpu: Gpu | None, cat: Catalog, errors: list[Finding]) -> _Nvlink | None:
    """NVLink generation and per-GPU bandwidth; None (with a finding) for a generation not catalogued."""
    ic = srv.server.gpu_interconnect
    nv_gen = int(ic[6:]) if ic.startswith("nvlink") else None
    if nv_gen is None or gpu is None:
        return _Nvlink(nv_gen, 0.0)
    gen = cat.interconnects.nvlink.get(nv_gen)
    if gen is None:
        message = f"NVLink generation {nv_gen} is not in the catalogue"
        errors.append(Finding("CAT001", Severity.ERROR, message, (*srv.path, "gpu_interconnect")))
        return None
    links = gpu.nvlink.links if gpu.nvlink else 0
    return _Nvlink(nv_gen, links * gen.link_gbytes_bidir)


def resolve_pool(
    i: int,
    pool: NodePool,
    cat: Catalog,
    fabric_kinds: Mapping[str, str],
    su_size: int | None,
    errors: list[Finding],
) -> ResolvedPool | None:
    ppath: Path = ("pools", i)
    srv = _pool_server(pool, ppath, cat, errors)
    if srv is None:
        return None
    server = srv.server
    gpu = None
    if server.gpu:
        try:
            gpu = cat.gpu(server.gpu)
        except CatalogError as exc:
            errors.append(Finding("CAT001", Severity.ERROR, exc.message, (*srv.path, "gpu"), exc.hint))
            return None
    nvlink = _nvlink(srv, gpu, cat, errors)
    if nvlink is None:
        return None
    gpu_problems = declared_gpu_problems(pool, i, server.gpus)
    if gpu_problems:
        errors.extend(gpu_problems)
        return None
    names = port_names(cat, pool.server or "custom", pool, i)
    ports = pool_ports(server, pool, cat, fabric_kinds, errors, srv.path, names)
    name_errors = _template_errors(pool, su_size, ppath)
    if name_errors:
        errors.extend(name_errors)
        return None
    return ResolvedPool(
        name=pool.name,
        role=pool.role,
        count=pool.count,
        server_id=pool.server or "custom",
        server=server,
        gpu_id=server.gpu,
        gpu=gpu,
        nvlink_generation=nvlink.generation,
        nvlink_gbytes_per_gpu_bidir=nvlink.gbytes_bidir,
        nvlink_gbytes_per_gpu_dir=nvlink.gbytes_bidir / 2,
        ports=ports,
        hostnames=_hostnames(pool, su_size),
        nodes_per_rack=_nodes_per_rack(pool, server, srv.cloud),
        rows=tuple(pool.placement.rows) if pool.placement.rows is not None else None,
        cloud=srv.cloud,
        source_path=ppath,
        extra_ports=extra_ports(names, ports),
    )


def _nodes_per_rack(pool: NodePool, server: Server, cloud: CloudInstance | None) -> int | None:
    """The pool's ``placement.nodes_per_rack``; for servers whose NVLink domain spans several of them (a
    GB200 NVL72 rack's 18 trays) one domain a rack by default, since the domain is the rack's NVLink spine:
    filled by power and space, 20 trays went into one rack and a domain across three (PWR007 holds a
    declared count and the rack's power to it)."""
    if pool.placement.nodes_per_rack is not None or cloud is not None:
        return pool.placement.nodes_per_rack
    per_domain = server.nodes_per_nvlink_domain
    return per_domain if per_domain > 1 else None


def duplicate_hostnames(pools: list[ResolvedPool]) -> list[Finding]:
    """One finding per pool whose names collide with an earlier pool's (the first collision)."""
    out: list[Finding] = []
    owner: dict[str, str] = {}
    for pool in pools:
        for h in pool.hostnames:
            if h in owner:
                out.append(
                    Finding(
                        "CAT003",
                        Severity.ERROR,
                        f"hostname `{h}` of pool `{pool.name}` is also produced by pool `{owner[h]}`",
                        (*pool.source_path, "hostname_prefix"),
                        "give the pools distinct hostname_prefix values",
                    )
                )
                break
            owner[h] = pool.name
    return out
