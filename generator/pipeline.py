"""The compiler stages wired together: load → resolve → check (→ build → emit in later stages)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path as FsPath

from generator.findings import BlueprintError, Finding, Severity
from generator.load import LoadedBlueprint, load_file
from generator.resolve import ResolvedCluster, resolve
from generator.rules.base import RuleContext
from generator.rules.registry import all_rules, run_rules


@dataclass
class Checked:
    """A blueprint that loaded and resolved, with its located findings and (cached) plan."""

    loaded: LoadedBlueprint
    cluster: ResolvedCluster
    findings: list[Finding]
    context: RuleContext = field(repr=False)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)


def load_and_resolve(path: str | FsPath) -> tuple[LoadedBlueprint, ResolvedCluster]:
    loaded = load_file(path)
    return loaded, resolve(loaded)


def check(path: str | FsPath | LoadedBlueprint) -> Checked:
    """Load, resolve and run every rule. Raises BlueprintError when the input cannot be used. A blueprint
    already loaded is not read again: validate learns its catalogue file even when resolving then fails,
    without parsing it twice or reading standard input again."""
    loaded = path if isinstance(path, LoadedBlueprint) else load_file(path)
    cluster = resolve(loaded)
    ctx = RuleContext(cluster)
    findings = run_rules(ctx)
    rules = {r.id: r for r in all_rules()}
    for i, sup in enumerate(loaded.blueprint.suppress):
        rule = rules.get(sup.rule)
        if rule is not None and not rule.suppressible:
            findings.append(
                Finding(
                    "SUP001",
                    Severity.WARNING,
                    f"rule {sup.rule} cannot be suppressed (it guards the plan, names, tenants, the subnet "
                    "manager or numbers generate cannot do without); this entry has no effect",
                    ("suppress", i, "rule"),
                    "fix what the rule reports instead",
                )
            )
        if rule is None:
            findings.append(
                Finding(
                    "SUP001",
                    Severity.WARNING,
                    f"suppression of unknown rule {sup.rule}",
                    ("suppress", i, "rule"),
                    "see `blueprint explain --list` for rule ids",
                )
            )
    located = sorted((loaded.locate(f) for f in findings), key=Finding.sort_key)
    return Checked(loaded, cluster, located, ctx)


def check_or_raise(path: str | FsPath) -> Checked:
    """Like check(), but rule errors also raise (for commands that build outputs)."""
    checked = check(path)
    if checked.errors:
        raise BlueprintError(checked.errors)
    return checked
