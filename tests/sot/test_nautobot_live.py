"""`blueprint sot push` against a real Nautobot: push a build, push it again (nothing written), push the
grown build (only the additions and the moves `blueprint diff` names), mark the cables connected; then read
back through Nautobot's REST API, with pynautobot and not the code under test, that every device, interface
and cable end equals the plan.

The server is Nautobot from PyPI on Debian's PostgreSQL and Redis, started for this module by
tests/sot/nautobot_server.sh (`.ci/run` installs it in .venv-nautobot) and stopped after it, or one of
your own named by CB_NAUTOBOT_URL and CB_NAUTOBOT_TOKEN.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, run_cli
from real_tools import missing_executables, needs
from sot_fixtures import builds, growth, netbox_rows  # noqa: F401  (fixtures)

HERE = Path(__file__).resolve().parent
SERVER = HERE / "nautobot_server.sh"
NAUTOBOT_VENV = Path(os.environ.get("NAUTOBOT_VENV", HERE.parents[1] / ".venv-nautobot"))
START_TIMEOUT_S = 900  # install excluded; start-up measured at ~30 s on the 2-core CI machine


def _missing_for_a_server() -> list[str]:
    missing = missing_executables(["redis-server", "runuser"])
    if not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        missing.append("PostgreSQL (Debian package postgresql)")
    if not (NAUTOBOT_VENV / "bin" / "nautobot-server").exists():
        missing.append(f"nautobot-server in {NAUTOBOT_VENV}")
    if os.geteuid() != 0:
        missing.append("root (PostgreSQL runs as the postgres user)")
    return missing


def _env_file(path: Path) -> dict[str, str]:
    """The ``export A=x B=y`` line nautobot_server.sh writes."""
    words = path.read_text().split()
    return dict(w.split("=", 1) for w in words if "=" in w)


@pytest.fixture(scope="module")
def server() -> Iterator[dict[str, str]]:
    """URL and token of a Nautobot: yours (CB_NAUTOBOT_URL/TOKEN) or one started for this module."""
    url, token = os.environ.get("CB_NAUTOBOT_URL", ""), os.environ.get("CB_NAUTOBOT_TOKEN", "")
    if url and token:
        yield {"CB_NAUTOBOT_URL": url, "CB_NAUTOBOT_TOKEN": token}
        return
    needs(_missing_for_a_server(), f"install it with: bash {SERVER} --install start DIR (or .ci/run)")
    state = Path(tempfile.mkdtemp(prefix="cb-nautobot-"))
    state.chmod(0o755)  # the postgres user writes its cluster below it
    env = {**os.environ, "NAUTOBOT_VENV": str(NAUTOBOT_VENV)}
    try:
        run = subprocess.run(
            ["bash", str(SERVER), "start", str(state)],
            env=env,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
        )
        assert run.returncode == 0, f"{run.stderr[-3000:]}\n{_tail(state / 'migrate.log')}"
        yield _env_file(state / "env")
    finally:
        subprocess.run(["bash", str(SERVER), "stop", str(state)], env=env, timeout=120, check=False)
        shutil.rmtree(state, ignore_errors=True)


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""


@pytest.fixture(scope="module")
def api(server: dict[str, str]) -> Any:
    import pynautobot

    return pynautobot.api(server["CB_NAUTOBOT_URL"], token=server["CB_NAUTOBOT_TOKEN"])


@pytest.fixture(scope="module")
def ib_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The InfiniBand hypercube example cut to 8 nodes on a 2-D cube (28 cables: Nautobot spends ~0.5 s of
    CPU a cable, sot_fixtures.py): the same device, interface and cable kinds as the 32-node example."""
    prebuilt = os.environ.get("CB_SOT_PREBUILT")
    if prebuilt:
        return Path(prebuilt) / "build-hypercube-8"
    folder = tmp_path_factory.mktemp("sot-ib")
    text = (EXAMPLES / "hypercube-research.yaml").read_text()
    cut = {"    count: 32\n": "    count: 8\n", "      dimension: 4\n": "      dimension: 2\n"}
    for old, new in cut.items():
        assert old in text
        text = text.replace(old, new)
    (folder / "hypercube-8.yaml").write_text(text)
    out = folder / "build"
    code, _, err = run_cli("generate", str(folder / "hypercube-8.yaml"), "-o", str(out), "-q")
    assert code == 0, err
    return out


def push(server: dict[str, str], build: Path, *extra: str) -> tuple[int, dict, str]:
    url, token = server["CB_NAUTOBOT_URL"], server["CB_NAUTOBOT_TOKEN"]
    code, out, err = run_cli(
        "sot", "push", str(build), "--url", url, "--token", token, "--format", "json", *extra
    )
    return code, (json.loads(out) if out.strip() else {}), err


