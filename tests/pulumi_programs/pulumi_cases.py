"""Generate a Pulumi project from a blueprint and run it with the config and invokes each target needs."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

from pulumi_harness import Run, run_program

from generator.emit.pulumi import emit
from generator.load import load_file
from generator.plan.build import build_plan
from generator.resolve import ResolvedCluster, resolve

SSH_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKeyOnly test@example"


def generate(blueprint: Path, out: Path) -> ResolvedCluster:
    cluster = resolve(load_file(blueprint))
    emit(cluster, build_plan(cluster), out)
    return cluster


def generate_text(text: str, tmp: Path) -> tuple[ResolvedCluster, Path]:
    src = tmp / "blueprint.yaml"
    src.write_text(text)
    out = tmp / "pulumi"
    out.mkdir()
    return generate(src, out), out


def _oci_calls(project: Path) -> dict[str, Any]:
    data = json.loads((project / "cluster.json").read_text())
    count = sum(p["count"] for p in data["pools"])
    base = ipaddress.ip_network(data["network"]["compute"]).network_address

    def instances(args: dict[str, Any]) -> dict[str, Any]:
        # Launch order deliberately differs from id order: the program must sort by time_created.
        rows = [
            {
                "id": f"ocid1.instance.oc1..{(count - i):05d}",
                "timeCreated": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
                "displayName": f"inst-{i}",
            }
            for i in range(count)
        ]
        return {
            "instances": rows,
            "clusterNetworkId": args.get("clusterNetworkId", ""),
            "compartmentId": "c",
            "id": "cn",
        }

    def instance(args: dict[str, Any]) -> dict[str, Any]:
        n = int(args["instanceId"].rsplit(".", 1)[-1])
        return {"id": args["instanceId"], "instanceId": args["instanceId"], "privateIp": str(base + 10 + n)}

    return {
        "oci:Identity/getAvailabilityDomains:getAvailabilityDomains": {
            "availabilityDomains": [
                {"name": f"Uocm:US-ASHBURN-AD-{i}", "id": f"ad{i}", "compartmentId": "c"} for i in (1, 2, 3)
            ],
            "compartmentId": "c",
            "id": "ads",
        },
        "oci:Core/getClusterNetworkInstances:getClusterNetworkInstances": instances,
        "oci:Core/getInstance:getInstance": instance,
    }


def _maas_computed(project: Path) -> dict[str, Any]:
    # MAAS reports the static addresses it was asked to set on the machine's links (plus a link-local one).
    return {
        "maas:index/instance:Instance": lambda a: {
            "ipAddresses": [n["ipAddress"] for n in a.inputs.get("networkInterfaces", [])] + ["169.254.3.3"],
            "fqdn": f"{a.name}.maas",
        }
    }


# DescribeImages as the provider returns it: the Ubuntu DLAMIs boot from /dev/sda1; the Amazon Linux AMI a test
# names by id (AL2023_AMI) from /dev/xvda
AL2023_AMI = "ami-0a1b2c3d4e5f6a7b8"


def _ami(args: dict[str, Any]) -> dict[str, Any]:
    filters = {f["name"]: f["values"] for f in args.get("filters") or []}
    ami = (filters.get("image-id") or ["ami-0123456789abcdef0"])[0]
    root = "/dev/xvda" if ami == AL2023_AMI else "/dev/sda1"
    return {"id": ami, "imageId": ami, "rootDeviceName": root}


def run_target(cluster: ResolvedCluster, project: Path, extra: dict[str, str] | None = None) -> Run:
    """Run the generated program with the user config its README asks for and mocked invokes
    (`extra` overrides stack settings; an empty value removes one)."""
    name = cluster.name
    target = cluster.target
    ssh = {f"{name}:sshPublicKey": SSH_KEY}
    if target == "aws":
        return run_program(
            project,
            {
                **ssh,
                f"{name}:capacityBlockStart": "2026-03-01T11:30:00Z",
                f"{name}:capacityBlockOfferingId": "cb-0123456789abcdef0",
                **(extra or {}),
            },
            call_results={
                "aws:ec2/getAmi:getAmi": _ami,
                "aws:ec2/getCapacityBlockOffering:getCapacityBlockOffering": {
                    "capacityBlockOfferingId": "cb-0fedcba9876543210",
                    "availabilityZone": "us-east-1d",
                    "startDateRange": "2026-03-02T11:30:00Z",
                    "endDateRange": "2026-03-09T11:30:00Z",
                    "upfrontFee": "123456.00",
                    "currencyCode": "USD",
                    "id": "cbo",
                },
                "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation": {
                    "id": "cr-0123456789abcdef0",
                    "availabilityZone": "us-east-1f",
                },
            },
        )
    if target == "azure":
        return run_program(project, {**ssh, **(extra or {})})
    if target == "gcp":
        return run_program(project, {**ssh, "gcp:project": "test-project", **(extra or {})})
    if target == "oci":
        return run_program(
            project,
            {
                **ssh,
                f"{name}:compartmentId": "ocid1.compartment.oc1..test",
                f"{name}:imageId": "ocid1.image.oc1..test-gpu-image",
                **(extra or {}),
            },
            call_results=_oci_calls(project),
        )
    if target == "maas":
        return run_program(
            project,
            {
                "maas:apiUrl": "http://maas.test:5240/MAAS",
                "maas:apiKey": "ck:tk:secret",
                f"{name}:managementInterface": "mgmt-test0",
            },
            secret_keys=("maas:apiKey",),
            call_results={
                "maas:index/getSubnet:getSubnet": lambda a: {
                    "id": "7",
                    "cidr": a["cidr"],
                    "fabric": "fabric-0",
                    "vid": 0,
                    "name": a["cidr"],
                }
            },
            computed=_maas_computed(project),
        )
    raise AssertionError(f"no runner for target {target}")


# The resource that is "one node" on each target, and how many of them the blueprint asks for.
NODE_RESOURCE = {
    "aws": "aws:ec2/instance:Instance",
    "gcp": "gcp:compute/instance:Instance",
    "maas": "maas:index/instance:Instance",
}


def node_capacity(run: Run, target: str) -> int:
    """Nodes the registered resources will create (scale-set and instance-pool sizes count too)."""
    if target in NODE_RESOURCE:
        return len(run.of_type(NODE_RESOURCE[target]))
    if target == "azure":
        return sum(
            int(r.inputs["sku"]["capacity"])
            for r in run.of_type("azure-native:compute:VirtualMachineScaleSet")
        )
    if target == "oci":
        return sum(
            int(p["size"])
            for r in run.of_type("oci:Core/clusterNetwork:ClusterNetwork")
            for p in r.inputs["instancePools"]
        )
    raise AssertionError(target)
