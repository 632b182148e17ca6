"""Pieces of `blueprint rehearse` that need no real tool: the fast reader of generated NVUE files against
ruamel (the loader it replaces), the dragonfly group-set sample, the partition intent per port, the subnet
managers' waits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from rehearse_fixtures import small_build
from ruamel.yaml import YAML

from generator.rehearse import block_read, cleanup, partitions, sample, sm_ha
from generator.rehearse.nvue import load_yaml

REPO_FIXTURES = Path(__file__).resolve().parents[1] / "realtools" / "fixtures"


def test_block_reader_reads_generated_nvue_exactly_as_ruamel() -> None:
    files = sorted((small_build() / "switches").glob("*/*/startup.yaml"))
    assert len(files) == 8
    for f in files:
        text = f.read_text()
        fast, slow = block_read.load(text), YAML(typ="safe", pure=True).load(text)
        assert fast == slow and repr(fast) == repr(slow), f


@pytest.mark.parametrize(
    "text",
    [
        "- set: {router: {bgp: {autonomous-system: 65001}}}\n",  # flow style (a hand edit)
        "- set:\n    a: on\n",  # a YAML 1.1 bool
        "- set:\n    a: 0x10\n",  # a hex int
        '- set:\n    a: "x"\n',  # double quotes
    ],
)
def test_anything_else_falls_back_to_ruamel(text: str) -> None:
    with pytest.raises(block_read.NotBlock):
        block_read.load(text)
    assert load_yaml(text, "t.yaml") == YAML(typ="safe", pure=True).load(text)


def test_anchors_are_refused_not_expanded() -> None:
    """generate writes no anchors; an alias expands without bound (foreign.parse_yaml)."""
    from generator.foreign import ForeignInputError

    with pytest.raises(ForeignInputError, match=r"t\.yaml:2: holds a YAML anchor or alias"):
        load_yaml("- set:\n    a: &x 1\n    b: *x\n", "t.yaml")


def test_dragonfly_is_sampled_as_a_group_set_with_its_global_links() -> None:
    routers = [f"c-router-g{g}-{r:02d}" for g in range(1, 6) for r in range(1, 5)]
    local = [(f"c-router-g{g}-{a:02d}", f"c-router-g{g}-{b:02d}") for g in range(1, 6)
             for a in range(1, 5) for b in range(a + 1, 5)]  # fmt: skip
    glob = [(f"c-router-g{a}-01", f"c-router-g{b}-02") for a in range(1, 6) for b in range(a + 1, 6)]
    found = sample.group_set(routers, local + glob)
    assert found is not None
    keep, what = found
    assert keep == {n for n in routers if n.split("-")[2] in ("g1", "g2", "g3")}
    assert what == ("sampled: dragonfly groups g1, g2, g3 of 5 (12 routers) with every local and global "
                    "link between them (3 global)")  # fmt: skip
    assert sample.group_set(["c-leaf-001", "c-spine-001"], []) is None


def test_partition_intent_per_port() -> None:
    text = Path(__file__).with_name("partitions-tenants.conf").read_text()
    parts = partitions.parse(text)
    ports = {1: "gpu001 mlx5_0/1", 2: "cpu001 mlx5_0/1"}
    want = partitions.intended(parts, ports, {1: "gpu", 2: "cpu"})
    # gpu is a tenant: limited in Default; cpu is in no partition: full; storage is ALL_CAS limited
    assert want == {1: {0x7FFF, 0x800A, 0x000B}, 2: {0xFFFF, 0x000B}}
    got = {1: {0xFFFF, 0x800A, 0x000B}, 2: {0xFFFF, 0x000B, 0x800A}}
    assert partitions.table_problems(want, got, ports, parts) == [
        "gpu001 mlx5_0/1 (0x0000000000000001): Default 0x7fff full, the plan limited",
        "cpu001 mlx5_0/1 (0x0000000000000002): tenant-a 0x000a full, the plan absent",
    ]
    filled = partitions.filled(text, {"gpu": [1, 3]})
    assert (
        "tenant-a=0x000a, ipoib, defmember=full :\n    0x0000000000000001,\n    0x0000000000000003 ;"
        in filled
    )


@pytest.mark.parametrize("key", ["ip", "ipv4"])  # Cumulus Linux <= 5.14 / >= 5.15 spelling
def test_a_leafs_host_port_address_reaches_zebra(key: str) -> None:
    """The host-facing port's /31 of a routed leaf is given to zebra as ifupdown2 sets it on the switch, in
    either release's spelling; frr.conf's own `interface` blocks are read back the same way."""
    from generator.rehearse.nvue import from_frr_conf, from_startup

    text = f"""- set:
    interface:
      lo:
        {key}:
          address:
            10.254.0.1/32: {{}}
      swp1s0:
        description: C-NL-000001 to gpu001 eth0
        {key}:
          address:
            10.100.0.11/31: {{}}
    router:
      bgp:
        autonomous-system: 4200000000
        router-id: 10.254.0.1
    vrf:
      default:
        router:
          bgp:
            address-family:
              ipv4-unicast:
                network:
                  10.100.0.10/31: {{}}
                  10.254.0.1/32: {{}}
