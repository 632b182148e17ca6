"""What a blueprint itself lets through (issue 31): names a template renders, partitions and SM members,
designs far larger than their nodes, and blueprint files that are devices or megabytes of comments.
Every probe ends in a located error (exit 1 for a rule, 2 for an unusable file), in bounded time."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

from generator.foreign import host_name_problem
from generator.load import load_file
from generator.pipeline import check

HERE = Path(__file__).resolve().parent / "blueprints"
MAX_AS = 2 << 30
HEAD = "apiVersion: cluster-blueprint/v1\nname: probe\n"
POOL = "pools:\n  - {name: gpu, role: gpu, count: 4, server: dgx-h100}\n"
IB = (
    "fabrics:\n  compute:\n    technology: infiniband-ndr\n    subnet_manager: {kind: opensm, ha: true}\n"
    "    topology:\n      kind: fat-tree\n      switch: qm9700\n"
)


def no_crash(text: str) -> None:
    assert "Traceback" not in text and "internal error" not in text, text


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bp.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# ---- names -----------------------------------------------------------------------------------------
SWITCH_TEMPLATES = {
    "hex": ("0x7f00000{index}", "hexadecimal"),
    "digits": ("{index}", "all digits"),
    "leading-hyphen": ("-o{index}", "not a host name"),
    "trailing-hyphen": ("leaf{index}-", "not a host name"),
}


@pytest.mark.parametrize("case", sorted(SWITCH_TEMPLATES))
def test_switch_template_names_are_checked_rendered(case: str, tmp_path: Path) -> None:
    template, why = SWITCH_TEMPLATES[case]
    bp = write(tmp_path, HEAD + POOL + IB + f'      names:\n        leaf: {{template: "{template}"}}\n')
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 1, out + err
    hit = [line for line in out.splitlines() if "PLN002" in line]
    assert hit and f"{bp}:{line_of(bp, 'template')}:" in hit[0] and why in hit[0], out


def test_host_template_with_trailing_hyphen_is_refused(tmp_path: Path) -> None:
    pools = (
        'pools:\n  - {name: gpu, role: gpu, count: 4, server: dgx-h100, hostname_template: "gpu{index}-"}\n'
    )
    bp = write(tmp_path, HEAD + pools)
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 1 and re.search(rf"{re.escape(str(bp))}:4:\d+: error PLN002 .*`gpu1-`", out), out


@pytest.mark.parametrize("name", ["default", "all"])
def test_a_host_name_slurm_or_ansible_reads_as_a_keyword_is_refused(name: str, tmp_path: Path) -> None:
    """A host `default` became slurm.conf's `NodeName=default`, Slurm's record of defaults (in any case): no
    node was defined and slurmctld stopped ("no nodes configured"); `ALL` is reserved there too, and `all` is
    Ansible's group of every host."""
    pools = f"pools:\n  - {{name: gpu, role: gpu, count: 1, server: dgx-h100, hostnames: [{name}]}}\n"
    bp = write(tmp_path, HEAD + pools)
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 1 and re.search(rf"{re.escape(str(bp))}:4:\d+: error PLN002 .*`{name}`: reserved", out), (
        out
    )


@pytest.mark.parametrize(
    ("where", "name"),  # host names are lower case (the schema); switch names keep the site's case
    [("host", "localhost"), ("host", "ip6-loopback"), ("switch", "localhost"), ("switch", "LocalHost")]
    + [("switch", "ip6-localhost")],
)
def test_a_name_of_the_machine_itself_is_refused(where: str, name: str, tmp_path: Path) -> None:
    """A spine named `localhost` (or a host): validate and generate passed, and the switch play (become: true)
    would have written /etc/frr/frr.conf and reloaded FRR on the machine running it."""
    if where == "host":
        text = (
            HEAD + f"pools:\n  - {{name: gpu, role: gpu, count: 1, server: dgx-h100, hostnames: [{name}]}}\n"
        )
    else:
        text = HEAD + POOL + IB + f"      names:\n        spine: {{names: [{name}, s2]}}\n"
    bp = write(tmp_path, text)
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 1 and re.search(rf"error PLN002 .*`{name}`: a name of the machine itself", out), out
    assert f"{bp}:{line_of(bp, name)}:" in out, out


