"""Tasks of the shipped roles run by the real ansible-playbook on this machine (connection local; stand-in
`ibstat` / `nvidia-smi` on PATH print what the real ones print; nothing outside the test's folder is written):

* the RoCE QoS script template keeps each command on its own line (Ansible renders templates with
  trim_blocks, which ate the newline after `{% endfor %}` and glued `ip link set ...` onto mlnx_qos's
  arguments: mlnx_qos refuses extra arguments, and under `set -eu` nothing was applied);
* the acceptance role's read-only reads (ibstat, nvidia-smi topo -m) run in check mode (`blueprint configure
  --check`), where a skipped command left its check reading nothing and failing;
* a driver the image ships, kept because it is at least the branch, is not then refused for not being the
  pin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from ansible_helpers import IBSTAT, ansible_bin
from conftest import EXAMPLES, run_cli

# nvidia-smi topo -m of three GPUs on NVLink and a NIC (tab-separated, as it prints)
TOPO = """\
\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNV18\tNV18\tPXB\t0-55\t0
GPU1\tNV18\t X \tNV18\tSYS\t0-55\t0
GPU2\tNV18\tNV18\t X \tSYS\t56-111\t1
NIC0\tPXB\tSYS\tSYS\t X
"""


@pytest.fixture(scope="module")
def roles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("build")
    code, _, err = run_cli(
        "generate", str(EXAMPLES / "superpod-h100-4su.yaml"), "-o", str(out), "--only", "ansible"
    )
    assert code == 0, err
    return out / "ansible" / "roles"


def _stub(bin_dir: Path, name: str, text: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / f"{name}.out").write_text(text)
    script = bin_dir / name
    script.write_text(f"#!/bin/sh\ncat '{bin_dir / name}.out'\n")
    script.chmod(0o755)


def _play(
    tmp: Path, roles: Path, tasks: list[dict], variables: dict, *options: str
) -> subprocess.CompletedProcess[str]:
    play = [{"hosts": "localhost", "gather_facts": False, "vars": variables, "tasks": tasks}]
    return _run_play(tmp, roles, play, "-i", "localhost,", "-c", "local", *options)


def _run_play(tmp: Path, roles: Path, play: list[dict], *options: str) -> subprocess.CompletedProcess[str]:
    """ansible-playbook of ``play`` with the generated roles, its own home and PATH in ``tmp``."""
    path = tmp / "play.json"  # YAML is a superset of JSON: the play as data, nothing templated into it
    path.write_text(json.dumps(play))
    env = {
        "PATH": f"{tmp / 'bin'}:/usr/bin:/bin",
        "ANSIBLE_ROLES_PATH": str(roles),
        "ANSIBLE_HOME": str(tmp / "ansible-home"),
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "HOME": str(tmp),
    }
    return subprocess.run(
        [ansible_bin("ansible-playbook"), *options, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        env=env,
    )


def test_the_roce_qos_script_keeps_one_command_a_line(roles: Path, tmp_path: Path) -> None:
    """One block a class (compute, then storage), each with its own priority, DSCP and MTU (the role's
    default where the class gives none)."""
    script = tmp_path / "roce-qos.sh"
    compute = {
        "fabric": "compute",
        "interfaces": ["ens0f0np0", "ens1f0np0"],
        "rdma_devices": ["mlx5_0", "mlx5_1"],
        "trust": "dscp",
        "pfc": True,
        "pfc_priority": 3,
        "ecn": True,
        "dscp": 26,
    }
    storage = {**compute, "fabric": "storage", "interfaces": ["enp170s0f0np0"], "rdma_devices": ["mlx5_7"]}
    storage |= {"pfc_priority": 4, "dscp": 32, "ecn": False, "mtu": 9000}
    variables = {"roce_qos_classes": [compute, storage], "roce_qos_mtu": 4200}
    template = {
        "src": str(roles / "roce_qos" / "templates" / "roce-qos.sh.j2"),
        "dest": str(script),
        "mode": "0644",
    }
    done = _play(tmp_path, roles, [{"ansible.builtin.template": template}], variables)
    assert done.returncode == 0, done.stdout + done.stderr
    blocks = dict(zip(("compute", "storage"), script.read_text().split("# storage:"), strict=True))
    expected = {
        "compute": ("ens0f0np0 ens1f0np0", "mlx5_0 mlx5_1", "0,0,0,1,0,0,0,0", "26,3", 4200, "enable/3", 104),
        "storage": ("enp170s0f0np0", "mlx5_7", "0,0,0,0,1,0,0,0", "32,4", 9000, "enable/4", 128),
    }
    for name, (ifcs, devs, pfc, dscp2prio, mtu, ecn, tos) in expected.items():
        lines = blocks[name].split("\n")
        assert f"for ifc in {ifcs}; do" in lines and f"for dev in {devs}; do" in lines, name
        assert f'  mlnx_qos -i "$ifc" --trust dscp --pfc {pfc}' in lines, name
        assert f'  mlnx_qos -i "$ifc" --dscp2prio set,{dscp2prio}' in lines, name
        assert f'  ip link set dev "$ifc" mtu {mtu}' in lines, name
        ecn_on = "1" if name == "compute" else "0"
        assert f'  echo {ecn_on} > "/sys/class/net/$ifc/ecn/roce_np/{ecn}"' in lines, name
        assert f'  cma_roce_tos -d "$dev" -t {tos}' in lines, name
    assert subprocess.run(["sh", "-n", str(script)], check=False).returncode == 0


def test_opensm_refuses_to_bind_to_an_unpublished_port(roles: Path, tmp_path: Path) -> None:
    """An SM host whose port map names no RDMA device got the plan's placeholder (`mlx5_0`), which may be
    another adapter of the host: the role bound OpenSM there. The emitter now gives no name and the role
    stops, naming the fabric, before it installs anything."""
    fabrics = [
        {
            "fabric": "compute",
            "rdma_device": None,
            "sharp": False,
            "flavour": "opensm-upstream",
            "guid_files": True,
        }
    ]
    tasks = [{"ansible.builtin.include_role": {"name": "opensm"}}]
    done = _play(tmp_path, roles, tasks, {"opensm_fabrics": fabrics, "opensm_hardware_present": True})
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "no RDMA device name for the compute port of localhost" in out, out
    assert "Install OpenSM" not in out


def _acceptance_play(
    roles: Path,
    tmp: Path,
    hosts: dict[str, tuple[str, ...]],
    gpus: dict[str, int],
    mpirun: str,
    extra: dict[str, object] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The acceptance role over local stand-in hosts in pool groups, with ``mpirun`` as the launcher."""
    children: dict[str, object] = {}
    for group, names in hosts.items():
        env = tmp / f"{group}.env"
        env.write_text(f"NCCL_IB_HCA={group}\n")
        children[group] = {
            "hosts": {h: {} for h in names},
            "vars": {"acceptance_gpus_per_node": gpus[group], "acceptance_nccl_env_path": str(env)},
        }
    children["role_gpu"] = {"children": {g: {} for g in hosts}}
    inv = tmp / "hosts.json"
    inv.write_text(json.dumps({"all": {"children": children}}))
    play = [
        {
            "hosts": "role_gpu",
            "gather_facts": False,
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "acceptance_hardware_present": False,
                "acceptance_run_nccl_tests": True,
                "acceptance_collectives": ["all_reduce"],
                "acceptance_link_gbytes": 50.0,
                "acceptance_mpirun": mpirun,
                "acceptance_host_results_dir": str(tmp / "host-results"),
                "acceptance_results_dir": str(tmp / "results"),
                **(extra or {}),
            },
            "roles": ["acceptance"],
        }
    ]
    return _run_play(tmp, roles, play, "-i", str(inv))


