"""A Linux network OS running FRRouting: one frr.conf per switch (the routing; no switch QoS)."""

from __future__ import annotations

from generator.emit.switches.frr import render_frr
from generator.emit.switches.systems import SwitchOs

SWITCH_OS = SwitchOs(
    kind="frr",
    names=("frr",),
    config_file="frr.conf",
    connection={"ansible_connection": "ansible.builtin.ssh"},  # a plain Linux host over SSH
    render=lambda sw, qos, mtu, switch_os: render_frr(sw),
)
