"""Every generated Pulumi program runs under Pulumi's mocks and registers what the blueprint asks for."""

from __future__ import annotations

import collections
import ipaddress
import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES
from real_tools import needs_module
from vendor_tables import dgx_h100_compute_ports

needs_module("pulumi", "the Pulumi SDK is in the test extra")

from pulumi_cases import SSH_KEY, generate, generate_text, node_capacity, run_target  # noqa: E402
from pulumi_harness import Run  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402

pytestmark = pytest.mark.pulumi


def _target(path: Path) -> str:
    data = YAML(typ="safe", pure=True).load(path.read_text())
    return (data.get("deployment") or {}).get("target", "none")


DEPLOY_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.yaml") if _target(p) != "none")


def _check_common(run: Run, cluster, project: Path) -> None:
    # Resource names (URN = type + name) are unique.
    urns = collections.Counter((r.type, r.name) for r in run.resources)
    assert not [u for u, n in urns.items() if n > 1], "duplicate resource names"
    # One node per blueprint hostname, and every hostname exported for the inventory.
    hosts = [h for p in cluster.pools for h in p.hostnames]
    assert node_capacity(run, cluster.target) == len(hosts)
    assert sorted(run.outputs["nodes"]) == sorted(hosts)
    assert all(v["address"] for v in run.outputs["nodes"].values()), "a node has no address"
    assert run.outputs["blueprint"] == cluster.name
    # Components per concern exist.
    components = {r.type.rsplit(":", 1)[1] for r in run.resources if r.type.startswith("cluster-blueprint:")}
    assert {"Network", "Compute"} <= components


@pytest.mark.parametrize("path", DEPLOY_EXAMPLES, ids=lambda p: p.stem)
def test_every_deployment_example_runs_under_mocks(path: Path, tmp_path: Path) -> None:
    cluster = generate(path, tmp_path)
    run = run_target(cluster, tmp_path)
    _check_common(run, cluster, tmp_path)


