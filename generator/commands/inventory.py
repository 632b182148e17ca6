"""`blueprint inventory BUILD_DIR --from-stack OUTPUTS.json`: the inventory from what `pulumi up` made.

`cd BUILD_DIR/pulumi && pulumi stack output --json > outputs.json`, then this command writes
BUILD_DIR/ansible/inventory.stack.yml: the generated inventory with the provider's addresses and the managed
file systems to mount. Exit 0 written, 2 when the outputs do not fit the build (named hosts, file:line:col).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.commands._common import add_common, command, err_console, note

ORDER = 61
DEFAULT_NAME = "inventory.stack.yml"


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub, "inventory", "write the Ansible inventory from `pulumi stack output --json` (after pulumi up)"
    )
    p.add_argument("build_dir", metavar="BUILD_DIR", help="the `blueprint generate` output directory")
    p.add_argument(
        "--from-stack",
        required=True,
        metavar="OUTPUTS_JSON",
        help="file holding `pulumi stack output --json` of the build's stack",
    )
    add_common(
        p,
        formats=("yaml",),
        default_format="yaml",
        format_help="inventory format",
        output_help=f"inventory file to write (default: BUILD_DIR/ansible/{DEFAULT_NAME})",
    )
    p.set_defaults(func=run)


def _access_via(build: Path) -> str:
    """The build's access path (pulumi/cluster.json `access`), `vpn` for builds without one."""
    import json

    data = json.loads((build / "pulumi" / "cluster.json").read_text(encoding="utf-8"))
    return str((data.get("access") or {}).get("via", "vpn"))


def run(args: argparse.Namespace) -> int:
    from generator.deploy.stack_inventory import StackInventoryError, build_inventory, read_outputs, render
    from generator.fsutil import atomic_write_text

    build = Path(args.build_dir)
    outputs_path = Path(args.from_stack)
    for needed in (build / "ansible" / "inventory.yml", build / "pulumi" / "cluster.json"):
        if not needed.is_file():
            err_console.print(
                f"{needed}: missing: run `blueprint generate` first (with the ansible and pulumi outputs)"
            )
            return 2
    try:
        inventory = build_inventory(build, read_outputs(outputs_path))
    except StackInventoryError as exc:
        err_console.print(f"error: {exc}", markup=False)
        return 2
    target = Path(args.output) if args.output else build / "ansible" / DEFAULT_NAME
    atomic_write_text(target, render(inventory, outputs_path))
    hosts = sum(
        len(g.get("hosts") or {}) for n, g in inventory["all"]["children"].items() if n.startswith("pool_")
    )
    mounts = len(inventory["all"]["vars"]["shared_storage_managed_mounts"])
    note(args, f"{target}: {hosts} hosts, {mounts} managed file system(s)")
    via = _access_via(build)
    if via == "vpn":
        note(
            args,
            "hosts are reached at their private addresses: run from inside the network (VPN), or declare "
            "deployment.cloud.access (bastion) and regenerate",
        )
    else:
        note(args, f"hosts are reached through {via} (deployment.cloud.access; docs/pulumi.md)")
    note(args, f"next: blueprint configure {build} -i {target}")
    return 0