def test_a_failed_launcher_is_not_replaced_by_another_host_of_its_pool(roles: Path, tmp_path: Path) -> None:
    """The pool's hosts were recomputed on every task: once its first host's run failed, the second became
    the launcher and ran the rest on a shrunken pool. They are fixed when the role starts."""
    log = tmp_path / "launches.log"
    launcher = tmp_path / "mpirun.sh"
    launcher.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit 1\n')
    launcher.chmod(0o755)
    done = _acceptance_play(
        roles, tmp_path, {"pool_gb": ("gb001", "gb002", "gb003")}, {"pool_gb": 4}, str(launcher)
    )
    assert done.returncode != 0
    launches = log.read_text().splitlines()
    assert len(launches) == 1 and "-H gb001:4,gb002:4,gb003:4" in launches[0], launches


def test_acceptance_runs_each_pool_with_its_own_shape(roles: Path, tmp_path: Path) -> None:
    """Two pools on one fabric (4-GPU GB200 trays, 8-GPU DGX H100): the role ran one mpirun over every host
    with the first host's GPUs a node and NCCL environment (`-np 16 -H gb001:4,...,dgx002:4`, the trays'
    NCCL_IB_HCA on the DGXs). Each pool now runs on its own, from its first host, with its own shape and
    environment, one pool after the other."""
    results = tmp_path / "results"
    hosts = {"pool_gb": ("gb001", "gb002"), "pool_dgx": ("dgx001", "dgx002")}
    done = _acceptance_play(roles, tmp_path, hosts, {"pool_gb": 4, "pool_dgx": 8}, "echo MPIRUN $NCCL_IB_HCA")
    # the bandwidth checks fail (the stand-in launcher prints no nccl-tests table); the runs are kept
    gb = (results / "all_reduce_perf-2nodes-gb001-gb002.txt").read_text()
    dgx = (results / "all_reduce_perf-2nodes-dgx001-dgx002.txt").read_text()
    assert "MPIRUN pool_gb " in gb and "-np 8 -H gb001:4,gb002:4 " in gb, gb + done.stdout[-3000:]
    assert "MPIRUN pool_dgx " in dgx and "-np 16 -H dgx001:8,dgx002:8 " in dgx, dgx
    assert sorted(p.name for p in results.iterdir()) == [
        "all_reduce_perf-2nodes-dgx001-dgx002.txt",
        "all_reduce_perf-2nodes-gb001-gb002.txt",
    ]


