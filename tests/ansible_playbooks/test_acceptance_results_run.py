"""The acceptance role keeps every nccl-tests run's output, for real, on the Debian test root (chroot).

No GPU: the role's own variables point at a stand-in launcher (acceptance_mpirun, which records its
arguments and starts the program as mpirun would) and a stand-in nccl-tests directory
(acceptance_nccl_tests_bin) whose all_reduce_perf prints a published nccl-tests output verbatim
(tests/perf/data/nccl_tests, sources in its README). The outputs must land on the controller under
names `blueprint acceptance-report` reads, also when the bandwidth check fails, and a second run must
not rewrite them on the host.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible_helpers import DATA, build, chroot_root_fixture, root_tarball_fixture  # noqa: F401  (fixtures)
from conftest import run_cli

pytestmark = pytest.mark.ansible_host

NCCL_TEXT = (
    Path(__file__).resolve().parents[1]
    / "perf"
    / "data"
    / "nccl_tests"
    / "oci-bm-gpu4.8-2node-all_reduce.txt"
)
FAKE = "/opt/cb-test-acceptance"
# mpirun's own options up to the program (the role's command line), then the program with its options.
MPIRUN = f"""#!/bin/sh
echo "$@" > {FAKE}/mpirun.args
while [ $# -gt 0 ]; do
  case "$1" in */*_perf) exec "$@" ;; esac
  shift
done
echo "no nccl-tests program on the command line" >&2
exit 127
"""
PERF = f"#!/bin/sh\ncat {FAKE}/all_reduce.txt\n"
# A host name holding rail<N> is split: acceptance-report would take the all-rail run for a rail-7 run.
HOST = "su1-rail7-gpu001"
NAME = "all_reduce_perf-1nodes-su1-rail-7-gpu001.txt"


def _inventory(path: Path, root: Path) -> Path:
    path.write_text(
        "all:\n"
        "  vars:\n"
        "    ansible_connection: community.general.chroot\n"
        "    ansible_become: false\n"
        "    ansible_python_interpreter: /usr/bin/python3\n"
        "  children:\n"
        "    pool_gpu:\n"
        "      hosts:\n"
        f"        {HOST}:\n"
        f"          ansible_host: {root}\n"
        # lists and paths as host variables (above the generated group_vars; configure's -e takes strings)
        "          acceptance_collectives: [all_reduce]\n"
        "          acceptance_predicted_busbw: {}\n"
        f"          acceptance_mpirun: {FAKE}/mpirun\n"
        f"          acceptance_nccl_tests_bin: {FAKE}/bin\n"
        f"          acceptance_nccl_env_path: {FAKE}/nccl.env\n"
        "    role_gpu:\n"
        "      children:\n"
        "        pool_gpu: {}\n"
    )
    return path


def _stand_ins(root: Path) -> None:
    fake = root / FAKE.lstrip("/")
    (fake / "bin").mkdir(parents=True, exist_ok=True)
    (fake / "all_reduce.txt").write_bytes(NCCL_TEXT.read_bytes())
    (fake / "nccl.env").write_text("NCCL_DEBUG=WARN\n")
    for path, text in ((fake / "mpirun", MPIRUN), (fake / "bin" / "all_reduce_perf", PERF)):
        path.write_text(text)
        path.chmod(0o755)


def _acceptance(build_dir: Path, inventory: Path, *extra: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code, out, err = run_cli(
        "configure",
        str(build_dir),
        "-i",
        str(inventory),
        "--playbook",
        "acceptance.yml",
        "--format",
        "json",
        "-e",
        "cb_hardware_present=false",
        "-e",
        "acceptance_run_nccl_tests=true",
        *extra,
    )
    try:
        return code, json.loads(out), err
    except ValueError:
        pytest.fail(f"configure printed no JSON (exit {code}): {out}\n{err}")


def test_acceptance_keeps_the_nccl_tests_outputs_for_acceptance_report(
    chroot_root: Path, tmp_path: Path
) -> None:
    out = build(DATA / "ib-hgx-ports.yaml", tmp_path / "build")
    inv = _inventory(tmp_path / "hosts.yml", chroot_root)
    _stand_ins(chroot_root)

    # 1. the default results directory: build/acceptance-results beside build/ansible/
    code, result, err = _acceptance(out, inv, "-e", "acceptance_link_gbytes=50")
    host = result["hosts"][HOST]
    assert code == 0 and host["failed"] == 0, json.dumps(result, indent=1) + err
    assert host["changed"] == 3, host  # results directory, the output on the host, the fetched copy
    on_host = chroot_root / "var/lib/cluster-blueprint/acceptance" / NAME
    fetched = out / "acceptance-results" / NAME
    assert sorted(p.name for p in fetched.parent.iterdir()) == [NAME]
    assert fetched.read_bytes() == on_host.read_bytes() == NCCL_TEXT.read_bytes()
    # the role's command line: one rank per GPU of the play's hosts, the sweep of the group_vars
    args = (chroot_root / FAKE.lstrip("/") / "mpirun.args").read_text().split()
    assert args[:7] == ["--allow-run-as-root", "--bind-to", "none", "-np", "8", "-H", f"{HOST}:8"]
    assert args[-13:] == [
        f"{FAKE}/bin/all_reduce_perf", "-b", "1G", "-e", "8G", "-f", "2", "-g", "1", "-n", "20", "-c", "1"
    ]  # fmt: skip

    # 2. below the threshold (320 GB/s = 400 x 0.8 > 191.75): the play fails, the output is still fetched,
    #    and the host's copy is not rewritten (only the fetch to the emptied controller folder changes)
    fetched.unlink()
    code, result, err = _acceptance(out, inv, "-e", "acceptance_link_gbytes=400")
    host = result["hosts"][HOST]
    assert code == 1 and host["failed"] == 1, json.dumps(result, indent=1) + err
    assert [f["task"] for f in host["failures"]] == [
        "Check the bus bandwidth reaches the blueprint's threshold"
    ]
    assert host["changed"] == 1, host
    assert fetched.read_bytes() == NCCL_TEXT.read_bytes()

    # 3. acceptance-report reads the fetched folder: one all-rail all_reduce run over the two OCI hosts
    code, report, err = run_cli(
        "acceptance-report",
        str(DATA / "ib-hgx-ports.yaml"),
        "--results",
        str(fetched.parent),
        "--format",
        "json",
    )
    assert code in (0, 1), err
    runs = json.loads(report)["runs"]
    assert len(runs) == 1, runs
    assert runs[0]["collective"] == "all_reduce" and runs[0]["rail"] is None, runs[0]
    assert runs[0]["nodes"] == 2 and runs[0]["ranks"] == 16, runs[0]
