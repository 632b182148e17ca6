"""DEP008: shared storage a cloud provisions (kind: managed) fits the provider's service."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class ManagedStorageFit(Rule):
    """`kind: managed` storage is created by the Pulumi program as the target's own file system
    (`deployment.cloud.managed_storage`: `lustre` = FSx for Lustre / Azure Managed Lustre / Google Cloud
    Managed Lustre / OCI File Storage with Lustre; `nfs` = EFS / Azure Files NFS / Filestore / OCI File
    Storage). These services come in fixed sizes and throughput tiers: the requested `capacity_tib` and
    `throughput_gbytes` are rounded up to a valid size and the smallest tier that delivers the
    throughput (reported as info). A size beyond the service maximum is an error, and managed storage
    on an on-prem target has nothing to be created by. Other storage kinds on a cloud are not created:
    the cluster mounts the server the blueprint names."""

    id = "DEP008"
    severity = Severity.ERROR
    title = "managed storage does not fit the target's file-system service"
    rationale = "managed file systems have fixed capacity steps and throughput tiers"
    fix = "adjust capacity_tib / throughput_gbytes, choose managed_storage: lustre|nfs, or a cloud target"
    tags = ("deployment", "cloud", "storage")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        if not cluster.blueprint.storage:  # nothing to check: the deployment modules are not imported
            return
        from generator.deploy.managed_storage import managed_storage_spec, size_managed, storage_efa

        target = cluster.target
        spec = managed_storage_spec(cluster) if cluster.is_cloud else None
        last: tuple[str | int, ...] | None = None  # the last managed storage, where a joint finding goes
        for i, st in enumerate(cluster.blueprint.storage):
            path = ("storage", i)
            if st.kind != "managed":
                if cluster.is_cloud:
                    yield self.finding(
                        f"storage `{st.name}` ({st.kind}) is not created on {target}: the nodes mount "
                        f"the existing server",
                        (*path, "kind"),
                        severity=Severity.INFO,
                        hint="use kind: managed to have the program create the cloud's file system",
                    )
                continue
            if not cluster.is_cloud:
                yield self.finding(
                    f"storage `{st.name}` is kind managed (a cloud's file system), but the target is "
                    f"`{target}`",
                    (*path, "kind"),
                    hint="use kind lustre/nfs/beegfs/... with a server or pool on-prem",
                )
                continue
            if spec is None:
                yield self.finding(
                    f"the catalogue has no {cluster.blueprint.deployment.cloud.managed_storage} "  # type: ignore[union-attr]
                    f"service for {target}",
                    (*path, "kind"),
                )
                continue
            efa = storage_efa(cluster, spec)
            sizing = size_managed(spec, st.capacity_tib, st.throughput_gbytes, efa)
            last = path
            for note in sizing.notes:
                sev = Severity.ERROR if "maximum" in note else Severity.INFO
                key = "capacity_tib" if st.capacity_tib is not None else "kind"
                yield self.finding(f"storage `{st.name}`: {note}", (*path, key), severity=sev)
            if target == "aws" and spec.protocol == "lustre" and not efa:
                slow = sorted(
                    {p.server_id for p in cluster.pools if p.cloud is not None and not p.cloud.fsx_efa}
                )
                if slow:
                    yield self.finding(
                        f"storage `{st.name}`: FSx for Lustre is served over TCP because "
                        f"{', '.join(slow)} cannot use an EFA-enabled file system",
                        (*path, "kind"),
                        severity=Severity.INFO,
                    )
        if spec is not None and last is not None:
            yield from self._subnet_table(ctx, spec.service, last)

    def _subnet_table(self, ctx: RuleContext, service: str, last: tuple[str | int, ...]) -> Iterator[Finding]:
        """The vendor sizes the file systems' subnet up to its table's last size; past it the program takes
        the table's last prefix, which nobody has published to be enough."""
        from generator.deploy.address_plan import storage_subnet

        need = storage_subnet(ctx.cluster)
        if need is not None and need.past_table:
            yield self.finding(
                f"{service}: {need.total_tib:,.0f} TiB of file systems, past the {need.table_tib} TiB the "
                f"vendor's subnet table reaches (/{need.prefix}): the program gives them a /{need.prefix}, "
                "not published to be enough",
                (*last, "capacity_tib"),
                severity=Severity.WARNING,
                hint="ask the provider for the subnet size, and give network_cidr room for a larger block",
            )