"""
    cfg = from_startup(text, "leaf", "compute", "startup.yaml")
    assert cfg.addresses == {"swp1s0": ("10.100.0.11/31",)} and cfg.loopbacks == ("10.254.0.1/32",)
    assert (
        "interface swp1s0\n description C-NL-000001 to gpu001 eth0\n ip address 10.100.0.11/31\nexit\n"
        in (cfg.frr_conf)
    )
    assert "  network 10.100.0.10/31\n" in cfg.frr_conf
    back = from_frr_conf(cfg.frr_conf, "leaf", "compute", "frr.conf")
    assert back.addresses == cfg.addresses and set(back.networks) == set(cfg.networks)


def test_the_subnet_managers_waits_grow_with_the_sweep_this_fabric_took() -> None:
    """A small fabric keeps the floors (its one-shot OpenSM takes about a second); ndr-3tier-4096gpu's took 21 s
    (docs/rehearse.md) and its takeover 68.6 s, 60 s of polls and ~9 s of sweep: a margin of twice its sweep
    leaves a loaded machine 33 s more, the floor only 21 s."""
    small, large = sm_ha.waits(1.2), sm_ha.waits(21.0)
    assert (small.subnet_up_s, small.standby_s, small.sweep_margin_s) == (120.0, 60.0, 30.0)
    assert (large.subnet_up_s, large.standby_s, large.sweep_margin_s) == (120.0, 63.0, 42.0)


def test_a_signal_during_release_is_delivered_once_everything_is_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second Ctrl-C while the namespaces are being deleted used to stop the deletion half way (the next
    rehearsal's sweep removed the rest); it now arrives after the last one, as the Interrupted it always was."""
    deleted: list[str] = []

    def delete(ns: str) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        deleted.append(ns)

    monkeypatch.setattr(cleanup, "delete_namespace", delete)
    reaper = cleanup.Reaper()
    reaper.namespaces += ["cbr-test-0", "cbr-test-1"]
    with pytest.raises(cleanup.Interrupted), cleanup.signals_raise():
        reaper.release()
    assert deleted == ["cbr-test-1", "cbr-test-0"] and reaper.namespaces == []


def test_the_cabling_plan_and_the_net_file_name_every_link_alike_appliances_included(tmp_path: Path) -> None:
    """The rehearsal's discovery check compares cables.csv with the net file generate writes. A UFM
    appliance's ports (``p1``/``p2`` in cables.csv, CAs ``ufm01 p1`` in the net file) used to drop out of the
    plan side, so the shipped superpod example failed its rehearsal with 4 links "not in cables.csv"."""
    from rehearse_fixtures import REPO, generate

    from generator.foreign import read_foreign_text
    from generator.rehearse.build_input import read_build
    from generator.rehearse.infiniband import links, planned_links

    build = read_build(generate(REPO / "examples" / "superpod-h100-4su.yaml", tmp_path / "build"))
    net = build.infiniband["compute"].netfile
    found = set(links(read_foreign_text(net, 64 * 1024 * 1024), str(net)))
    planned = planned_links(build, "compute", set())
    appliance = {link for link in found if any(end[0].startswith("ufm") for end in link)}
    assert len(appliance) == 4  # two UFM appliances, two ports each
    assert planned == found


