"""`blueprint configure BUILD_DIR`: run the generated playbooks through ansible-runner, report per host.

Every host's outcome is reported (ok / changed / failed / unreachable); a failed host never hides the
others, and each failure is shown with the task and the module's message. Exit code 0 when every host
succeeded, 1 when any host failed or was unreachable, 2 when the build directory is unusable.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

from generator.commands._common import (
    add_common,
    build_files,
    check_outputs,
    command,
    err_console,
    file_name,
    note,
    print_table,
    text_output,
    write_text,
)
from generator.report import safe
from generator.safetext import terminal

ORDER = 60
STATUSES = ("ok", "changed", "failed", "unreachable")


class HostResult:
    """One host's counts and failures (a plain class: dataclasses costs more start-up than argparse)."""

    COUNTS = ("ok", "changed", "failed", "unreachable", "skipped", "rescued", "ignored")

    def __init__(self, host: str) -> None:
        self.host = host
        self.ok = self.changed = self.failed = self.unreachable = self.skipped = self.rescued = 0
        self.ignored = 0
        self.failures: list[dict[str, str]] = []

    def as_dict(self) -> dict[str, Any]:
        """The fields in declaration order, as dataclasses.asdict gave them (the JSON report's keys)."""
        counts: dict[str, Any] = {name: getattr(self, name) for name in self.COUNTS}
        return {"host": self.host, **counts, "failures": [dict(f) for f in self.failures]}

    @property
    def status(self) -> str:
        if self.unreachable:
            return "unreachable"
        if self.failed:
            return "failed"
        return "changed" if self.changed else "ok"


def _given(text: str) -> str:
    """An option's parser of a host pattern or tag list: an empty one was taken as none given (`--limit ""`
    configured every host)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value names no host or tag: leave the option out instead")
    return text


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "configure",
        "run the generated Ansible playbooks (ansible-runner) and report per host",
        description="Run the generated Ansible playbooks through ansible-runner and report every host's "
        "outcome (ok / changed / failed / unreachable). Needs the `ansible` extra: "
        "pip install 'cluster-blueprint[ansible]'. Exit 0 when every host succeeded, 1 when any host "
        "failed or was unreachable, 2 when the build directory is unusable.",
    )
    p.add_argument(
        "build_dir",
        metavar="BUILD_DIR",
        help="the `blueprint generate` output directory (or its ansible/ folder)",
    )
    p.add_argument("--playbook", default="site.yml", help="playbook in ansible/ (default: site.yml)")
    p.add_argument(
        "--limit", type=_given, help="Ansible host pattern, e.g. rail0, pool_dgx, su1:&rack_r01_01"
    )
    p.add_argument(
        "--tags", type=_given, help="comma list of tags (base, fabric, drivers, nccl, storage, acceptance)"
    )
    p.add_argument("--skip-tags", type=_given, help="comma list of tags to skip")
    p.add_argument("--check", action="store_true", help="dry run: report what would change")
    p.add_argument("--diff", action="store_true", help="show file differences")
    p.add_argument(
        "-i", "--inventory", type=file_name, help="use this inventory instead of ansible/inventory.yml"
    )
    p.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra variable (repeatable), e.g. -e cb_hardware_present=false",
    )
    p.add_argument(
        "--artifacts",
        type=file_name,
        help="keep ansible-runner's artifacts (events, stdout) in this directory",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="stream Ansible's own output")
    add_common(p, output_help="write the per-host report to this file instead of standard output")
    p.set_defaults(func=run)


def find_ansible_dir(build_dir: str) -> Path | None:
    base = Path(build_dir)
    for cand in (base / "ansible", base):
        if (cand / "site.yml").is_file() and (cand / "inventory.yml").is_file():
            return cand
    return None


# Ansible's variable names (a Python identifier, ASCII): ansible-runner writes the -e keys into the extravars
# JSON of its command line unescaped, and `-e 'cb_x":"1","cb_injected=2'` defined two variables
VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _extra_vars(items: list[str]) -> dict[str, Any] | str:
    """The -e variables, or why one is refused."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            return "-e takes KEY=VALUE"
        if not VAR_NAME.fullmatch(key.strip()):
            return f"-e {key.strip()[:80]!r}: not a variable name (letters, digits and _, not first a digit)"
        low = value.strip().lower()
        out[key.strip()] = {"true": True, "false": False}.get(low, value)
    return out


