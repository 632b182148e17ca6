"""NCCL settings derived from the resolved fabric: each value, and the fact that chose it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from ansible_helpers import DATA, EXAMPLES

from generator.emit import nccl
from generator.pipeline import load_and_resolve
from generator.plan.build import build_plan


def _cluster(path: Path):  # type: ignore[no-untyped-def]
    return load_and_resolve(path)[1]


def _pool(cluster, name: str):  # type: ignore[no-untyped-def]
    return next(p for p in cluster.pools if p.name == name)


@pytest.fixture(scope="module")
def superpod():  # type: ignore[no-untyped-def]
    cluster = _cluster(EXAMPLES / "superpod-h100-4su.yaml")
    return cluster, build_plan(cluster)


def test_superpod_ib_settings(superpod) -> None:
    cluster, plan = superpod
    prof = nccl.derive(cluster, _pool(cluster, "dgx"), plan)
    env = prof.env()
    assert prof.transport == "ib"
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in range(8))
    assert env["NCCL_SOCKET_IFNAME"] == "=eth0"
    assert env["NCCL_IB_SL"] == "0"
    assert env["NCCL_CROSS_NIC"] == "0"  # rail-optimised fat-tree
    assert env["NCCL_COLLNET_ENABLE"] == "1" and env["SHARP_COLL_ENABLE_SAT"] == "1"  # qm9700 + sm.sharp
    assert prof.plugin == "nccl-rdma-sharp-plugins"
    assert env["NCCL_NVLS_ENABLE"] == "1"  # H100 + NVSwitch
    assert env["NCCL_NET_GDR_LEVEL"] == "PXB"
    assert "NCCL_IB_GID_INDEX" not in env and "NCCL_IB_TC" not in env  # RoCE only
    assert "NCCL_TOPO_FILE" not in env and prof.topology is None  # bare-metal NVSwitch box: sysfs is right
    # the storage NICs are named as the ones the exact match keeps out
    assert "mlx5_8, mlx5_9, mlx5_10" in prof.get("NCCL_IB_HCA").reason


def test_every_setting_names_a_real_blueprint_fact(superpod) -> None:
    cluster, plan = superpod
    fields = set(type(cluster.blueprint).model_fields)
    for prof in nccl.profiles(cluster, plan):
        for s in prof.settings:
            assert s.reason and s.source, s
            if s.source.startswith("catalog:"):
                section, key = s.source[len("catalog:") :].split(".")[:2]
                assert key in getattr(cluster.catalog, section), s
            else:
                assert s.source.split(".")[0].split("[")[0] in fields, s


def test_hca_order_follows_the_plans_rails(superpod) -> None:
    """Swap the rails of mlx5_0 and mlx5_1 on the first host: NCCL_IB_HCA must follow the cabling."""
    cluster, plan = superpod
    host = _pool(cluster, "dgx").hostnames[0]
    swapped = []
    for link in plan.links:
        if link.fabric == "compute" and host in (link.a.device, link.b.device) and link.rail in (0, 1):
            link = link._replace(rail=1 - link.rail)  # Link is a NamedTuple
        swapped.append(link)
    prof = nccl.derive(cluster, _pool(cluster, "dgx"), replace(plan, links=tuple(swapped)))
    assert prof.env()["NCCL_IB_HCA"].startswith("=mlx5_1:1,mlx5_0:1,mlx5_2:1")


def test_sharp_off_when_the_subnet_manager_does_not_run_it() -> None:
    cluster = _cluster(DATA / "ib-hgx-nfs.yaml")
    prof = nccl.derive(cluster, _pool(cluster, "gpu"))
    env = prof.env()
    assert env["NCCL_COLLNET_ENABLE"] == "0"
    assert "subnet_manager.sharp is off" in prof.get("NCCL_COLLNET_ENABLE").reason
    assert "SHARP_COLL_ENABLE_SAT" not in env and prof.plugin is None
    assert env["NCCL_IB_SL"] == "1"  # fabrics.compute.subnet_manager.service_level


def test_roce_pcie_settings() -> None:
    cluster = _cluster(DATA / "roce-pcie.yaml")
    prof = nccl.derive(cluster, _pool(cluster, "l40s"), build_plan(cluster))
    env = prof.env()
    assert prof.transport == "roce"
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_IB_TC"] == str(24 << 2)  # lossless.dscp 24
    assert "NCCL_IB_SL" not in env
    assert env["NCCL_CROSS_NIC"] == "1"  # not rail-optimised
    assert env["NCCL_NVLS_ENABLE"] == "0"  # L40S: no NVLink SHARP
    assert env["NCCL_NET_GDR_LEVEL"] == "PHB"
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"
    # PCIe box: a topology file pins GPU pairs to their NIC, split over two sockets
    assert env["NCCL_TOPO_FILE"] == nccl.TOPO_PATH
    topo = prof.topology
    assert topo is not None and topo.link_speed == "16.0 GT/s PCIe"
    assert [[(s.gpus, s.nics) for s in node] for node in topo.numa_nodes] == [
        [((0, 1), ("mlx5_0",))],
        [((2, 3), ("mlx5_1",))],
    ]
    assert topo.numa_nodes[0][0].nic_mbps == 400_000


def _cloud(tmp_path: Path, target: str, server: str):  # type: ignore[no-untyped-def]
    text = (
        f"apiVersion: cluster-blueprint/v1\nname: c-{target}\npools:\n  - {{name: gpu, count: 4, server: {server}}}\n"
        f"deployment:\n  target: {target}\n  cloud: {{region: r1}}\n"
    )
    p = tmp_path / f"{target}.yaml"
    p.write_text(text)
    cluster = _cluster(p)
    return nccl.derive(cluster, cluster.pools[0])


def test_cloud_fabrics(tmp_path: Path) -> None:
    efa = _cloud(tmp_path, "aws", "aws/p5.48xlarge")
    assert efa.transport == "efa" and efa.plugin == "aws-ofi-nccl"
    assert efa.env()["FI_PROVIDER"] == "efa" and efa.env()["FI_EFA_USE_DEVICE_RDMA"] == "1"
    assert "NCCL_IB_HCA" not in efa.env()
    tcpxo = _cloud(tmp_path, "gcp", "gcp/a3-megagpu-8g")
    assert tcpxo.transport == "tcpxo"
    assert tcpxo.env()["NCCL_FASTRAK_IFNAME"] == ",".join(f"eth{i}" for i in range(1, 9))  # 8 data NICs
    tcpx = _cloud(tmp_path, "gcp", "gcp/a3-highgpu-8g")
    assert tcpx.env()["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4"
    azure = _cloud(tmp_path, "azure", "azure/Standard_ND96isr_H100_v5")
    assert azure.transport == "ib" and azure.env()["NCCL_IB_HCA"] == "mlx5_ib"
    assert azure.env()["NCCL_NET_GDR_LEVEL"] == "SYS" and azure.env()["NCCL_SOCKET_IFNAME"] == "=eth0"
    assert azure.topology is not None  # VM: virtual PCI tree


def test_rendered_files_are_deterministic_and_complete(superpod) -> None:
    cluster, plan = superpod
    prof = nccl.derive(cluster, _pool(cluster, "dgx"), plan)
    conf = nccl.render(prof, "nccl.conf.j2")
    assert conf == nccl.render(nccl.derive(cluster, _pool(cluster, "dgx"), plan), "nccl.conf.j2")
    lines = conf.splitlines()
    for s in prof.settings:
        i = lines.index(f"{s.name}={s.value}")
        assert lines[i - 1].startswith("# ") and s.source in lines[i - 1]
    env = nccl.render(prof, "nccl.env.j2")
    assert "NCCL_IB_HCA==mlx5_0:1" in env