def test_the_partitions_a_rehearsal_gives_opensm_are_those_sm_guids_writes(tmp_path: Path) -> None:
    """Rehearse fills the generated partitions.conf from a discovery as `blueprint sm-guids` renders it from
    the blueprint: pools no partition names are full members of Default (left limited before, so a correct
    build failed its partitions check), and members stand one a line (all on one line before: 26 eight-port
    nodes passed OpenSM's 4,096-byte line)."""
    import yaml

    from generator.emit.subnet_manager import render_partitions, sm_plan
    from generator.pipeline import load_and_resolve

    doc = yaml.safe_load((REPO_FIXTURES / "ft2-hdr-rail-sm.yaml").read_text())
    doc["pools"][0]["count"] = 32
    doc["pools"].append({"name": "infer", "role": "gpu", "count": 2, "server": "dgx-a100"})
    path = tmp_path / "shared.yaml"
    path.write_text(yaml.safe_dump(doc))
    cluster = load_and_resolve(path)[1]
    plan = sm_plan(cluster, "compute", None)  # partitions only: the engine is not read
    guids = {"gpu": list(range(1, 257)), "infer": [1001, 1002]}
    generated = render_partitions(cluster, plan)
    assert "pools in no partition (infer)" in generated

    rehearsed = partitions.filled(generated, guids)

    def statements(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]

    assert statements(rehearsed) == statements(render_partitions(cluster, plan, guids))
    assert "    0x00000000000003e9=full," in rehearsed  # infer's first port, full in Default
    assert max(len(line) for line in rehearsed.splitlines()) < 200


def test_with_sharp_the_rehearsal_fills_default_as_sm_guids_writes_it(tmp_path: Path) -> None:
    """With SHARP on, Default also makes every switch a full member (`ALL_SWITCHES=full`, subnet_manager.py
    SWITCHES_FULL); the rehearsal's fill must still find that Default line and keep the switches full."""
    import yaml

    from generator.emit.subnet_manager import render_partitions, sm_plan
    from generator.pipeline import load_and_resolve

    doc = yaml.safe_load((REPO_FIXTURES / "ft2-hdr-rail-sm.yaml").read_text())
    doc["pools"].append({"name": "infer", "role": "gpu", "count": 2, "server": "dgx-a100"})
    doc["fabrics"]["compute"]["subnet_manager"].update(flavour="opensm-nvidia", sharp=True)
    path = tmp_path / "sharp.yaml"
    path.write_text(yaml.safe_dump(doc))
    cluster = load_and_resolve(path)[1]
    plan = sm_plan(cluster, "compute", None)
    guids = {"gpu": [1, 2], "infer": [1001, 1002]}
    generated = render_partitions(cluster, plan)
    assert "Default=0x7fff, ipoib : ALL=limited, ALL_SWITCHES=full, SELF=full ;" in generated
    rehearsed = partitions.filled(generated, guids)

    def statements(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]

    assert statements(rehearsed) == statements(render_partitions(cluster, plan, guids))
    assert "    ALL_SWITCHES=full," in rehearsed and "    0x00000000000003e9=full," in rehearsed


def test_an_appliance_port_is_a_limited_member_of_default_as_the_emitter_writes() -> None:
    """With tenants, Default is `ALL=limited` but for the pools no partition names (subnet_manager.py
    default_members); a UFM appliance's port belongs to no pool and is limited there. The rehearsal's intent
    said full, so a correct build with appliances and a partition failed its partitions check."""
    text = Path(__file__).with_name("partitions-tenants.conf").read_text()
    parts = partitions.parse(text)
    ports = {1: "gpu001 mlx5_0/1", 2: "cpu001 mlx5_0/1", 3: "ufm01 p1/1"}
    want = partitions.intended(parts, ports, {1: "gpu", 2: "cpu"})
    assert 0x7FFF in want[3] and 0xFFFF not in want[3]  # limited in Default
    assert 0xFFFF in want[2]  # the pool no partition names: full


@pytest.mark.parametrize(
    ("example", "fabric"), [("superpod-h100-4su", "compute"), ("hypercube-research", "compute")]
)
def test_rehearse_takes_the_top_tier_sm_guids_takes(tmp_path: Path, example: str, fabric: str) -> None:
    """Roots by the cabling plan's layers, cores else spines, as generator.verify.sm_guids top_tier: a
    hypercube has none (the B-end rule picked one switch of it)."""
    from rehearse_fixtures import REPO, generate

    from generator.pipeline import load_and_resolve
    from generator.plan.build import build_plan
    from generator.rehearse.build_input import read_build
    from generator.rehearse.infiniband import top_tier
    from generator.rehearse.run import fabric_devices
    from generator.verify.sm_guids import top_tier as sm_guids_top_tier

    path = REPO / "examples" / f"{example}.yaml"
    build = read_build(generate(path, tmp_path / "build"))
    plan = build_plan(load_and_resolve(path)[1])
    want = sm_guids_top_tier(plan, fabric)
    assert top_tier(build, fabric, fabric_devices(build, fabric)) == want
    assert bool(want) is (example == "superpod-h100-4su")