STATS = {  # playbook_on_stats keys -> HostResult counts
    "ok": "ok",
    "changed": "changed",
    "failures": "failed",
    "dark": "unreachable",
    "skipped": "skipped",
    "rescued": "rescued",
    "ignored": "ignored",
}


def collect(
    stats: dict[str, dict[str, int]] | None, events: Iterable[dict[str, Any]]
) -> dict[str, HostResult]:
    """Per-host results from ansible-runner's final stats, the failure messages from its events, read one
    at a time: a run of many hosts and tasks writes one JSON file per event, each with the task's result,
    and a list of them all held every result in memory at once. A host's status is the stats' word alone:
    a failure a `rescue:` block handled, or a host `ignore_unreachable` skipped, sends a failed or
    unreachable event too, and was reported failed while Ansible said rc 0. Without stats (Ansible stopped
    before its recap) the events are all there is."""
    hosts: dict[str, HostResult] = {}

    def get(h: str) -> HostResult:
        return hosts.setdefault(h, HostResult(h))

    for key, attr in STATS.items():
        for host, n in ((stats or {}).get(key) or {}).items():
            setattr(get(host), attr, int(n))
    for host in (stats or {}).get("processed") or {}:
        get(host)
    for ev in events:
        _failure(ev, get, counts=stats is None)
    if stats is not None:  # messages of failures Ansible itself did not count (rescued, ignored)
        for r in hosts.values():
            if r.status not in ("failed", "unreachable"):
                r.failures.clear()
    return dict(sorted(hosts.items()))


def _failure(ev: dict[str, Any], get: Callable[[str], HostResult], counts: bool) -> None:
    """A failed or unreachable event's message on its host (and its count, when there are no stats)."""
    kind = ev.get("event")
    if kind not in ("runner_on_failed", "runner_on_unreachable"):
        return
    data = ev.get("event_data") or {}
    if data.get("ignore_errors"):
        return
    host = str(data.get("host") or data.get("remote_addr") or "?")
    res = data.get("res") or {}
    msg = str(res.get("msg") or res.get("stderr") or res.get("reason") or "failed").strip()
    r = get(host)
    r.failures.append(
        {"task": str(data.get("task") or ""), "message": msg.splitlines()[0][:500] if msg else ""}
    )
    if counts and kind == "runner_on_unreachable" and not r.unreachable:
        r.unreachable = 1
    if counts and kind == "runner_on_failed" and not r.failed:
        r.failed = 1


class RunInputs(NamedTuple):
    """What the playbook run needs, checked before ansible-runner starts."""

    ansible_dir: Path
    playbook: Path
    inventory: Path
    extravars: dict[str, Any]
    bindir: str  # this Python's bin directory, first on the PATH (ansible-playbook of the same install)


class RunOutcome(NamedTuple):
    results: dict[str, HostResult]
    rc: int
    status: str
    tail: str  # the last lines of Ansible's output when it failed without a failed host


def _error(message: str) -> int:
    err_console.print(f"[bold red]error[/]: {safe(message)}")  # it names the user's folders: never markup
    return 2


def _inputs(args: argparse.Namespace) -> RunInputs | int:
    """The checked inputs, or exit code 2 with the reason printed."""
    ansible_dir = find_ansible_dir(args.build_dir)
    if ansible_dir is None:
        return _error(
            f"{args.build_dir} has no ansible/site.yml and inventory.yml; run `blueprint generate` first"
        )
    playbook = ansible_dir / args.playbook
    if not playbook.is_file():
        return _error(f"no playbook {playbook}")
    # absolute: ansible-runner runs Ansible in its own folder, where `build/ansible/inventory.yml` (the
    # README's `configure build/`) named no file and was read as a host name
    inventory = Path(args.inventory if args.inventory else ansible_dir / "inventory.yml").resolve()
    if not inventory.exists():
        return _error(f"no inventory {inventory}")
    extravars = _extra_vars(args.extra_vars)
    if isinstance(extravars, str):
        return _error(extravars)
    try:
        import ansible_runner  # noqa: F401
    except ImportError:
        return _error("ansible-runner is not installed (pip install 'cluster-blueprint[ansible]')")
    import shutil

    bindir = str(Path(sys.executable).parent)
    if shutil.which("ansible-playbook", path=bindir + os.pathsep + os.environ.get("PATH", "")) is None:
        return _error(
            "ansible-playbook is not installed "
            "(pip install 'cluster-blueprint[ansible]', or ansible-core on the PATH)"
        )
    return RunInputs(ansible_dir, playbook, inventory, extravars, bindir)


