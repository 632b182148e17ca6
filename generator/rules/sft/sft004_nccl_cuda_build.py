from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve.software import version_key
from generator.rules.base import Rule, RuleContext


def _major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


class NcclHasNoCudaBuild(Rule):
    """The pinned NCCL release has no build for the pinned CUDA release.

    NVIDIA publishes each NCCL release as builds for a few CUDA releases (``<nccl>-1+cuda<X.Y>``: NCCL
    download index and the release notes' "Compatibility" section). The ``nccl`` role installs
    ``libnccl2=<nccl>-1+cuda<cuda>`` from NVIDIA's CUDA repository, so a pair NVIDIA does not build fails
    at install time on every node. Only NCCL releases whose build list the catalogue holds
    (``data/software.yaml``, with the source) are checked. A CUDA release between the oldest and newest
    recorded build that is missing was dropped (NVIDIA builds for about three current CUDA releases): an
    error. One outside that range is a warning, because NVIDIA adds builds for CUDA releases published
    after the NCCL release, which the recorded list may predate. An NCCL release with no recorded list is
    named in an info finding: the pair is unchecked, and the user is told so.
    """

    id = "SFT004"
    severity = Severity.ERROR
    title = "no NCCL build for the pinned CUDA release"
    rationale = "The NCCL package for this CUDA release does not exist; the install fails on every node."
    fix = "pin software.cuda to a release the NCCL version is built for, or pin an NCCL built for this CUDA"
    tags = ("software", "nccl", "cuda")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        if compat is None or not cluster.gpu_pools:
            return
        sw = cluster.software
        builds = next((b for b in compat.nccl_cuda_builds if b.nccl == sw.nccl), None)
        cuda = _major_minor(sw.cuda)
        if builds is None:
            yield self.finding(
                f"software.nccl {sw.nccl}: no public list of the CUDA releases it is built for is recorded "
                f"(data/software.yaml), so the pair with CUDA {sw.cuda} is not checked",
                ("software", "nccl"),
                hint=f"check that libnccl2={sw.nccl}-1+cuda{cuda} is in NVIDIA's CUDA repository for the "
                "node OS, or pin a release of `nccl_cuda_builds` in blueprints/catalog/data/software.yaml",
                severity=Severity.INFO,
            )
            return
        if cuda in builds.cuda:
            return
        package = f"libnccl2={sw.nccl}-1+cuda{cuda}"
        recorded = sorted(builds.cuda, key=version_key)
        if version_key(recorded[0]) < version_key(cuda) < version_key(recorded[-1]):
            yield self.finding(
                f"software.nccl {sw.nccl} is built for CUDA {', '.join(builds.cuda)} only; software.cuda is "
                f"{sw.cuda}, so {package} does not exist ({builds.source})",
                ("software", "nccl"),
            )
            return
        yield self.finding(
            f"software.nccl {sw.nccl}: the recorded builds are CUDA {', '.join(builds.cuda)} "
            f"({builds.source}); software.cuda {sw.cuda} is outside them, so {package} may not exist",
            ("software", "nccl"),
            hint="NVIDIA adds builds for CUDA releases newer than the list; check that the package is in "
            "NVIDIA's CUDA repository for the node OS before installing",
            severity=Severity.WARNING,
        )