def changed(report: dict, what: str) -> dict[str, int]:
    return {kind: len(v[what]) for kind, v in report["kinds"].items() if v[what]}


def read_back(api: Any, build: Path) -> dict[str, Any]:
    """The build's devices (rack, position), interfaces and cable ends as Nautobot holds them."""
    names = [r["name"] for r in netbox_rows(build, "devices.csv")]
    devices = {d.id: d for d in api.dcim.devices.filter(name=names)}
    racks = {r.id: r.name for r in api.dcim.racks.all()}
    interfaces: dict[str, tuple[str, str]] = {}
    for i in range(0, len(names), 50):
        ids = [d for d in devices if devices[d].name in names[i : i + 50]]
        for itf in api.dcim.interfaces.filter(device=ids):
            interfaces[itf.id] = (devices[itf.device.id].name, itf.name)
    labels = {r["label"] for r in netbox_rows(build, "cables.csv")}
    statuses = {s.id: s.name for s in api.extras.statuses.all()}  # one read, not one per cable
    cables = {}
    for cable in api.dcim.cables.all():
        if cable.label in labels:
            a, b = interfaces[cable.termination_a_id], interfaces[cable.termination_b_id]
            cables[cable.label] = (*a, *b, statuses[cable.status.id])
    return {
        "devices": {d.name: (racks.get(d.rack.id) if d.rack else None, d.position) for d in devices.values()},
        "interfaces": set(interfaces.values()),
        "cables": cables,
    }


def planned(build: Path) -> dict[str, Any]:
    return {
        "devices": {
            r["name"]: (r["rack"] or None, int(r["position"]) if r["position"] else None)
            for r in netbox_rows(build, "devices.csv")
        },
        "interfaces": {(r["device"], r["name"]) for r in netbox_rows(build, "interfaces.csv")},
        "cables": {
            r["label"]: (r["side_a_device"], r["side_a_name"], r["side_b_device"], r["side_b_name"])
            for r in netbox_rows(build, "cables.csv")
        },
    }


def assert_matches(api: Any, build: Path, status: str) -> None:
    there, plan = read_back(api, build), planned(build)
    assert there["devices"] == plan["devices"]
    assert there["interfaces"] == plan["interfaces"]
    assert {k: v[:4] for k, v in there["cables"].items()} == plan["cables"]
    assert {v[4] for v in there["cables"].values()} == {status}


def test_push_repush_of_an_infiniband_example(api: Any, server: dict[str, str], ib_build: Path) -> None:
    code, report, err = push(server, ib_build)
    assert code == 0, err
    assert changed(report, "create")["cable"] == len(netbox_rows(ib_build, "cables.csv"))
    assert_matches(api, ib_build, "Planned")
    code, report, err = push(server, ib_build)
    assert code == 0, err
    assert changed(report, "create") == {} and changed(report, "update") == {}


def test_push_repush_grow_and_connect(api: Any, server: dict[str, str], builds: dict, growth: dict) -> None:
    small, grown = builds["small"], builds["grown"]
    code, report, err = push(server, small)
    assert code == 0, err
    assert_matches(api, small, "Planned")
    # again: nothing to do (a dry run's exit 0 when nothing would change: tests/sot/test_sot_netbox.py)
    code, report, err = push(server, small)
    assert code == 0, err
    assert changed(report, "create") == {} and changed(report, "update") == {}
    # grown by 4 nodes (a full unit): the additions are created, the moves and re-sized cables updated
    code, report, err = push(server, grown, "--dry-run")
    assert code == 1, err
    summary = growth["summary"]
    assert changed(report, "create")["device"] == summary["devices_added"]
    code, report, err = push(server, grown)
    assert code == 0, err
    made, moved = changed(report, "create"), changed(report, "update")
    assert made["device"] == summary["devices_added"]
    assert made["cable"] == summary["cables_added"]
    assert made["interface"] == 2 * summary["cables_added"]
    assert made["rack"] == summary["racks_added"]
    assert moved["device"] == summary["devices_relocated"]
    assert moved["cable"] == summary["cables_changed"]
    assert_matches(api, grown, "Planned")
    # verify-cabling passed: planned -> connected, and a later push leaves them connected
    code, report, err = push(server, grown, "--mark-connected")
    assert code == 0, err
    assert report["connected"] == len(netbox_rows(grown, "cables.csv"))
    assert_matches(api, grown, "Connected")
    code, report, err = push(server, grown)
    assert code == 0 and changed(report, "update") == {}
    assert_matches(api, grown, "Connected")
