"""The `blueprint estimate` options that say what a run changes (NCCL_ALGO, NCCL_PROTO, channels, NVLink and
PXN off, the NCCL release, processes, ranks a node) and the model's settings they make: one mapping, which
benchmarks/evaluate.py reads its rows' command lines with too. Nothing here imports the model at start-up, nor
the site calibration (the evaluation never reaches it: tests/perf/test_site_calibration.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

# written out so that registering `estimate` does not import the performance model (tests/cli/
# test_startup_imports.py checks it equals generator.perf.collectives.ALGORITHMS)
ALGORITHMS = ("ring", "tree", "nvls", "nvls_tree", "collnet", "pat", "p2p")


MAX_COUNT = 9_999_999  # seven digits: more than any design has nodes, ranks or channels


def whole_number(low: int, high: int, noun: str = "") -> Callable[[str], int]:
    """An option's parser of a whole number from ``low`` to ``high`` in ASCII digits (int() would also take
    other scripts' digits and `1_0`, and thousands of digits are refused by it or slow: the length first)."""
    what = f"a whole number of {noun}" if noun else "a whole number"

    def parse(text: str) -> int:
        digits = text.isascii() and text.isdigit() and len(text) <= len(str(high))
        if digits and low <= int(text) <= high:
            return int(text)
        shown = f"`{text[:40]}`" if text.isascii() and text.isprintable() else "its value"
        raise argparse.ArgumentTypeError(f"{shown}: give {what} from {low:,} to {high:,}")

    return parse


positive = whole_number(1, MAX_COUNT)  # a count: nodes, ranks a node, GPUs a process


def add_run_options(p: argparse.ArgumentParser) -> None:
    """What a run changes, as NCCL's environment would, and its ranks a node (predict.RunSettings)."""
    p.add_argument(
        "--ranks-per-node",
        type=positive,
        help="ranks each node runs in the collectives, as mpirun -N or srun --ntasks-per-node (default: "
        "every GPU of the node); fewer ranks reach fewer of the node's NICs, as NCCL gives each GPU the "
        "NICs nearest it (the training step keeps whole nodes)",
    )
    p.add_argument(
        "--algo",
        help=f"restrict algorithms like NCCL_ALGO: comma list of {', '.join(ALGORITHMS)} "
        "(NCCL's spellings too: Ring, Tree, NVLSTree, CollNetDirect); a leading ^ keeps all but those; "
        "alltoall, point-to-point in NCCL, is not steered by it",
    )
    p.add_argument(
        "--proto",
        help="restrict protocols like NCCL_PROTO: comma list of LL, LL128, Simple (^ first: all but those)",
    )
    p.add_argument(
        "--channels",
        type=whole_number(1, MAX_COUNT, "channels"),
        help="channels of rings and trees between nodes (like NCCL_MAX_NCHANNELS on NCCL's inter-node graph)",
    )
    p.add_argument(
        "--min-channels",
        type=whole_number(1, MAX_COUNT, "channels"),
        help="channels run at least between nodes, like NCCL_MIN_NCHANNELS: copies of NCCL's channels, which "
        "lift its per-channel LL128 maximum but not the links",
    )
    p.add_argument(
        "--no-nvlink",
        action="store_true",
        help="NVLink off, like NCCL_P2P_DISABLE=1: GPUs of a node exchange through host memory over PCIe",
    )
    p.add_argument(
        "--no-pxn",
        action="store_true",
        help="PXN off, like NCCL_PXN_DISABLE=1: each GPU sends through its own NIC, so spread traffic "
        "(alltoall) to peers on other rails crosses the leaf uplinks of a rail-optimised fabric",
    )
    p.add_argument(
        "--nccl-version", help="the NCCL release of the run (default: the blueprint's software.nccl)"
    )
    p.add_argument(
        "--gpus-per-process",
        type=positive,
        default=1,
        help="GPUs one process drives, as nccl-tests -g (times -t) (default 1); see --msccl-single-process",
    )
    p.add_argument(
        "--no-msccl", action="store_true", help="RCCL's MSCCL algorithms off, like RCCL_MSCCL_ENABLE=0"
    )
    p.add_argument(
        "--msccl-single-process",
        choices=("0", "1"),
        help="like RCCL_MSCCL_ENABLE_SINGLE_PROCESS: whether ranks sharing a process run MSCCL "
        "(default: RCCL's, perf.yaml rccl.msccl_single_process_default)",
    )


def run_settings(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The run's NCCL settings from the options (--algo, --proto, --channels, --min-channels, --no-nvlink,
    --no-pxn, --nccl-version, --gpus-per-process, --no-msccl, --msccl-single-process) and its ranks a node
    (--ranks-per-node)."""
    from generator.perf.collectives import algorithm_list, per_collective, protocol_list
    from generator.perf.predict import RunSettings
    from generator.perf.processes import ProcessSettings
    from generator.perf.system import check_nccl_version

    # --channels / --min-channels below 1 are refused where the job is built (predict._graphs)
    # a per-collective NCCL_ALGO / NCCL_PROTO is checked here and resolved for each collective it runs
    algo, proto = args.algo or None, args.proto or None
    algorithms = algorithm_list(algo) or None if algo else None
    protocols = protocol_list(proto) or None if proto else None
    many_algos, many_protos = bool(algo and per_collective(algo)), bool(proto and per_collective(proto))
    return RunSettings(
        algorithms=None if many_algos else algorithms,
        protocols=None if many_protos else protocols,
        algorithm_lists=algo if many_algos else None,
        protocol_lists=proto if many_protos else None,
        channels=args.channels,
        nvlink=not args.no_nvlink,
        nccl_version=check_nccl_version(args.nccl_version) if args.nccl_version is not None else None,
        pxn=not args.no_pxn,
        min_channels=args.min_channels,
        process=ProcessSettings(
            args.gpus_per_process,
            not args.no_msccl,
            None if args.msccl_single_process is None else args.msccl_single_process == "1",
        ),
        ranks_per_node=args.ranks_per_node,
    )