# OpenSM 3.3.23 log lines (a run whose opensm.conf named `dfssp`, a typo, and fell back; then a good run)
TYPO_LOG = """\
Dec 07 10:37:59 082423 [257CF740] 0x01 -> setup_routing_engine: cannot find or setup routing engine 'dfssp'
Dec 07 10:37:59 082425 [257CF740] 0x01 -> setup_routing_engines: Failed to setup routing engine 'dfssp'
Dec 07 10:37:59 090000 [227C86C0] 0x80 -> Entering MASTER state
Dec 07 10:37:59 095430 [227C86C0] 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches
Dec 07 10:37:59 095431 [227C86C0] 0x80 -> SUBNET UP
"""


def test_an_engine_opensm_replaced_with_minhop_fails_the_check() -> None:
    """A routing engine OpenSM could not set up (`dfssp`) passed: the check looked for "routing engine
    'dfssp' failed", which this OpenSM never prints; it routed with minhop. Now the engine must be the one
    whose tables were configured."""
    from generator.rehearse.infiniband import sm_problems

    found = sm_problems(TYPO_LOG, "dfssp", 0)
    assert "OpenSM could not set up the dfssp routing engine" in found
    assert "the dfssp routing engine did not configure every switch (minhop configured the switches)" in found
    good = TYPO_LOG.replace("dfssp", "x").replace("minhop tables", "dfsssp tables")
    good = "\n".join(ln for ln in good.splitlines() if "routing engine" not in ln)
    assert sm_problems(good, "dfsssp", 0) == []
    assert sm_problems(good.replace("dfsssp tables", "minhop tables"), "minhop", 0) == []


def test_the_log_and_partition_file_stay_in_the_work_directory(tmp_path: Path) -> None:
    """An opensm.conf without `log_file` (or `partition_config_file`) let OpenSM append to the host's
    /var/log/opensm.log (the rehearsal then read nothing and failed) or read the host's
    /etc/opensm/partitions.conf; both are set whatever the file says, the GUID files only where named."""
    from generator.rehearse.infiniband import relocated_conf

    conf = tmp_path / "opensm.conf"
    conf.write_text("routing_engine minhop\nsm_priority 15\n")
    files = {
        "log_file": tmp_path / "opensm.log",
        "partition_config_file": tmp_path / "partitions.conf",
        "root_guid_file": tmp_path / "roots",
    }
    text = relocated_conf(conf, files, tmp_path / "out.conf").read_text()
    assert f"log_file {tmp_path / 'opensm.log'}\n" in text
    assert f"partition_config_file {tmp_path / 'partitions.conf'}\n" in text
    assert "root_guid_file" not in text and text.startswith("routing_engine minhop\nsm_priority 15\n")


def test_a_takeover_the_rehearsal_cannot_wait_for_is_a_finding(tmp_path: Path) -> None:
    """`polling_retry_number 4000000000` made the standby check wait 10 s x (4e9 + 2), ignoring --timeout:
    refused before any daemon starts (no simulator is touched)."""
    conf = tmp_path / "opensm.conf"
    conf.write_text("sminfo_polling_timeout 10000\npolling_retry_number 4000000000\n")
    sm = sm_ha.Sm("sm002", conf, tmp_path / "log", "opensm sm002")
    master = sm_ha.Sm("sm001", conf, tmp_path / "log1", "opensm sm001")
    problems, detail, seconds = sm_ha.takeover(None, (master, "h1"), (sm, "h2"), sm_ha.waits(1.0))  # type: ignore[arg-type]
    assert detail == "" and seconds == 0.0
    assert "makes a takeover take up to 40,000,000,050 s" in problems[0] and "past 600 s" in problems[0]


def _fake_sysctl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from generator.rehearse import limits

    sysctl = tmp_path / "proc"
    monkeypatch.setattr(limits, "PROC_SYS", sysctl)
    for key in limits.wanted(0):
        path = sysctl / key.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("1024\n" if key.endswith("3") else "512\n")
    return limits


