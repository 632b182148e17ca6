"""NVIDIA Cumulus Linux: one NVUE startup.yaml per switch (routing, ports and RoCE QoS).

Only that file: NVUE writes /etc/frr/frr.conf itself from its configuration (Cumulus Linux user guide,
"NVUE CLI"), so a second file would be a copy that must not be installed (docs/switches.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from blueprints.catalog.switch_os import CUMULUS_NAMES, nvue_release
from generator.emit.switches.nvue import render_startup
from generator.emit.switches.systems import SwitchOs


def _release(switch_os: str) -> Mapping[str, object]:
    return {"cb_switch_os_release": nvue_release(switch_os)[0]}  # the release whose NVUE keys it uses


SWITCH_OS = SwitchOs(
    kind="cumulus",
    names=CUMULUS_NAMES,
    config_file="startup.yaml",
    # the NVUE network OS name (for the nvidia.nvue collection); the playbook itself uses ansible.builtin
    # over SSH as Cumulus Linux's default user
    connection={"ansible_network_os": "nvidia.nvue.nvue", "ansible_user": "cumulus"},
    render=render_startup,
    release_vars=_release,
)
