"""The rule registry finds every module of generator.rules as pkgutil would, and a rule added to the package.

The registry lists the package's folders itself (pkgutil.walk_packages asks importlib's finders about
every entry). pkgutil is the oracle here; and a rule module dropped into the package (a new category
folder, and a module beside the categories) is found, imported and run without being named anywhere.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import generator.rules as rules_pkg
from generator.rules.registry import all_rules, rule_modules

ROOT = Path(__file__).resolve().parents[2]


def test_modules_are_the_ones_pkgutil_walks() -> None:
    walked = [info.name for info in pkgutil.walk_packages(rules_pkg.__path__, rules_pkg.__name__ + ".")]
    assert list(rule_modules(rules_pkg.__path__, rules_pkg.__name__ + ".")) == walked
    assert len(walked) > 80  # the categories and their rules, not an empty walk


def test_every_rule_is_registered_once() -> None:
    ids = [rule.id for rule in all_rules()]
    assert len(ids) == len(set(ids)) > 70
    modules = {rule.__module__ for rule in all_rules()}
    assert all(m.startswith("generator.rules.") for m in modules)


RULE = '''
from generator.findings import Severity
from generator.rules.base import Rule


class Added(Rule):
    """A rule added by the test."""

    id = "{rid}"
    severity = Severity.INFO
    title = "added"
    rationale = "a test"
    fix = "none"

    def check(self, ctx):
        yield self.finding("{rid} ran", ())
'''

# A fresh interpreter: generator.rules gets one more folder (as a new category under the package would
# be), then the blueprint is checked; prints the registered ids and the findings' rule ids.
CHECK = """
import json, sys
import generator.rules
generator.rules.__path__.append(sys.argv[1])
from generator.pipeline import check
from generator.rules.registry import all_rules
found = check(sys.argv[2]).findings
print(json.dumps({"ids": [r.id for r in all_rules()], "findings": [f.rule for f in found]}))
"""


def test_a_rule_added_to_the_package_is_found_and_run(tmp_path: Path) -> None:
    category = tmp_path / "zzz"
    category.mkdir()
    (category / "__init__.py").write_text("")
    (category / "zzz901_added.py").write_text(RULE.format(rid="ZZZ901"))
    (tmp_path / "zzz902_beside.py").write_text(RULE.format(rid="ZZZ902"))
    (tmp_path / "notes.txt").write_text("not a module")
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, str(tmp_path), str(ROOT / "examples" / "single-dgx-h100.yaml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert {"ZZZ901", "ZZZ902"} <= set(result["ids"])
    assert {"ZZZ901", "ZZZ902"} <= set(result["findings"])
    assert len(result["ids"]) == len(all_rules()) + 2