def test_limits_a_killed_rehearsal_raised_are_put_back_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a SIGKILL (no `finally` runs) the next run swept the namespaces but left gc_thresh2/3 raised,
    and took the raised values as the ones to restore. The state is written before a value is, and the
    sweep puts them back where they are still what the dead run set; a planted state sets nothing."""
    limits = _fake_sysctl(tmp_path, monkeypatch)
    dead = 2**22 + 7  # above Linux's largest pid: no such process
    changes = limits.raise_limits(4000, tmp_path, pid=dead)
    assert changes and (tmp_path / limits.STATE_NAME).exists()
    raised = {c.key: c.during for c in changes}
    assert all(limits._read(k) == v for k, v in raised.items())
    swept = cleanup.sweep_stale(tmp_path, tmp_path)
    assert not (tmp_path / limits.STATE_NAME).exists()
    assert sorted(s.split()[3] for s in swept if "kernel limit" in s) == sorted(raised)
    assert all(limits._read(c.key) == c.before for c in changes)
    key = "net.ipv6.neigh.default.gc_thresh3"
    planted = {"original": {"net.ipv4.ip_forward": 0}, "written": {"net.ipv4.ip_forward": 1}, "holders": {}}
    for state in (planted, {"original": {key: 5000}, "written": {key: 1024}, "holders": {}}):
        (tmp_path / limits.STATE_NAME).write_text(json.dumps(state))
        assert limits.sweep(tmp_path) == [] and limits._read(key) == 1024


def test_limits_of_rehearsals_running_at_once_are_restored_by_the_last_one_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rehearsals at once: the first to end put back the values from before it while the other still
    ran (its fabric then lost neighbours), and the other then 'restored' the first one's raised values for
    good. The first out lowers only to what the other needs; the last out puts the originals back."""
    limits = _fake_sysctl(tmp_path, monkeypatch)
    key = "net.ipv6.neigh.default.gc_thresh3"
    other = subprocess.Popen(["sleep", "60"])
    try:
        for small, large in ((os.getpid(), other.pid), (other.pid, os.getpid())):
            limits.raise_limits(1024, tmp_path, pid=small)  # 2 x 1024 + 512
            assert limits._read(key) == 2560
            changes = limits.raise_limits(4000, tmp_path, pid=large)
            assert [(c.before, c.during) for c in changes if c.key == key] == [(2560, 8512)]
            limits.release(tmp_path, pid=large)
            assert limits._read(key) == 2560  # the smaller run still needs its value
            limits.raise_limits(4000, tmp_path, pid=large)
            limits.release(tmp_path, pid=small)
            assert limits._read(key) == 8512  # the larger run keeps its own
            limits.release(tmp_path, pid=large)
            assert limits._read(key) == 1024 and not (tmp_path / limits.STATE_NAME).exists()
        limits.raise_limits(4000, tmp_path, pid=other.pid)
        limits._write(key, 9000)  # an administrator's value, set while a rehearsal ran: theirs
        limits.release(tmp_path, pid=other.pid)
        assert limits._read(key) == 9000 and limits._read("net.ipv4.neigh.default.gc_thresh3") == 1024
    finally:
        other.kill()
        other.wait()


def test_the_state_directory_is_the_users_own_and_a_held_lock_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state and lock had fixed names in the shared temporary directory: another user's directory
    planted at either name stopped every rehearsal, and one holding the lock made each run wait 3 x 60 s
    and then go on unlocked. They live in root's own /run/cluster-blueprint (0700, checked); a lock held
    past the wait stops the run with a message instead."""
    from generator.foreign import ForeignInputError

    limits = _fake_sysctl(tmp_path, monkeypatch)
    mine = limits.state_dir(tmp_path / "run" / "cluster-blueprint")
    assert oct(mine.stat().st_mode & 0o777) == "0o700"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(ForeignInputError, match="only it can write"):
        limits.state_dir(shared)
    monkeypatch.setattr(limits, "LOCK_WAIT_S", 0.2)
    holder = subprocess.Popen(["flock", str(mine / limits.LOCK_NAME), "sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while not (mine / limits.LOCK_NAME).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        with pytest.raises(ForeignInputError, match="held by another process"):
            limits.raise_limits(4000, mine)
        assert limits._read("net.ipv6.neigh.default.gc_thresh3") == 1024
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_held_when_the_limits_are_put_back_keeps_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock held by another process as a finished rehearsal put its limits back: the refusal (a
    ForeignInputError) got past `except OSError`, the verdict was lost and the run exited 2. The verdict is
    kept, with the limits reported NOT restored."""
    from types import SimpleNamespace

    from generator.foreign import ForeignInputError
    from generator.rehearse import run

    limits = _fake_sysctl(tmp_path, monkeypatch)
    monkeypatch.setattr(limits, "state_dir", lambda: tmp_path)

    def held(state: Path) -> None:
        raise ForeignInputError(str(state / limits.LOCK_NAME), "held by another process")

    monkeypatch.setattr(limits, "release", held)
    build = SimpleNamespace(root=tmp_path, switches={}, cables_of=lambda f: [])
    result = run.rehearse(build, [], [])  # type: ignore[arg-type]
    assert result.limits_restored is False and result.fabrics == []
