"""The names a rehearsal hands to ip(8), FRR and OpenSM, checked where the build is read.

A build directory is foreign input (it may have been edited since ``generate`` wrote it). Its device,
port and interface names end up as words of ``ip -batch`` lines and of the ``frr.conf`` the daemons load,
so one carrying white space, a quote or a line break would add words or whole commands (``ip -batch``
runs ``netns exec NS CMD`` as root). Every such name is held here to what ``generate`` itself writes,
and refused with its file and line otherwise.
"""

from __future__ import annotations

import re

from blueprints.models.nodes import NETDEV_PATTERN
from generator.foreign import ForeignInputError

# plan device names: pool host names, switch names, appliance names (lower- or upper-case, digits, . _ -)
DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
# cabling-plan ports: a switch port number, an HCA port (mlx5_0/1), an appliance port (p1), a faceplate
# (the schema's PortName, blueprints/models/nodes.py, and a host port's "/<HCA port>")
PORT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,39}(/[0-9]{1,3})?$")
IFNAME = re.compile(NETDEV_PATTERN)  # Linux's own limits: under 16 bytes, no '/', ':' or white space
NUMBER = re.compile(r"^[0-9]{1,6}$")
# what an `ip -batch` line of the rehearsal may hold: words of the names above, addresses and prefixes
BATCH_LINE = re.compile(r"^[A-Za-z0-9_.:/ -]{1,400}$")


def device(value: str, where: str) -> str:
    if not DEVICE.fullmatch(value):
        raise ForeignInputError(where, f"{value!r} is not a device name of a generated build")
    return value


def port(value: str, where: str) -> str:
    if not PORT.fullmatch(value):
        raise ForeignInputError(where, f"{value!r} is not a port name of a generated build")
    return value


def ifname(value: str, where: str) -> str:
    if not IFNAME.fullmatch(value):
        raise ForeignInputError(where, f"{value!r} is not a Linux interface name")
    return value


def number_or_empty(value: str, where: str) -> str:
    if value and not NUMBER.fullmatch(value):
        raise ForeignInputError(where, f"{value!r} is not a cage or cage-port number")
    return value


def text(value: str, where: str) -> str:
    """A description or other free text that becomes part of one configuration line."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ForeignInputError(where, f"{value!r} holds a line break or other control character")
    return value


def batch_lines(lines: list[str]) -> list[str]:
    """``lines`` for ``ip -batch``, each refused unless it holds only names and addresses (the last guard;
    the names were checked where they were read)."""
    for line in lines:
        if not BATCH_LINE.fullmatch(line):
            raise ForeignInputError("ip -batch", f"refused a command built from the build's names: {line!r}")
    return lines
