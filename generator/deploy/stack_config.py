"""The Pulumi config keys each generated program reads, read from the program itself.

Two settings of the blueprint name a config key rather than give a value: `deployment.cloud.ssh_key_config`
(where the SSH public key lives) and `deployment.maas.api_url_config` (where the MAAS API URL lives). A name
the program already reads for something else makes one key carry two values: `ssh_key_config: zone` hands the
zone ("1") to the VMs as their SSH key, and setting the key as the README says moves the scale set to a zone
named after the key. The program (templates/pulumi/<target>/__main__.py) is the one truth of what it reads,
so the keys are taken from its `config.get("...")` / `config.require("...")` calls, not listed again here.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from generator.resources import templates_dir

# `name = pulumi.Config()` (the project's namespace) or `name = pulumi.Config("ns")`
_CONFIG_OBJECT = re.compile(r'^(\w+)\s*=\s*pulumi\.Config\((?:"([^"]*)")?\)', re.M)
# `pulumi.Config("ns").require("key")`, used in place
_INLINE_READ = re.compile(r'pulumi\.Config\("([^"]+)"\)\.(?:get|require)\w*\("([^"]+)"\)')
_READ = r'\b{name}\.(?:get|require)\w*\("([^"]+)"\)'


class ConfigKey(NamedTuple):
    namespace: str | None  # None: the project's own namespace
    key: str

    def __str__(self) -> str:
        return self.key if self.namespace is None else f"{self.namespace}:{self.key}"


def qualified(name: str, project: str) -> ConfigKey:
    """A config key as Pulumi reads it: `ns:key`, or `key` in the project namespace (`<project>:key` too)."""
    namespace, _, key = name.rpartition(":")
    return ConfigKey(None if namespace in ("", project) else namespace, key)


@cache
def program_config_keys(target: str) -> frozenset[ConfigKey]:
    """Every literal config key the target's program reads (none for a target without a program)."""
    program = templates_dir() / "pulumi" / target / "__main__.py"
    if not program.is_file():
        return frozenset()
    text = program.read_text(encoding="utf-8")
    keys = {ConfigKey(ns, key) for ns, key in _INLINE_READ.findall(text)}
    for name, namespace in _CONFIG_OBJECT.findall(text):
        keys |= {ConfigKey(namespace or None, key) for key in re.findall(_READ.format(name=name), text)}
    return frozenset(keys)
