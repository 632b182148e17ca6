"""Finds every Rule subclass under generator.rules.<category> and runs them."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator
from functools import cache

import generator.rules as rules_pkg
from generator.findings import Finding, Severity
from generator.rules.base import Rule, RuleContext


def rule_modules(path: Iterable[str], prefix: str) -> Iterator[str]:
    """The name of every module and package under the package folders ``path`` (named ``prefix``...), a
    package before its contents, each package imported before it is searched (its ``__path__`` says where).

    What ``pkgutil.walk_packages`` finds for a tree of ``.py`` files, from directory listings: pkgutil asks
    importlib's finders about every entry of every folder (~3 ms of each `validate`, benchmarks/startup.py).
    tests/startup/test_rule_registry.py compares the two and adds a rule to the package."""
    names: set[str] = set()
    packages: set[str] = set()
    for folder in path:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            stem, dot, ext = entry.name.partition(".")
            if not stem.isidentifier():
                continue
            if dot and ext == "py" and entry.is_file():
                names.add(stem)
            elif not dot and entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                packages.add(stem)
    for stem in sorted(names | packages):
        if stem == "__init__":
            continue
        yield prefix + stem
        if stem in packages:
            sub = importlib.import_module(prefix + stem)
            yield from rule_modules(getattr(sub, "__path__", ()), f"{prefix}{stem}.")


@cache
def all_rules() -> tuple[type[Rule], ...]:
    for name in rule_modules(rules_pkg.__path__, rules_pkg.__name__ + "."):
        importlib.import_module(name)
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
