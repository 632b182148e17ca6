"""`blueprint inventory BUILD_DIR --from-stack OUTPUTS.json`: the inventory from what `pulumi up` made.

`cd BUILD_DIR/pulumi && pulumi stack output --json > outputs.json`, then this command writes
BUILD_DIR/ansible/inventory.stack.yml: the generated inventory with the provider's addresses and the managed
file systems to mount. `--from-stack -` reads standard input. Exit 0 written, 2 when the outputs are refused
(a value outside the provider's syntax, a stack value contradicting the blueprint, hosts that do not match:
located as `file: $.nodes["gpu001"].zone` or `file:line:col`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.commands._common import (
    add_common,
    build_files,
    check_outputs,
    command,
    err_console,
    note,
    write_text,
)
from generator.report import safe

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
        output_help=f"inventory file to write (default: BUILD_DIR/ansible/{DEFAULT_NAME}; - for standard "
        "output)",
    )
    p.set_defaults(func=run)


def _missing_build(build: Path) -> Path | None:
    for needed in (build / "ansible" / "inventory.yml", build / "pulumi" / "cluster.json"):
        if not needed.is_file():
            return needed
    return None


def run(args: argparse.Namespace) -> int:
    """Refusals of the stack outputs are ForeignInputError (located, exit 2: generator/cli.py prints them)."""
    from generator.deploy.stack_inventory import (
        build_access_via,
        build_inventory,
        build_target,
        read_outputs,
        render,
    )
    from generator.deploy.stack_outputs import where_of
    from generator.foreign import ByteBudget
    from generator.fsutil import atomic_write_text

    build = Path(args.build_dir)
    missing = _missing_build(build)
    if missing is not None:
        err_console.print(
            f"{safe(missing)}: missing: run `blueprint generate` first (with the ansible and pulumi outputs)"
        )
        return 2
    # before anything is written: -o the stack outputs, or a file of the build (its inventory.yml, which the
    # next `generate` then refused as edited by hand), was replaced
    check_outputs(
        [("-o", args.output)], [("--from-stack", args.from_stack), *build_files(build)], force=args.force
    )
    outputs = read_outputs(args.from_stack, build_target(build), ByteBudget())
    inventory = build_inventory(build, outputs, where_of(args.from_stack))
    to_stdout = args.output == "-"  # `-o -` is standard output, as for every command (it wrote a file `-`)
    target = Path(args.output) if args.output else build / "ansible" / DEFAULT_NAME
    if to_stdout:
        write_text(render(inventory, args.from_stack), "-", replace=False)  # standard output
    else:
        # the build's own inventory.stack.yml (no -o) is refreshed; a file the user named, only with --force
        atomic_write_text(target, render(inventory, args.from_stack), replace=args.force or not args.output)
    hosts = sum(
        len(g.get("hosts") or {}) for n, g in inventory["all"]["children"].items() if n.startswith("pool_")
    )
    mounts = len(inventory["all"]["vars"]["shared_storage_managed_mounts"])
    note(
        args, f"{'standard output' if to_stdout else target}: {hosts} hosts, {mounts} managed file system(s)"
    )
    via = build_access_via(build)
    if via == "vpn":
        note(
            args,
            "hosts are reached at their private addresses: run from inside the network (VPN), or declare "
            "deployment.cloud.access (bastion) and regenerate",
        )
    else:
        note(args, f"hosts are reached through {via} (deployment.cloud.access; docs/pulumi.md)")
    if not to_stdout:  # configure -i reads a file: there is none to name
        note(args, f"next: blueprint configure {build} -i {target}")
    return 0
