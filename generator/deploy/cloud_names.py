"""The names the GCP and Azure programs give the resources whose names the providers limit.

The programs (templates/pulumi/<target>/__main__.py) build these names from the blueprint's name and its pool
and storage names, which the schema holds to 1-40 characters each: joined, they can pass what the provider
takes, and the program then fails at `pulumi up`. DEP012 checks them here; tests/pulumi_programs runs each
program under Pulumi's mocks and holds these names to the ones it registers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from generator.deploy.rdma_layout import rdma_domains

if TYPE_CHECKING:
    from generator.findings import Path
    from generator.resolve import ResolvedCluster, ResolvedPool


class CloudName(NamedTuple):
    path: Path  # the blueprint value that makes the name longest
    what: str
    name: str
    shortest: int
    longest: int
    source: str
    pattern: str | None = None  # what else the provider takes of it (a regular expression), where it says


# pulumi-gcp: ResourcePolicy `name` and Lustre Instance `instance_id` "must be 1-63 characters long and comply
# with RFC1035"; Filestore Instance `name` likewise (the resource name of the Google APIs).
GCP_NAME = (1, 63, "pulumi-gcp ResourcePolicy name / Lustre instance_id / Filestore name: 1-63 characters")
# pulumi-gcp Firewall and GlobalAddress `name`: "must be 1-63 characters long" (RFC 1035); left to Pulumi's
# auto-naming, the logical name takes a random suffix of a hyphen and 8 hex characters (pulumi/pulumi#16188:
# "an RDS database named (for instance) foo-ab158dc9"), so 54 characters are left for it
AUTONAME_SUFFIX = 9
GCP_AUTONAMED = (
    1,
    63 - AUTONAME_SUFFIX,
    "pulumi-gcp Firewall / GlobalAddress name: 1-63 characters, less the 9 of Pulumi's auto-name suffix",
)
# Azure "Naming rules and restrictions for Azure resources": Microsoft.Compute virtualMachineScaleSets 1-64
# characters on Linux; Microsoft.Storage storageAccounts/fileServices/shares 3-63 characters.
AZURE_SCALE_SET = (1, 64, "Azure naming rules: virtualMachineScaleSets, 1-64 characters (Linux)")
AZURE_SHARE = (
    3,
    63,
    "Azure Files, naming shares: 3-63 lowercase letters, digits and hyphens, starting and ending with a "
    "letter or digit, no two hyphens in a row",
    r"[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]",
)


def cloud_names(cluster: ResolvedCluster) -> list[CloudName]:
    """Every limited name the cluster's program will register (none for other targets)."""
    name = cluster.name
    managed = [(i, s) for i, s in enumerate(cluster.blueprint.storage) if s.kind == "managed"]
    out: list[CloudName] = []
    pools = [p for p in cluster.pools if p.cloud is not None]  # the programs' DATA["pools"]
    if cluster.target == "gcp":
        for p in pools:
            where = (*p.source_path, "name")
            out.append(CloudName(where, "compact placement policy", f"{name}-{p.name}-compact", *GCP_NAME))
        for i, st in managed:
            out.append(CloudName(("storage", i, "name"), "file system", f"{name}-{st.name}", *GCP_NAME))
        out += _gcp_firewalls(cluster, pools)
        cloud = cluster.blueprint.deployment.cloud
        if managed and cloud is not None and cloud.managed_storage == "lustre":
            # the first Managed Lustre file system opens private services access: a peering range and a
            # firewall rule the program leaves Pulumi to auto-name
            i, st = managed[0]
            for what, suffix in (("private services range", "psa"), ("Lustre firewall rule", "lustre")):
                out.append(
                    CloudName(("storage", i, "name"), what, f"{name}-{st.name}-{suffix}", *GCP_AUTONAMED)
                )
    elif cluster.target == "azure":
        for p in pools:
            assert p.cloud is not None
            for su in range(1, len(rdma_domains(p.count, p.cloud.rdma_domain_max_vms)) + 1):
                where = (*p.source_path, "name")
                out.append(CloudName(where, "scale set", f"{name}-{p.name}-su{su}", *AZURE_SCALE_SET))
        cloud = cluster.blueprint.deployment.cloud
        if cloud is not None and cloud.managed_storage == "nfs":
            for i, st in managed:
                out.append(CloudName(("storage", i, "name"), "NFS file share", st.name, *AZURE_SHARE))
    return out


def _gcp_firewalls(cluster: ResolvedCluster, pools: list[ResolvedPool]) -> list[CloudName]:
    """The firewall rules the GCP program leaves to Pulumi's auto-naming: one `-internal` rule per host VPC
    and per GPU NIC VPC of gVNIC networks (a RoCE VPC needs none), and the `-iap-ssh` rule."""
    from generator.deploy.address_plan import address_plan

    where: Path = ("name",)
    rdma = any(p.cloud is not None and p.cloud.gpu_nic_type == "MRDMA" for p in pools)
    subnets = [s.name for s in address_plan(cluster).subnets]
    ruled = [n for n in subnets if n.startswith("host") or (n.startswith("gpu") and not rdma)]
    out = [CloudName(where, "firewall rule", f"{cluster.name}-{n}-internal", *GCP_AUTONAMED) for n in ruled]
    out.append(CloudName(where, "firewall rule", f"{cluster.name}-iap-ssh", *GCP_AUTONAMED))
    return out
