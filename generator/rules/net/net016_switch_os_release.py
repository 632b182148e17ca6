"""NET016: the Cumulus Linux release named in ``switch_os`` is one the catalogue documents."""

from __future__ import annotations

from collections.abc import Iterator

from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


class SwitchOsRelease(Rule):
    """``switch_os: cumulus-linux@<release>`` names a release whose NVUE keys the catalogue does not know.

    NVUE renames keys between releases: Cumulus Linux 5.15 turned ``router bgp enable on`` into ``router
    bgp state enabled`` and ``interface <id> ip address`` into ``ipv4 address`` (NVIDIA, Cumulus Linux 5.15
    "New and Changed NVUE Commands"), and ``nv config apply`` refuses a ``startup.yaml`` written for
    another release. ``blueprint generate`` writes the keys of the declared release, so it must be one
    whose spelling is documented in ``blueprints/catalog/data/switch_os.yaml``; ``cumulus`` without a
    release means the latest one listed there.
    """

    id = "NET016"
    severity = Severity.ERROR
    title = "switch OS release not in the catalogue"
    rationale = "A switch configuration in the key spelling of another release is rejected by the switch."
    fix = "name a release the catalogue documents (`blueprint explain NET016` lists them) or drop the release"
    tags = ("ethernet", "switches")
    # generate stops on what it says: suppressed, validate would pass what generate refuses
    suppressible = False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if not ctx.cluster.fabrics:  # no fabric, no switch OS: the release table is not read
            return
        from blueprints.catalog.switch_os import latest_release, releases, unknown_release

        known = ", ".join(releases())
        for fab in ctx.cluster.fabrics.values():
            release = unknown_release(fab.spec.switch_os)
            if release is None:
                continue
            yield self.finding(
                f"{fab.name} fabric declares `switch_os: {fab.spec.switch_os}` but the catalogue documents "
                f"the NVUE keys of Cumulus Linux {known} only, not {release}",
                (*fab.source_path, "switch_os"),
                hint=f"use one of {known} (e.g. `cumulus-linux@{latest_release()}`), or `cumulus` for the "
                "latest",
            )
