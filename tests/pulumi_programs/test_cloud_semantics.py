"""Cloud semantics under Pulumi mocks: what the programs mean, not only what they register.

- AWS Capacity Block: the subnets and instances are in the block's Availability Zone; the purchase is
  pinned, protected and never repeated (running the program twice with unchanged inputs registers the same
  inputs for every resource, so `pulumi up` would replace nothing); without a pinned offering nothing is
  created and the offering is shown.
- GCP A3 Ultra: reservation-bound provisioning, the current accelerator image family, and a firewall rule
  admitting the Managed Lustre private-services range on the Lustre ports.
- OCI: no image, no resources (a clear error before anything is created).
Expected values come from the providers' documentation, cited in blueprints/catalog/data/cloud.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES

pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")

from pulumi_cases import generate, run_target
from pulumi_harness import Run

pytestmark = pytest.mark.pulumi

BLOCK_ZONE = "us-east-1d"  # the mocked CapacityBlockReservation's availabilityZone (AWS decides it)


def _inputs(run: Run) -> list[tuple[str, str, str]]:
    return sorted((r.type, r.name, json.dumps(r.inputs, sort_keys=True, default=str)) for r in run.resources)


def test_aws_subnets_and_instances_are_in_the_capacity_blocks_zone(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    assert cluster.blueprint.deployment.cloud.zone != BLOCK_ZONE  # the configured zone is not the block's
    subnets = run.of_type("aws:ec2/subnet:Subnet")
    assert subnets and {s.inputs["availabilityZone"] for s in subnets} == {BLOCK_ZONE}
    lt = run.one("aws:ec2/launchTemplate:LaunchTemplate")
    assert lt.inputs["placement"]["availabilityZone"] == BLOCK_ZONE


def test_aws_existing_block_zone_comes_from_the_reservation(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    run = run_target(cluster, tmp_path, {f"{cluster.name}:reservationId": "cr-0123456789abcdef0"})
    assert not run.of_type("aws:ec2/capacityBlockReservation:CapacityBlockReservation")  # nothing bought
    subnets = run.of_type("aws:ec2/subnet:Subnet")
    assert {s.inputs["availabilityZone"] for s in subnets} == {"us-east-1f"}


@pytest.mark.parametrize(
    "example", ["aws-p5-efa", "gcp-a3-ultra", "azure-ndh100v5", "oci-bm-h100", "maas-onprem-h100"]
)
def test_a_second_run_with_unchanged_inputs_changes_nothing(example: str, tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / f"{example}.yaml", tmp_path)
    first = run_target(cluster, tmp_path)
    second = run_target(cluster, tmp_path)
    assert _inputs(first) == _inputs(second)
    assert first.options == second.options


def test_aws_without_a_pinned_offering_buys_nothing_and_names_it(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    with pytest.raises(
        Exception, match=r"cb-0fedcba9876543210 in us-east-1d.*capacityBlockOfferingId"
    ) as exc:
        run_target(cluster, tmp_path, {f"{cluster.name}:capacityBlockOfferingId": ""})
    assert "not refundable" in str(exc.value)


def test_gcp_a3_ultra_reservation_image_and_lustre_firewall(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "gcp-a3-ultra.yaml", tmp_path)
    run = run_target(cluster, tmp_path)
    vm = run.of_type("gcp:compute/instance:Instance")[0]
    assert vm.inputs["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"
    # cluster-toolkit a3ultra-vm.yaml: project ubuntu-os-accelerator-images, family ...-with-nvidia-570
    assert vm.inputs["bootDisk"]["initializeParams"]["image"] == (
        "projects/ubuntu-os-accelerator-images/global/images/family/ubuntu-accelerator-2204-amd64-with-nvidia-570"
    )
    rules = [r for r in run.of_type("gcp:compute/firewall:Firewall") if r.name.endswith("-lustre")]
    assert len(rules) == 1
    rule = rules[0].inputs
    assert rule["direction"] == "INGRESS" and rule["sourceRanges"] == ["10.250.0.0/20"]
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["988", "6988"]}]
    host_vpc = run.of_type("gcp:compute/network:Network")[0]
    assert rule["network"] == f"{host_vpc.name}-id"


def test_oci_without_an_image_stops_before_creating_anything(tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / "oci-bm-h100.yaml", tmp_path)
    with pytest.raises(Exception, match="no OCI GPU/HPC image configured"):
        run_target(cluster, tmp_path, {f"{cluster.name}:imageId": ""})


def test_gcp_two_managed_lustre_share_one_private_services_connection(tmp_path: Path) -> None:
    """One private services access connection per VPC and service: a second `servicenetworking.Connection`
    on the same network is refused ("Cannot modify allocated ranges in CreateConnection. Please use
    UpdateConnection"), so the second Managed Lustre shares the first one's connection and range."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    doc = yaml.load((EXAMPLES / "gcp-a3-ultra.yaml").read_text())
    extra = {**doc["storage"][0], "name": "extra", "mount": "/lustre2", "filesystem": "extra"}
    doc["storage"].append(extra)
    source = tmp_path / "two-lustre.yaml"
    with source.open("w") as fh:
        yaml.dump(doc, fh)
    cluster = generate(source, tmp_path / "pulumi")
    run = run_target(cluster, tmp_path / "pulumi")
    (link,) = run.of_type("gcp:servicenetworking/connection:Connection")
    assert len(run.of_type("gcp:compute/globalAddress:GlobalAddress")) == 1
    assert len([r for r in run.of_type("gcp:compute/firewall:Firewall") if r.name.endswith("-lustre")]) == 1
    lustre = run.of_type("gcp:lustre/instance:Instance")
    assert sorted(r.inputs["instanceId"] for r in lustre) == sorted(
        [f"{cluster.name}-scratch", f"{cluster.name}-extra"]
    )
    assert link.inputs["service"] == "servicenetworking.googleapis.com"


@pytest.mark.parametrize(
    ("example", "managed_storage"),
    [("gcp-a3-ultra", "lustre"), ("gcp-a3-ultra", "nfs"), ("azure-ndh100v5", "nfs")],
)
def test_dep012_checks_the_names_the_program_registers(
    example: str, managed_storage: str, tmp_path: Path
) -> None:
    """DEP012 holds the limited names of generator/deploy/cloud_names.py to the providers' limits: each is a
    name the program under mocks registers (a program that renames a resource must change both)."""
    from ruamel.yaml import YAML

    from generator.deploy.cloud_names import cloud_names
    from generator.pipeline import load_and_resolve

    yaml = YAML(typ="safe", pure=True)
    doc = yaml.load((EXAMPLES / f"{example}.yaml").read_text())
    doc["deployment"]["cloud"]["managed_storage"] = managed_storage
    source = tmp_path / f"{example}.yaml"
    with source.open("w") as fh:
        yaml.dump(doc, fh)
    names = cloud_names(load_and_resolve(source)[1])
    assert names
    cluster = generate(source, tmp_path / "pulumi")
    run = run_target(cluster, tmp_path / "pulumi")
    keys = ("name", "instanceId", "vmScaleSetName", "shareName")
    registered = {str(r.inputs[k]) for r in run.resources for k in keys if k in r.inputs}
    registered |= {r.name for r in run.resources if not any(k in r.inputs for k in keys)}  # auto-named
    assert {n.name for n in names} <= registered, {n.name for n in names} - registered


def test_aws_root_volume_is_sized_on_the_amis_root_device(tmp_path: Path) -> None:
    """The launch template sized `/dev/sda1` whatever the AMI: on an Amazon Linux image (root /dev/xvda) that
    added an empty 512 GiB volume and left the root at its snapshot's size. The root device name is now read
    from the AMI (DescribeImages' RootDeviceName)."""
    from pulumi_cases import AL2023_AMI

    cluster = generate(EXAMPLES / "aws-p5-efa.yaml", tmp_path)
    for extra, root in (({}, "/dev/sda1"), ({f"{cluster.name}:imageId": AL2023_AMI}, "/dev/xvda")):
        run = run_target(cluster, tmp_path, extra)
        (lt,) = run.of_type("aws:ec2/launchTemplate:LaunchTemplate")
        (disk,) = lt.inputs["blockDeviceMappings"]
        assert disk["deviceName"] == root and disk["ebs"]["volumeSize"] == 512
        if extra:
            assert lt.inputs["imageId"] == AL2023_AMI


def test_dep012_holds_the_auto_named_lustre_resources_to_the_limit_less_the_suffix(tmp_path: Path) -> None:
    """A 40-character blueprint name with storage `scratch-lustre-shared` kept the Lustre instance at 62
    characters, which DEP012 checked, but the private services range (`…-psa`, 66) and the Lustre firewall
    rule (`…-lustre`, 69) are auto-named with Pulumi's 9-character suffix past GCP's 63: refused."""
    from generator.pipeline import check

    text = (EXAMPLES / "gcp-a3-ultra.yaml").read_text()
    source = tmp_path / "long.yaml"
    name = "g" * 40
    source.write_text(
        text.replace("name: gcp-a3-ultra\n", f"name: {name}\n", 1).replace(
            "name: scratch", "name: scratch-lustre-shared"
        )
    )
    found = [f.message for f in check(source).findings if f.rule == "DEP012"]
    assert any(
        f"`{name}-scratch-lustre-shared-psa` (66 characters)" in m and "1 to 54" in m for m in found
    ), found
    assert any("Lustre firewall rule" in m for m in found), found
    # the host VPCs' `-internal` rules are auto-named too: 40 + 15 = 55 characters, past 54
    assert any(f"`{name}-host0-internal` (55 characters)" in m for m in found), found