@pytest.mark.parametrize("where", ["host", "switch"])
def test_template_with_a_final_newline_is_a_schema_error(where: str, tmp_path: Path) -> None:
    if where == "host":
        text = (
            HEAD
            + 'pools:\n  - {name: gpu, role: gpu, count: 4, server: dgx-h100, hostname_template: "gpu-{index}\\n"}\n'
        )
    else:
        text = HEAD + POOL + IB + '      names:\n        leaf: {template: "leaf-{index}\\n"}\n'
    bp = write(tmp_path, text)
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 2 and "SCHEMA" in out and "is not a name template" in out, out
    assert re.search(rf"{re.escape(str(bp))}:{line_of(bp, 'template')}:\d+: error SCHEMA", out), out
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"), "--quiet")
    no_crash(out + err)
    assert code == 2 and not (tmp_path / "build").exists()


def test_hex_switch_names_are_not_generated_and_cannot_be_suppressed(tmp_path: Path) -> None:
    text = (HERE / "names-hex-switch-template.yaml").read_text()
    bp = write(tmp_path, text + "suppress:\n  - {rule: PLN002, reason: trying to silence it}\n")
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"), "--quiet")
    no_crash(out + err)
    assert code == 1 and "PLN002" in out + err and "0x7f000001" in out + err
    assert not (tmp_path / "build" / "ansible").exists()


def test_every_example_name_is_a_host_name() -> None:
    for path in sorted(EXAMPLES.glob("*.yaml")):
        checked = check(path)
        assert not [f for f in checked.findings if f.rule == "PLN002"], path
        names = [h for p in checked.cluster.pools for h in p.hostnames]
        if checked.context.plan is not None:
            names += [d.name for d in checked.context.plan.devices if d.kind == "switch"]
        assert names and all(host_name_problem(n) is None for n in names), path


# ---- partitions and subnet manager hosts -------------------------------------------------------------
def test_partition_merge_and_sm_members_are_located_and_not_suppressible() -> None:
    bp = HERE / "sm-partitions-merge.yaml"
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 1, out
    pkey = line_of(bp, "name: evil")
    assert re.search(rf":{pkey}:\d+: error NET020 .*reuses P_Key 0x000a of partition `tenant-a`", out), out
    assert re.search(rf":{pkey}:\d+: error NET020 .*ALL_CAS", out), out
    hosts = line_of(bp, "hosts:")
    assert re.search(rf":{hosts}:\d+: error NET021 .*`gpu001` is listed twice", out), out
    assert re.search(rf":{hosts}:\d+: error NET021 .*no standby", out), out


def _validate_sm(tmp_path: Path, sm: str) -> tuple[Path, tuple[int, str, str]]:
    """`validate` on an NDR fat-tree whose OpenSM subnet manager carries the line ``sm``."""
    fabric = (
        "fabrics:\n  compute:\n    technology: infiniband-ndr\n    topology: {kind: fat-tree, switch: qm9700}\n"
        f"    subnet_manager:\n      kind: opensm\n      ha: true\n      {sm}\n"
    )
    bp = write(tmp_path, HEAD + POOL + fabric)
    result = run_cli("validate", str(bp))
    no_crash(result[1] + result[2])
    return bp, result


@pytest.mark.parametrize(
    ("sm", "needle"),
    [
        ("hosts: [ghost, gpu001]", "`ghost` is not a host of any pool"),
        ("partitions: [{name: t, pkey: 0x0c, pools: [nope]}]", "pool `nope` is not a pool"),
    ],
)
def test_sm_members_and_partition_pools_must_be_on_the_fabric(sm: str, needle: str, tmp_path: Path) -> None:
    bp, (code, out, err) = _validate_sm(tmp_path, sm)
    assert code == 1 and needle in out, out
    assert re.search(rf":{line_of(bp, sm.split(':')[0] + ':')}:\d+: error NET02[01]", out), out


def test_a_partition_name_used_twice_is_refused(tmp_path: Path) -> None:
    """Two partitions `a` (P_Keys 5 and 6) were both written to partitions.conf, one name for two partitions."""
    sm = "partitions: [{name: a, pkey: 0x05}, {name: a, pkey: 0x06}]"
    bp, (code, out, err) = _validate_sm(tmp_path, sm)
    assert code == 2 and "partition name `a` is used twice" in out, out
    assert re.search(rf":{line_of(bp, 'partitions:')}:\d+: error SCHEMA", out), out


# ---- size budgets ----------------------------------------------------------------------------------
def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MAX_AS, MAX_AS))


