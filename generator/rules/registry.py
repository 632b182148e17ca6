"""Finds every Rule subclass under generator.rules.<category> and runs them."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import generator.rules as rules_pkg
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


@cache
def all_rules() -> tuple[type[Rule], ...]:
    for info in pkgutil.walk_packages(rules_pkg.__path__, rules_pkg.__name__ + "."):
        importlib.import_module(info.name)
    found: dict[str, type[Rule]] = {}

    def walk(cls: type[Rule]) -> None:
        for sub in cls.__subclasses__():
            if getattr(sub, "id", None):
                if sub.id in found and found[sub.id] is not sub:
                    raise RuntimeError(
                        f"rule id {sub.id} is defined twice ({found[sub.id].__module__}, {sub.__module__})"
                    )
                found[sub.id] = sub
            walk(sub)

    walk(Rule)
    return tuple(found[k] for k in sorted(found))


def rule_by_id(rule_id: str) -> type[Rule] | None:
    return next((r for r in all_rules() if r.id == rule_id.upper()), None)


def run_rules(ctx: RuleContext) -> list[Finding]:
    """Every rule's findings (suppressed ones dropped); a rule that crashes becomes an error finding."""
    out: list[Finding] = []
    suppressed = ctx.cluster.suppressed
    for rule_cls in all_rules():
        if rule_cls.id in suppressed and rule_cls.suppressible:
            continue
        rule = rule_cls()
        try:
            out.extend(rule.check(ctx))
        except Exception as exc:  # never silence: a broken rule is itself an error
            out.append(
                Finding(
                    rule_cls.id,
                    Severity.ERROR,
                    f"rule {rule_cls.id} failed: {type(exc).__name__}: {exc}",
                    (),
                    "this is a bug in cluster-blueprint; please report it",
                )
            )
    return out
