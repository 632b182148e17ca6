from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.resolve.software import version_key
from generator.rules.base import Rule, RuleContext


def release_line(version: str) -> str:
    """The release line of a version: ``5.6`` of MLNX_OFED ``5.6-2.0.9.0``, ``2.5`` of DOCA ``2.5.2``."""
    if "-" in version:
        return version.split("-", 1)[0]
    return ".".join(version.split(".")[:2])


class OfedPredatesOsRelease(Rule):
    """The pinned OFED release comes before its release line supported the node OS.

    NVIDIA's release notes name the release that added each operating system ("Changes and New
    Features": "Added support for the following Operating Systems: ..."). Releases of one line (the
    ``5.6`` of MLNX_OFED ``5.6-2.0.9.0``) come out in version order, so an earlier release of the same
    line has no packages for that OS and the ``doca_ofed`` role cannot install it. Only the additions of
    an OS major release's first release (RHEL 9.0) that the catalogue records are checked
    (``data/software.yaml``, with the source); other release lines say nothing here, because NVIDIA adds
    new operating systems to its LTS lines on their own. Rocky 9 nodes install from the same
    ``rhel<version>`` repository as RHEL, so the RHEL 9 bound applies to them.
    """

    id = "SFT006"
    severity = Severity.ERROR
    title = "OFED release older than its line's support for the node OS"
    rationale = "The release has no packages for the operating system; the install fails on every node."
    fix = "pin software.ofed.version to the release that added the OS, or a later one of that line"
    tags = ("software", "ofed", "os")

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        cluster = ctx.cluster
        compat = cluster.catalog.software
        if compat is None:
            return
        sw = cluster.software
        pinned = sw.ofed.version
        line = release_line(pinned)
        if pinned == line:  # a line, not a release: which build it means is not known
            return
        for added in compat.ofed_os_added:
            if (added.ofed, added.os) != (sw.ofed.kind, sw.os) or release_line(added.added_in) != line:
                continue
            if version_key(pinned) >= version_key(added.added_in):
                continue
            yield self.finding(
                f"software.ofed {sw.ofed.kind} {pinned} is older than {added.added_in}, the {line} release "
                f"that added {added.os_release} (software.os {sw.os}): {added.source}",
                ("software", "ofed", "version"),
                hint=f"pin software.ofed.version {added.added_in} or a later {line} release",
            )