def _read_checks(roles: Path, tmp: Path, *options: str) -> subprocess.CompletedProcess[str]:
    _stub(tmp / "bin", "ibstat", IBSTAT)
    _stub(tmp / "bin", "nvidia-smi", TOPO)
    variables = {
        "acceptance_expected_hcas": [
            {"dev": "mlx5_0", "port": 1, "rate_gbps": 400, "link_layer": "InfiniBand"}
        ],
        "acceptance_gpus_per_node": 3,
        "acceptance_expected_nvlink": "NV18",
    }
    tasks = [
        {"ansible.builtin.include_role": {"name": "acceptance", "tasks_from": "hcas.yml"}},
        {"ansible.builtin.include_role": {"name": "acceptance", "tasks_from": "gpus.yml"}},
    ]
    return _play(tmp, roles, tasks, variables, *options)


def test_the_acceptance_reads_run_in_check_mode(roles: Path, tmp_path: Path) -> None:
    done = _read_checks(roles, tmp_path, "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed=0" in done.stdout


def test_the_acceptance_checks_still_fail_on_a_bad_port(roles: Path, tmp_path: Path) -> None:
    """The counterpart: the same check in check mode fails when the port is down (the read did happen)."""
    _stub(tmp_path / "bin", "ibstat", IBSTAT.replace("State: Active", "State: Down"))
    done = _play(
        tmp_path,
        roles,
        [{"ansible.builtin.include_role": {"name": "acceptance", "tasks_from": "hcas.yml"}}],
        {
            "acceptance_expected_hcas": [
                {"dev": "mlx5_0", "port": 1, "rate_gbps": 400, "link_layer": "InfiniBand"}
            ]
        },
        "--check",
    )
    assert done.returncode != 0 and "mlx5_0/1: found" in done.stdout


@pytest.mark.parametrize(("shipped", "ok"), [(True, True), (False, False)])
def test_a_kept_image_driver_is_held_to_the_branch(
    roles: Path, tmp_path: Path, shipped: bool, ok: bool
) -> None:
    """The image ships 550.54.15, the blueprint pins 550.127.08 on branch 550: kept when the image's driver is
    used (shipped), refused when the role installs the pin and finds another one loaded."""
    _stub(tmp_path / "bin", "nvidia-smi", "550.54.15\n")
    variables = {
        "nvidia_driver_shipped": shipped,
        "nvidia_driver_branch": "550",
        "nvidia_driver_version": "550.127.08",
    }
    tasks = [{"ansible.builtin.include_role": {"name": "nvidia_driver", "tasks_from": "verify.yml"}}]
    done = _play(tmp_path, roles, tasks, variables)
    assert (done.returncode == 0) == ok, done.stdout + done.stderr
    if not ok:
        assert "is not the pinned 550.127.08" in done.stdout


def test_a_pool_with_nothing_to_run_is_not_failed_for_a_zero_threshold(roles: Path, tmp_path: Path) -> None:
    """A GPU pool without compute ports (acceptance_link_gbytes 0, no prediction) failed "no bus bandwidth
    threshold" though generate turned its nccl-tests runs off; the threshold is checked only for a run."""
    variables = {
        "acceptance_hardware_present": False,
        "acceptance_link_gbytes": 0.0,
        "acceptance_collectives": ["all_reduce"],
        "acceptance_pool_hosts": ["localhost"],
    }
    role = [{"ansible.builtin.include_role": {"name": "acceptance"}}]
    done = _play(tmp_path, roles, role, {**variables, "acceptance_run_nccl_tests": False})
    assert done.returncode == 0 and "failed=0" in done.stdout, done.stdout[-3000:]
    done = _play(tmp_path, roles, role, {**variables, "acceptance_run_nccl_tests": True})
    assert done.returncode != 0 and "no bus bandwidth threshold" in done.stdout, done.stdout[-3000:]


def test_a_setting_each_host_reads_itself_is_not_exported_from_the_launcher(
    roles: Path, tmp_path: Path
) -> None:
    """The nccl role writes NCCL_IB_PKEY from each host's own P_Key tables (they can differ after a partition
    is added to a running fabric); mpirun -x exported the launcher's value to every rank, over each host's
    /etc/nccl.conf. It is left to each rank; the other settings are still forwarded."""
    log = tmp_path / "launches.log"
    launcher = tmp_path / "mpirun.sh"
    launcher.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    launcher.chmod(0o755)
    settings = [
        {"name": "NCCL_IB_SL", "value": "1", "reason": "r", "source": "s"},
        {"name": "NCCL_IB_PKEY", "value": "1", "reason": "r", "source": "s"},
    ]
    _acceptance_play(
        roles, tmp_path, {"pool_gb": ("gb001", "gb002")}, {"pool_gb": 4}, str(launcher),
        {"nccl_settings": settings},
    )  # fmt: skip
    (launch,) = log.read_text().splitlines()
    assert "-x NCCL_IB_SL " in launch and "NCCL_IB_PKEY" not in launch, launch