def test_dragonfly_of_16k_routers_for_2_nodes_is_refused_before_building(tmp_path: Path) -> None:
    bp = HERE / "dragonfly-16k-routers-2-nodes.yaml"
    assert len(bp.read_bytes()) < 400
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", "generate", str(bp), "-o", str(tmp_path / "b"), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_memory,
    )
    no_crash(proc.stdout + proc.stderr)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr  # generate reports on stderr
    assert f"{bp}:{line_of(bp, 'groups')}:" in said and "16,384 routers" in said, said
    assert time.perf_counter() - start < 60  # it was 18 s to validate and 765 MB written before
    assert not (tmp_path / "b").exists()


def test_torus_of_switches_far_larger_than_its_nodes_is_refused(tmp_path: Path) -> None:
    fabric = (
        "fabrics:\n  compute:\n    technology: ethernet-100\n"
        "    topology: {kind: torus, dimensions: [128, 128], attach: switch, switch: sn5600}\n"
    )
    bp = write(tmp_path, HEAD + POOL + fabric)
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 2 and "16,384 vertices" in out and f"{bp}:{line_of(bp, 'dimensions')}:" in out, out


# ---- reading the blueprint -------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["validate", "migrate"])
def test_device_given_as_blueprint_is_refused_not_read(command: str, tmp_path: Path) -> None:
    link = tmp_path / "bp.yaml"
    link.symlink_to("/dev/zero")
    proc = subprocess.run(
        [sys.executable, "-m", "generator.cli", command, str(link)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
    )
    no_crash(proc.stdout + proc.stderr)
    assert proc.returncode == 2 and "not a regular file" in proc.stdout + proc.stderr
    assert str(link) in proc.stdout + proc.stderr


def test_fifo_given_as_blueprint_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "bp.yaml"
    os.mkfifo(fifo)
    code, out, _err = run_cli("validate", str(fifo))
    assert code == 2 and f"{fifo}:1:1" in out and "not a regular file" in out, out


def test_800k_comment_lines_load_in_linear_time(tmp_path: Path) -> None:
    body = (EXAMPLES / "single-dgx-h100.yaml").read_text()
    path = write(tmp_path, body + "# c\n" * 800_000)  # 3.2 MB: inside the loader's 4 MiB
    start = time.perf_counter()
    loaded = load_file(path)
    took = time.perf_counter() - start
    assert loaded.blueprint.name == "single-dgx-h100"
    assert took < 8, f"{took:.1f} s (was 34 s before the comment-skipping scanner)"


def test_comment_lines_keep_positions(tmp_path: Path) -> None:
    path = write(tmp_path, "# c\n" * 1000 + HEAD + "  # indented comment\r\n" * 3 + "pools: [{name: X}]\n")
    code, out, _ = run_cli("validate", str(path))
    assert code == 2 and f"{path}:1006:" in out, out


def test_migrate_refuses_deep_flow_nesting_located(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + "x: " + "[" * 3000 + "\n")
    start = time.perf_counter()
    code, _out, err = run_cli("migrate", str(path))
    assert code == 2 and f"{path}:3:" in err and "nesting deeper" in err, err
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("name", ["a", "gpu001", "fe80", "deadbeef", "e1", "a" * 63, "a-b", "x0x7f", "inf"])
def test_the_rules_fast_path_accepts_only_what_the_full_check_accepts(name: str) -> None:
    from generator.rules.pln.pln002_host_names import _problem

    assert _problem(name) == host_name_problem(name) is None
    assert _problem(name + "-") is not None and _problem("-" + name) is not None


def test_fat_tree_growth_counts_in_the_size_budget(tmp_path: Path) -> None:
    """2 nodes declaring growth to 1,000,000 would build spines and cores for them: refused before building
    (the bound used to ignore growth_nodes)."""
    bp = write(
        tmp_path,
        HEAD + POOL.replace("count: 4", "count: 2") + IB + "      tiers: 3\n      growth_nodes: 1000000\n",
    )
    started = time.monotonic()
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code in (1, 2) and "PLN001" in out + err and "switches" in out + err, out + err
    assert time.monotonic() - started < 60


def test_suppressing_a_guard_rule_says_it_has_no_effect(tmp_path: Path) -> None:
    text = (HERE / "names-hex-switch-template.yaml").read_text()
    bp = write(tmp_path, text + "suppress:\n  - {rule: PLN002, reason: trying to silence it}\n")
    code, out, err = run_cli("validate", str(bp))
    assert code == 1
    assert "SUP001" in out + err and "cannot be suppressed" in out + err


# ---- an explicit server's catalogue ids ----------------------------------------------------------
SPEC = (
    "pools:\n  - name: gpu\n    role: gpu\n    count: 2\n    spec:\n      gpu: {gpu}\n      gpus: 4\n"
    "      gpu_interconnect: pcie4\n      power_kw: 2.2\n      rack_units: 2\n      nics:\n"
    "        - {{purpose: compute, model: {nic}, count: 2, ports: 2, speed_gbps: 100}}\n"
)


# case: (the spec's GPU id, its NIC id); the first not catalogue-shaped is reported
SPEC_IDS = {
    "path-gpu": ('"../../etc/passwd"', "cx6-dx"),
    "empty-gpu": ('""', "cx6-dx"),
    "empty-nic": ("l40s", '""'),
    "escape-nic": ("l40s", '"\\x1b[31m"'),
    "long-nic": ("l40s", '"' + "n" * 3000 + '"'),
}


@pytest.mark.parametrize("case", sorted(SPEC_IDS))
def test_a_spec_id_no_catalogue_entry_could_have_is_a_located_error(tmp_path: Path, case: str) -> None:
    """Was an internal error (exit 3): the spec became a catalogue server whose id pattern refused it."""
    gpu, nic = SPEC_IDS[case]
    field = "gpu" if case.endswith("gpu") else "model"
    bp = write(tmp_path, HEAD + SPEC.format(gpu=gpu, nic=nic))
    code, out, err = run_cli("validate", str(bp))
    no_crash(out + err)
    assert code == 2
    line = line_of(bp, f"{field}: ") if field == "gpu" else line_of(bp, "model:")
    assert f"bp.yaml:{line}:" in out + err and "CAT001 not a catalogue id" in out + err
    assert "\x1b" not in out + err and "passwd" not in out + err


def test_a_rack_with_every_unit_reserved_is_a_located_error(tmp_path: Path) -> None:
    """`reserved_units` equal to `units` (both within their own bounds) left the planner no unit to place a
    switch in: `plan` and `estimate` divided by zero (exit 3) while `validate` passed."""
    text = (EXAMPLES / "hypercube-research.yaml").read_text()
    rack = "  rack: {units: 42, power_kw: 24}\n"
    assert rack in text
    bp = write(tmp_path, text.replace(rack, "  rack: {units: 10, reserved_units: 10, power_kw: 24}\n", 1))
    for command in ("validate", "plan", "estimate"):
        code, out, err = run_cli(command, str(bp))
        no_crash(out + err)
        assert code == 2 and "leaves no usable unit in a 10U rack" in out + err, command
    bp.write_text(bp.read_text().replace("reserved_units: 10", "reserved_units: 9"))
    code, out, err = run_cli("plan", str(bp))
    no_crash(out + err)


@pytest.mark.parametrize("example", ["single-dgx-h100", "superpod-h100-4su"])
def test_a_blueprint_file_name_that_is_not_utf8_generates(tmp_path: Path, example: str) -> None:
    """Was an internal error (exit 3) and no build: the name reached the UTF-8 headers and findings.json as
    the lone surrogate os.fsdecode keeps a non-UTF-8 byte as."""
    name = os.fsdecode(b"bp-\xff.yaml")
    bp = tmp_path / name
    bp.write_bytes((EXAMPLES / f"{example}.yaml").read_bytes())
    code, out, err = run_cli("generate", str(bp), "-o", str(tmp_path / "build"))
    no_crash(out + err)
    assert code == 0, err
    # text files name it as \xff; JSON as the escape that reads back as the name's bytes
    header = (tmp_path / "build" / "ansible" / "inventory.yml").read_text(encoding="utf-8")
    assert "from bp-\\xff.yaml" in header
    findings = json.loads((tmp_path / "build" / "report" / "findings.json").read_text(encoding="utf-8"))
    assert findings and {os.fsencode(f["file"]) for f in findings} == {os.fsencode(str(bp))}


def test_a_number_past_pythons_digit_limit_is_said_without_pythons_advice(tmp_path: Path) -> None:
    """A 5,000-digit count ended in Python's own advice: "use sys.set_int_max_str_digits() to increase the
    limit"."""
    path = tmp_path / "big.yaml"
    path.write_text(
        "apiVersion: cluster-blueprint/v1\nname: x\npools:\n"
        f"  - {{name: gpu, count: {'1' * 5000}, server: dgx-h100}}\n"
    )
    code, out, err = run_cli("validate", str(path))
    text = out + err
    assert code == 2 and f"{path}:4:" in text and "a number of more than 4,300 digits" in text, text
    assert "set_int_max_str_digits" not in text