def _read_files(inputs: RunInputs) -> list[tuple[str, str | None]]:
    """The files the run reads, which its report must not replace: -i, --playbook, the ansible folder's own
    files, and every file of the build (its manifest's list) when the folder is a build's ansible/."""
    ansible = inputs.ansible_dir
    read: list[tuple[str, str | None]] = [("-i", str(inputs.inventory)), ("--playbook", str(inputs.playbook))]
    read += [
        (f"the build's {name}", str(ansible / name)) for name in ("inventory.yml", "site.yml", "ansible.cfg")
    ]
    return read + build_files(ansible.parent if ansible.name == "ansible" else ansible)


def run(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    inputs = _inputs(args)
    if isinstance(inputs, int):
        return inputs
    # before the playbook runs: `-o myinv.yml -i myinv.yml` replaced the inventory with the report, and a
    # folder given as -o was refused only after the whole run
    check_outputs([("-o", args.output)], _read_files(inputs), force=args.force)
    private = (
        Path(args.artifacts).resolve()
        if args.artifacts
        else Path(tempfile.mkdtemp(prefix="blueprint-configure-"))
    )
    private.mkdir(parents=True, exist_ok=True)
    if args.artifacts and (private / "env").is_dir() and any((private / "env").iterdir()):
        # ansible-runner reads DIR/env/ (cmdline, envvars, extravars, ...) even with suppress_env_files: a
        # folder prepared by someone else would add options and variables to the run
        return _error(
            f"--artifacts {args.artifacts} holds env/, whose files ansible-runner would read as settings of "
            "this run: give a new folder (nothing run)"
        )
    try:
        outcome = _run_playbook(args, inputs, private)
    finally:
        if not args.artifacts:
            shutil.rmtree(private, ignore_errors=True)
    return _report(args, outcome.results, outcome.rc, outcome.status, outcome.tail)


STOP_GRACE = 10.0  # seconds ansible-playbook has to stop its workers before its process group is killed


@contextmanager
def _interruptible() -> Iterator[Callable[[], bool] | None]:
    """ansible-runner's cancel callback, set by SIGINT or SIGTERM, while the playbook runs; the signal
    handlers and ansible-runner's termination restored after. ansible-runner stops a canceled run with
    SIGKILL to ansible-playbook's process group, and Ansible's workers, each in its own session (os.setsid,
    ansible/executor/process/worker.py), kept running the task orphaned: ansible-playbook gets SIGTERM first,
    on which it stops each worker's process group (task_queue_manager.py, _signal_handler)."""
    import signal
    import threading

    from ansible_runner.runner import Runner

    if threading.current_thread() is not threading.main_thread():  # only it may set signal handlers
        yield None
        return
    stop = threading.Event()
    old = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    raw, sigkill = Runner.__dict__["handle_termination"], Runner.handle_termination
    # ansible-runner calls Runner.handle_termination(pid) on a canceled run (runner.py, Runner.run)
    Runner.handle_termination = staticmethod(lambda pid, pidfile=None: _stop(sigkill, pid, pidfile))  # type: ignore[method-assign, assignment]
    try:
        yield stop.is_set
    finally:
        Runner.handle_termination = raw  # type: ignore[method-assign]
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _stop(sigkill: Callable[..., None], pid: int, pidfile: Any) -> None:
    """SIGTERM to ansible-playbook, up to STOP_GRACE seconds for it to exit (waited for without reaping it:
    ansible-runner's pexpect does), then ansible-runner's own SIGKILL to its process group."""
    import signal
    import time

    with suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break
        except ChildProcessError:
            break
        time.sleep(0.05)
    sigkill(pid, pidfile)


def _run_playbook(args: argparse.Namespace, inputs: RunInputs, private: Path) -> RunOutcome:
    import ansible_runner

    cmdline = [flag for flag, on in (("--check", args.check), ("--diff", args.diff)) if on]
    envvars = {
        "ANSIBLE_CONFIG": str(inputs.ansible_dir / "ansible.cfg"),
        "PATH": inputs.bindir + os.pathsep + os.environ.get("PATH", ""),
        "ANSIBLE_NOCOLOR": "1",
    }
    with _interruptible() as cancel:
        runner = ansible_runner.run(
            cancel_callback=cancel,
            private_data_dir=str(private),
            project_dir=str(inputs.ansible_dir.resolve()),
            playbook=str(inputs.playbook.resolve()),
            inventory=str(inputs.inventory),
            limit=args.limit,
            tags=args.tags,
            skip_tags=args.skip_tags,
            extravars=inputs.extravars or None,
            cmdline=" ".join(cmdline) or None,
            envvars=envvars,
            quiet=not args.verbose,
            suppress_env_files=True,
        )
    if runner.status == "canceled":  # Ctrl-C: `interrupted`, exit 130 (generator/cli.py failure), no report
        raise KeyboardInterrupt
    results = collect(runner.stats, runner.events)
    tail = ""
    if runner.rc != 0 and not any(r.status in ("failed", "unreachable") for r in results.values()):
        tail = _stdout_tail(Path(runner.config.artifact_dir) / "stdout")
    return RunOutcome(results, runner.rc, runner.status, tail)


TAIL_BYTES = 64 * 1024  # the end of Ansible's output read for its last lines: the output has no bound


def _stdout_tail(path: Path) -> str:
    """The last 8 non-blank lines of Ansible's output (ansible-runner's artifacts/<id>/stdout), read from its
    last 64 KiB: the whole output, every task's text for every host, was read to keep 8 lines."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - TAIL_BYTES))
            text = f.read(TAIL_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-8:])


def _nothing_ran(args: argparse.Namespace) -> str:
    """Why no host has a result: a mistyped --tags selects no task, and the run said only that the
    inventory or --limit was at fault."""
    why = ["Ansible could not read the inventory", "--limit matched no host in it"]
    tags = (("--tags", getattr(args, "tags", None)), ("--skip-tags", getattr(args, "skip_tags", None)))
    given = [opt for opt, value in tags if value]
    if given:
        why.append(f"{'/'.join(given)} left no task to run (mistyped tag?)")
    return "no host ran a task: " + ", ".join(why[:-1]) + ", or " + why[-1]


def _report(
    args: argparse.Namespace, results: dict[str, HostResult], rc: int, status: str, tail: str = ""
) -> int:
    bad = [r for r in results.values() if r.status in ("failed", "unreachable")]
    # no host at all: Ansible warns and exits 0 on an inventory it cannot parse, and this said "done" (a
    # --limit matching nothing is Ansible's own error, rc 1)
    code = 1 if bad or rc != 0 or not results else 0
    if args.format == "json":
        payload = {
            "ok": code == 0,
            "rc": rc,
            "status": status,
            "check": bool(args.check),
            "error": tail,
            "hosts": {h: {**r.as_dict(), "status": r.status} for h, r in results.items()},
        }
        import json

        write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", args.output, replace=args.force)
        return code
    from rich.table import Table

    table = Table(title=f"blueprint configure{' --check' if args.check else ''}: {len(results)} hosts")
    for col in ("host", "status", "ok", "changed", "failed", "unreachable", "skipped"):
        table.add_column(col, justify="left" if col in ("host", "status") else "right")
    colour = {"ok": "green", "changed": "yellow", "failed": "red", "unreachable": "magenta"}
    for r in results.values():
        table.add_row(
            safe(r.host),
            f"[{colour[r.status]}]{r.status}[/]",
            str(r.ok),
            str(r.changed),
            str(r.failed),
            str(r.unreachable),
            str(r.skipped),
        )
    with text_output(args.output, replace=args.force) as out:
        print_table(table, out)
        for r in bad:
            for f in r.failures or [{"task": "?", "message": r.status}]:
                out.print(
                    f"[red]{r.status}[/] {safe(r.host)}: {safe(f['task'])}: {safe(f['message'])}", markup=True
                )
    if tail:  # Ansible prints host names and task output raw: an inventory's text may hold escapes
        err_console.print(terminal(tail), markup=False, highlight=False)
    counts = {s: sum(1 for r in results.values() if r.status == s) for s in STATUSES}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items() if n) or (
        "Ansible stopped before any host result (its last lines are above)" if tail else _nothing_ran(args)
    )
    if code:
        err_console.print(f"FAILED: {summary} (ansible rc {rc}, {status})")
    else:
        note(args, f"done: {summary} (ansible rc {rc}, {status})")
    return code