def test_aws_p5_efa_example(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    _check_common(run, cluster, tmp_path)
    instances = run.of_type("aws:ec2/instance:Instance")
    assert len(instances) == 16
    lt = run.one("aws:ec2/launchTemplate:LaunchTemplate")
    assert lt.inputs["instanceType"] == "p5.48xlarge"
    assert lt.inputs["imageId"] == "ami-0123456789abcdef0"
    nics = lt.inputs["networkInterfaces"]
    # AWS EFA layout: one EFA per network card, card 0 / device 0 primary EFA with ENA, the rest efa-only.
    assert sorted(int(n["networkCardIndex"]) for n in nics) == list(range(32))
    by_card = {int(n["networkCardIndex"]): n for n in nics}
    assert by_card[0]["interfaceType"] == "efa" and int(by_card[0]["deviceIndex"]) == 0
    assert all(
        by_card[c]["interfaceType"] == "efa-only" and int(by_card[c]["deviceIndex"]) == 1
        for c in range(1, 32)
    )
    assert all(n["securityGroups"] == [nics[0]["securityGroups"][0]] for n in nics)
    # Capacity Block: the pinned offering is bought (no new offering lookup), targeted with market type
    # capacity-block, protected and blind to later offering ids.
    block = run.one("aws:ec2/capacityBlockReservation:CapacityBlockReservation")
    assert block.inputs["capacityBlockOfferingId"] == "cb-0123456789abcdef0"
    assert not [tok for tok, _ in run.calls if tok.endswith("getCapacityBlockOffering")]
    opts = run.options[(block.name, "CapacityBlockReservation")]
    assert opts.protect and "capacity_block_offering_id" in opts.ignore_changes
    assert lt.inputs["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert lt.inputs["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"]
    assert not run.of_type("aws:ec2/placementGroup:PlacementGroup")  # blocks are already co-located
    # EFA security group: all traffic from and to itself.
    sg = run.one("aws:ec2/securityGroup:SecurityGroup")
    self_rules = [
        r
        for r in run.resources
        if r.type.startswith("aws:vpc/securityGroup")
        and r.inputs.get("referencedSecurityGroupId") == f"{sg.name}-id"
    ]
    assert {r.type.rsplit(":", 1)[1] for r in self_rules} == {
        "SecurityGroupIngressRule",
        "SecurityGroupEgressRule",
    }
    assert all(r.inputs["ipProtocol"] == "-1" for r in self_rules)
    # FSx for Lustre over EFA, sized to a valid EFA step for the tier that delivers 50 GB/s.
    fsx = run.one("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert fsx.inputs["deploymentType"] == "PERSISTENT_2" and fsx.inputs["efaEnabled"] is True
    assert int(fsx.inputs["perUnitStorageThroughput"]) == 500
    assert int(fsx.inputs["storageCapacity"]) == 105600 and int(fsx.inputs["storageCapacity"]) % 9600 == 0
    assert fsx.inputs["securityGroupIds"] == [f"{sg.name}-id"]
    # Tags and hostnames.
    gpu001 = next(i for i in instances if i.name == "gpu001")
    assert gpu001.inputs["tags"]["blueprint"] == "aws-p5-efa" and gpu001.inputs["tags"]["pool"] == "gpu"
    assert "hostname: gpu001" in gpu001.inputs["userData"]
    assert run.one("aws:ec2/keyPair:KeyPair").inputs["publicKey"] == SSH_KEY
    assert run.outputs["storage"]["fsx"]["protocol"] == "lustre"


AWS_VARIANT = """
apiVersion: cluster-blueprint/v1
name: aws-p4d-odcr
pools:
  - {name: train, count: 6, server: aws/p4d.24xlarge}
storage:
  - {name: home, kind: managed, mount: /home/shared}
deployment:
  target: aws
  cloud: {region: us-west-2, zone: us-west-2b, capacity: reservation, efa_only_cards: false, managed_storage: nfs}
"""


def test_aws_reservation_efs_variant(tmp_path: Path) -> None:
    cluster, project = generate_text(AWS_VARIANT, tmp_path)
    run = run_target(cluster, project)
    _check_common(run, cluster, project)
    pg = run.one("aws:ec2/placementGroup:PlacementGroup")
    assert pg.inputs["strategy"] == "cluster"
    odcr = run.one("aws:ec2/capacityReservation:CapacityReservation")
    assert int(odcr.inputs["instanceCount"]) == 6 and odcr.inputs["instanceType"] == "p4d.24xlarge"
    assert odcr.inputs["placementGroupArn"] == f"arn:mock:aws:ec2/placementGroup:PlacementGroup:{pg.name}"
    lt = run.one("aws:ec2/launchTemplate:LaunchTemplate")
    assert lt.inputs["placement"]["groupName"] == pg.name
    assert "instanceMarketOptions" not in lt.inputs
    nics = lt.inputs["networkInterfaces"]
    assert [n["interfaceType"] for n in nics] == ["efa"] * 4  # efa_only_cards: false
    assert not run.of_type("aws:fsx/lustreFileSystem:LustreFileSystem")
    assert run.one("aws:efs/fileSystem:FileSystem").inputs["throughputMode"] == "elastic"
    assert run.outputs["storage"]["home"]["protocol"] == "nfs"


def test_azure_nd_h100_v5_example(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "azure-ndh100v5.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    _check_common(run, cluster, tmp_path)
    vmss = run.one("azure-native:compute:VirtualMachineScaleSet")
    assert (
        vmss.inputs["sku"]["name"] == "Standard_ND96isr_H100_v5" and int(vmss.inputs["sku"]["capacity"]) == 32
    )
    assert vmss.inputs["singlePlacementGroup"] is True and vmss.inputs["orchestrationMode"] == "Uniform"
    assert vmss.inputs["overprovision"] is False
    image = vmss.inputs["virtualMachineProfile"]["storageProfile"]["imageReference"]
    assert (image["publisher"], image["offer"], image["sku"]) == ("microsoft-dsvm", "ubuntu-hpc", "2204")
    keys = vmss.inputs["virtualMachineProfile"]["osProfile"]["linuxConfiguration"]["ssh"]["publicKeys"]
    assert keys[0]["keyData"] == SSH_KEY
    assert vmss.inputs["zones"] == ["1"]
    amlfs = run.one("azure-native:storagecache:AmlFilesystem")
    assert amlfs.inputs["sku"]["name"] == "AMLFS-Durable-Premium-250"
    assert amlfs.inputs["storageCapacityTiB"] == 128
    assert run.outputs["nodes"]["gpu001"]["address"] == "gpu-u1-000000"
    assert run.outputs["nodes"]["gpu032"]["address"] == "gpu-u1-00000v"  # instance 31 in base 36


def test_azure_managed_lustre_gets_the_subnet_its_size_needs(tmp_path: Path) -> None:
    """384 TiB of Managed Lustre went into a /24 whatever its size; Microsoft's table asks a /23 or larger
    from 200 TiB ("Azure Managed Lustre file system prerequisites", Network size requirements). The 128 TiB
    example keeps its /24 (96-196 TiB: /24)."""
    text = (EXAMPLES / "azure-ndh100v5.yaml").read_text()
    assert "capacity_tib: 128\n    throughput_gbytes: 30\n" in text
    cluster, project = generate_text(
        text.replace("capacity_tib: 128\n    throughput_gbytes: 30\n", "capacity_tib: 384\n"), tmp_path
    )
    run = run_target(cluster, project)
    subnets = {r.name: r.inputs["addressPrefix"] for r in run.of_type("azure-native:network:Subnet")}
    storage = [p for n, p in subnets.items() if n.endswith("-storage")]
    assert storage == ["10.20.128.0/23"], subnets
    compute = [p for n, p in subnets.items() if n.endswith("-compute")]
    assert compute == ["10.20.0.0/17"], subnets


AZURE_VARIANT = """
apiVersion: cluster-blueprint/v1
name: azure-big
pools:
  - {name: gpu, count: 150, server: azure/Standard_ND96isr_H200_v5}
fabrics:
  compute: {technology: infiniband-ndr}
storage:
  - {name: home, kind: managed, mount: /home, capacity_tib: 4}
deployment:
  target: azure
  cloud: {region: westeurope, capacity: spot, managed_storage: nfs}
"""


def test_azure_split_scale_sets_nfs_spot(tmp_path: Path) -> None:
    cluster, project = generate_text(AZURE_VARIANT, tmp_path)
    run = run_target(cluster, project)
    _check_common(run, cluster, project)
    sets = sorted(run.of_type("azure-native:compute:VirtualMachineScaleSet"), key=lambda r: r.name)
    assert [int(s.inputs["sku"]["capacity"]) for s in sets] == [75, 75]
    assert [s.inputs["tags"]["su"] for s in sets] == ["1", "2"]
    assert all(s.inputs["virtualMachineProfile"]["priority"] == "Spot" for s in sets)
    assert "zones" not in sets[0].inputs
    nodes = run.outputs["nodes"]
    assert nodes["gpu075"]["su"] == 1 and nodes["gpu076"]["su"] == 2 and nodes["gpu076"]["instance_id"] == 0
    share = run.one("azure-native:storage:FileShare")
    assert share.inputs["enabledProtocols"] == "NFS" and int(share.inputs["shareQuota"]) == 4096
    account = run.one("azure-native:storage:StorageAccount")
    assert account.inputs["kind"] == "FileStorage" and account.inputs["enableHttpsTrafficOnly"] is False


def test_azure_nfs_storages_get_an_account_each(tmp_path: Path) -> None:
    """Two NFS file systems whose account names cut to one (a 16-character blueprint name leaves none of the
    storage's; `homedata` and `home-data` differ only in a hyphen) were two StorageAccounts of one URN, which
    Pulumi refuses; a name that cuts to itself alone keeps the name it always had (a deployed account keeps
    its URN)."""
    text = AZURE_VARIANT.replace("name: azure-big", "name: azure-cluster-prod").replace(
        "  - {name: home, kind: managed, mount: /home, capacity_tib: 4}",
        "  - {name: home, kind: managed, mount: /home, capacity_tib: 4}\n"
        "  - {name: homedata, kind: managed, mount: /data, capacity_tib: 4}",
    )
    cluster, project = generate_text(text, tmp_path)
    run = run_target(cluster, project)
    accounts = {
        r.inputs["tags"]["storage"]: r.name for r in run.of_type("azure-native:storage:StorageAccount")
    }
    assert set(accounts) == {"home", "homedata"} and len(set(accounts.values())) == 2, accounts
    assert all(len(a) == 16 and a.startswith("azureclus") and a.isalnum() for a in accounts.values()), (
        accounts
    )
    shares = {r.inputs["shareName"] for r in run.of_type("azure-native:storage:FileShare")}
    assert shares == {"home", "homedata"}
    (tmp_path / "single").mkdir()
    single = run_target(*generate_text(AZURE_VARIANT, tmp_path / "single"))
    assert single.one("azure-native:storage:StorageAccount").name == "azurebighome"


def test_gcp_a3_ultra_example(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "gcp-a3-ultra.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    _check_common(run, cluster, tmp_path)
    vms = run.of_type("gcp:compute/instance:Instance")
    assert len(vms) == 16 and {v.inputs["name"] for v in vms} == set(cluster.pools[0].hostnames)
    nics = vms[0].inputs["networkInterfaces"]
    assert [n["nicType"] for n in nics] == ["GVNIC"] * 2 + ["MRDMA"] * 8
    roce = [r for r in run.of_type("gcp:compute/network:Network") if "networkProfile" in r.inputs]
    assert len(roce) == 1
    assert (
        roce[0].inputs["networkProfile"]
        == "projects/test-project/global/networkProfiles/europe-west1-b-vpc-roce"
    )
    assert int(roce[0].inputs["mtu"]) == 8896
    # The 8 RDMA NICs share the RoCE VPC, each on its own subnet.
    assert {n["network"] for n in nics[2:]} == {f"{roce[0].name}-id"}
    assert len({n["subnetwork"] for n in nics[2:]}) == 8
    policy = run.one("gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["groupPlacementPolicy"]["collocation"] == "COLLOCATED"
    assert vms[0].inputs["resourcePolicies"].endswith(policy.name)
    assert vms[0].inputs["reservationAffinity"]["specificReservation"]["values"] == ["a3-ultra-reservation"]
    assert vms[0].inputs["scheduling"]["onHostMaintenance"] == "TERMINATE"
    # A3 Ultra consumes its reservation reservation-bound (cluster-toolkit a3ultra blueprints).
    assert vms[0].inputs["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"
    assert vms[0].inputs["bootDisk"]["initializeParams"]["type"] == "hyperdisk-balanced"
    lustre = run.one("gcp:lustre/instance:Instance")
    assert (lustre.inputs["capacityGib"], lustre.inputs["perUnitStorageThroughput"]) == ("108000", "500")
    assert lustre.inputs["network"].startswith("projects/test-project/global/networks/")
    assert run.one("gcp:servicenetworking/connection:Connection")


GCP_VARIANT = """
apiVersion: cluster-blueprint/v1
name: gcp-mega
pools:
  - {name: gpu, count: 4, server: gcp/a3-megagpu-8g}
storage:
  - {name: home, kind: managed, mount: /home, capacity_tib: 2}
deployment:
  target: gcp
  cloud: {region: us-central1, zone: us-central1-c, capacity: spot, managed_storage: nfs}
"""


def test_gcp_a3_mega_gpu_vpcs_filestore_spot(tmp_path: Path) -> None:
    cluster, project = generate_text(GCP_VARIANT, tmp_path)
    run = run_target(cluster, project)
    _check_common(run, cluster, project)
    networks = run.of_type("gcp:compute/network:Network")
    assert len(networks) == 9 and not any(
        "networkProfile" in n.inputs for n in networks
    )  # 1 host + 8 GPU VPCs
    nics = run.of_type("gcp:compute/instance:Instance")[0].inputs["networkInterfaces"]
    assert [n["nicType"] for n in nics] == ["GVNIC"] * 9
    assert len({n["network"] for n in nics}) == 9  # every NIC in its own VPC
    assert all(int(n.inputs["mtu"]) == 8244 for n in networks)
    scheduling = run.of_type("gcp:compute/instance:Instance")[0].inputs["scheduling"]
    assert scheduling["provisioningModel"] == "SPOT"
    fs = run.one("gcp:filestore/instance:Instance")
    assert fs.inputs["tier"] == "ZONAL" and int(fs.inputs["fileShares"]["capacityGb"]) == 2048


def test_oci_bm_h100_example(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "oci-bm-h100.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    _check_common(run, cluster, tmp_path)
    cn = run.one("oci:Core/clusterNetwork:ClusterNetwork")
    assert int(cn.inputs["instancePools"][0]["size"]) == 16
    assert cn.inputs["placementConfiguration"]["availabilityDomain"] == "Uocm:US-ASHBURN-AD-2"
    launch = run.one("oci:Core/instanceConfiguration:InstanceConfiguration").inputs["instanceDetails"][
        "launchDetails"
    ]
    assert launch["shape"] == "BM.GPU.H100.8"
    assert launch["capacityReservationId"] == "ocid1.capacityreservation.oc1.iad.example"
    assert launch["sourceDetails"]["imageId"] == "ocid1.image.oc1..test-gpu-image"
    assert {p["name"] for p in launch["agentConfig"]["pluginsConfigs"]} >= {"Compute HPC RDMA Authentication"}
    assert launch["metadata"]["ssh_authorized_keys"] == SSH_KEY
    export = run.one("oci:FileStorage/export:Export")
    assert export.inputs["path"] == "/home"
    # Hostnames follow launch order (time_created), not OCID order.
    data = json.loads((tmp_path / "cluster.json").read_text())
    base = ipaddress.ip_network(data["network"]["compute"]).network_address
    assert run.outputs["nodes"]["gpu001"]["address"] == str(base + 10 + 16)
    assert run.outputs["nodes"]["gpu016"]["address"] == str(base + 10 + 1)


OCI_VARIANT = """
apiVersion: cluster-blueprint/v1
name: oci-lustre
pools:
  - {name: gpu, count: 4, server: oci/BM.GPU.H200.8}
fabrics:
  compute: {technology: roce-v2-400}
storage:
  - {name: scratch, kind: managed, mount: /scratch, capacity_tib: 50, throughput_gbytes: 20}
deployment:
  target: oci
  cloud: {region: us-ashburn-1, zone: AD-1}
"""


def test_oci_lustre_variant(tmp_path: Path) -> None:
    cluster, project = generate_text(OCI_VARIANT, tmp_path)
    run = run_target(cluster, project)
    _check_common(run, cluster, project)
    fs = run.one("oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem")
    size = int(fs.inputs["capacityInGbs"])
    assert size % 10400 == 0 and size >= 31200
    tier = int(fs.inputs["performanceTier"].rsplit("_", 1)[1])
    assert tier * size / 1099.511627776 / 1000 >= 20  # the chosen tier delivers the asked 20 GB/s
    assert fs.inputs["fileSystemName"] == "scratch"


def test_maas_onprem_example(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "maas-onprem-h100.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    _check_common(run, cluster, tmp_path)
    machines = run.of_type("maas:index/instance:Instance")
    assert len(machines) == 38
    dgx001 = next(m for m in machines if m.name == "dgx001")
    assert dgx001.inputs["allocateParams"] == {
        "hostname": "dgx001",
        "tags": ["maas-onprem-h100-pool-dgx"],
        "pool": "gpu-cluster",
        "zone": "hall-a",
    }
    assert dgx001.inputs["deployParams"] == {"distroSeries": "jammy"}
    tags = {t.inputs["name"]: t.inputs["machines"] for t in run.of_type("maas:index/tag:Tag")}
    assert len(tags["maas-onprem-h100-pool-dgx"]) == 32 and len(tags["maas-onprem-h100-su1"]) == 32
    assert set(tags["maas-onprem-h100-rail0"]) == {f"dgx{i:03d}" for i in range(1, 33)}
    rack_tags = [t for t in tags if "-rack-" in t]
    assert sum(len(tags[t]) for t in rack_tags) == 38  # every machine in exactly one rack
    vlans = sorted(int(v.inputs["vid"]) for v in run.of_type("maas:index/vlan:Vlan"))
    assert vlans == [*range(100, 108), 200]  # 8 compute rails + storage
    ranges = run.of_type("maas:index/subnetIpRange:SubnetIpRange")
    assert all(r.inputs["type"] == "reserved" for r in ranges) and len(ranges) == 9
    provider = run.one("pulumi:providers:maas")
    assert provider.inputs["apiUrl"] == "http://maas.test:5240/MAAS"
    assert "ck:tk:secret" not in json.dumps({k: v for k, v in provider.inputs.items() if k != "apiKey"})
    node = run.outputs["nodes"]["dgx001"]
    assert ipaddress.ip_address(node["address"]) in ipaddress.ip_network("10.10.0.0/16")
    # rail 0 of a DGX H100 is ibp24s0 (User Guide Table 6, test data)
    rail0 = dgx_h100_compute_ports()[0].netdev
    assert node["fabric_addresses"][rail0] == "10.100.0.10/19" and node["su"] == 1 and node["rack"]


def test_a_misspelt_argument_fails_the_run(tmp_path: Path) -> None:
    """The mocks run catches what `pulumi preview` would: the SDK rejects unknown keyword arguments."""
    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    main = tmp_path / "__main__.py"
    main.write_text(main.read_text().replace("interface_type=nic[", "interface_kind=nic["))
    with pytest.raises(TypeError, match="interface_kind"):
        run_target(cluster, tmp_path)
    shutil.rmtree(tmp_path)


def test_managed_lustre_past_the_vendor_subnet_table_is_warned_once_where_it_is_sized(tmp_path: Path) -> None:
    """Microsoft's table stops at 400 TiB (/23). DEP008 warns past it from the same sum the address plan
    takes its prefix from (address_plan.storage_subnet), at the last managed storage: 512 TiB asked is
    528 delivered (the SKU's steps); 384 TiB is quiet."""
    from generator.findings import Severity
    from generator.pipeline import check

    text = (EXAMPLES / "azure-ndh100v5.yaml").read_text()
    old = "capacity_tib: 128\n    throughput_gbytes: 30\n"
    for tib, warned in ((384, False), (512, True)):
        path = tmp_path / f"amlfs-{tib}.yaml"
        path.write_text(text.replace(old, f"capacity_tib: {tib}\n"))
        found = [f for f in check(path).findings if f.rule == "DEP008" and "subnet table" in f.message]
        assert [f.severity for f in found] == ([Severity.WARNING] if warned else []), found
        if warned:
            assert (
                "528 TiB of file systems, past the 400 TiB" in found[0].message and "/23" in found[0].message
            )
            assert found[0].path[-1] == "capacity_tib"
