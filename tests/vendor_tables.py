"""Vendor tables kept as test data (tests/data/vendor_tables/, each file names its public source)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import NamedTuple

TABLES = Path(__file__).parent / "data" / "vendor_tables"


class DgxPort(NamedTuple):
    port: str  # OSFP1P1
    gpu: int
    netdev: str
    rdma: str


def dgx_h100_compute_ports() -> list[DgxPort]:
    """Table 6 rows sorted by the GPU column (rail k = the port paired with GPU k)."""
    lines = [
        ln
        for ln in (TABLES / "dgx_h100_network_modules.csv").read_text().splitlines()
        if not ln.startswith("#")
    ]
    rows = [DgxPort(r["port"], int(r["gpu"]), r["netdev"], r["rdma"]) for r in csv.DictReader(lines)]
    return sorted(rows, key=lambda r: r.gpu)


class DgxMappedPort(NamedTuple):
    port: str  # Slot1 P1
    pci: str
    default: str  # interface name in the port's default link layer
    optional: str  # interface name in the other link layer
    rdma: str

    @property
    def names(self) -> dict[str, str]:
        """Interface name per link layer: names starting ``ib`` are IPoIB, ``en`` Ethernet."""
        out = {}
        for name in (self.default, self.optional):
            if name.startswith("ib"):
                out["infiniband"] = name
            elif name.startswith("en"):
                out["ethernet"] = name
        return out


def dgx_h100_port_mapping() -> dict[str, DgxMappedPort]:
    """Table 5 ("Network Port Mapping") rows by their Port column."""
    lines = [
        ln
        for ln in (TABLES / "dgx_h100_network_port_mapping.csv").read_text().splitlines()
        if not ln.startswith("#")
    ]
    rows = [DgxMappedPort(**r) for r in csv.DictReader(lines)]
    return {r.port: r for r in rows}


def dgx_h100_storage_ports() -> list[DgxMappedPort]:
    """The two dual-port ConnectX-7 cards' ports (slot 1, slot 2), in slot then port order."""
    table = dgx_h100_port_mapping()
    return [table[f"Slot{slot} P{port}"] for slot in (1, 2) for port in (1, 2)]


def env_file(name: str) -> dict[str, str]:
    """``NAME=value`` lines of a vendor file (comments skipped)."""
    out: dict[str, str] = {}
    for line in (TABLES / name).read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key] = value
    return out


def dgx_a100_compute_hcas() -> list[str]:
    """The DGX A100 compute HCA of GPU 0..7, read from NVIDIA's burn-in config (GPU_AFFINITY / UCX_AFFINITY)."""
    env = {k: v.strip('"') for k, v in env_file("dgx_a100_syscfg.sh").items()}
    gpus = [int(g) for g in env["GPU_AFFINITY"].split(":")]
    hcas = env["UCX_AFFINITY"].split(":")
    by_gpu = dict(zip(gpus, hcas, strict=True))
    return [by_gpu[g] for g in sorted(by_gpu)]


class PluginInstall(NamedTuple):
    apt_keys: list[str]
    steps: list[tuple[str, list[str]]]  # (repository line, packages installed right after it)
    hold: list[str]
    login_profile: str


def gcp_a3_ultra_gib_install() -> PluginInstall:
    """The Cluster Toolkit's gIB install tasks, read in order: keys, repository -> packages, holds."""
    import yaml

    doc = yaml.safe_load((TABLES / "gcp_a3_ultra_install_nccl_gib.yml").read_text())
    keys: list[str] = []
    steps: list[tuple[str, list[str]]] = []
    hold: list[str] = []
    for task in doc["tasks"]:
        if "ansible.builtin.apt_key" in task:
            keys.append(task["ansible.builtin.apt_key"]["url"])
        elif "apt_repository" in task:
            steps.append((task["apt_repository"]["repo"], []))
        elif "ansible.builtin.apt" in task:
            steps[-1][1].append(task["ansible.builtin.apt"]["name"])
        elif "ansible.builtin.dpkg_selections" in task:
            hold.append(task["ansible.builtin.dpkg_selections"]["name"])
    return PluginInstall(keys, steps, hold, doc["login_profile"])


class ContainerPluginInstall(NamedTuple):
    """How Google's A3 Mega Slurm prolog installs the TCPXO NCCL plug-in, read from its lines."""

    login: list[str]  # the registry login command (argv)
    login_path: str  # the directory the prolog appends to PATH for it
    removes: str  # the directory removed before the install
    installer: list[str]  # the docker command that runs the installer image (argv, image substituted)
    profile: str  # the profile the installer wrote, which the lines are appended to
    profile_lines: list[str]  # the lines appended to it afterwards
    profile_lines_on: list[str]  # on these distributions ("Debian 12", "Ubuntu")


def gcp_a3_mega_tcpxo_install() -> ContainerPluginInstall:
    """Parse the slurm-gcp prolog excerpt as the shell reads it (continuations joined, heredoc unescaped)."""
    import re
    import shlex

    lines = (TABLES / "gcp_a3_mega_rxdm_prolog.sh").read_text().splitlines()
    image = next(ln.split("=", 1)[1] for ln in lines if ln.startswith("NCCL_PLUGIN_IMAGE="))
    body = [ln.strip() for ln in lines]
    login_line = next(ln for ln in body if ln.startswith("gcloud auth configure-docker"))
    login = [w for w in shlex.split(login_line) if not w.startswith(("2>", "&>"))]
    login_path = next(ln for ln in body if ln.startswith("export PATH=")).split(":", 1)[1]
    removes = next(ln for ln in body if ln.startswith("rm -rf ")).split()[-1]
    start = next(i for i, ln in enumerate(body) if ln.startswith("docker run --rm --name nccl-installer"))
    command = ""
    for ln in body[start:]:
        command += ln.removesuffix("\\")
        if not ln.endswith("\\"):
            break
    installer = shlex.split(command.replace("${NCCL_PLUGIN_IMAGE}", image))
    doc = next(i for i, ln in enumerate(body) if "<<-EOF" in ln)
    end = next(i for i in range(doc + 1, len(body)) if body[i] == "EOF")
    # an unquoted here-document: \$ stands for a literal $
    profile_lines = [ln.replace("\\$", "$") for ln in body[doc + 1 : end]]
    profile = body[doc].split(">>", 1)[1].split("<<", 1)[0].strip()
    guard = body[doc - 1]
    distros = re.findall(
        r'grep -q "ID=(\w+)" /etc/os-release(?: && lsb_release -rs \| grep -q "(\d+)")?', guard
    )
    on = [f"{name.capitalize()} {release}".strip() for name, release in distros]
    return ContainerPluginInstall(login, login_path, removes, installer, profile, profile_lines, on)


class StagedJobScript(NamedTuple):
    """How Google's A3 Mega Slurm blueprint stages slurm-gcp's RxDM prolog, read from stage_scripts.sh."""

    url: str  # what curl fetches (slurm-gcp at master)
    path: str  # where it is written (SLURM_ROOT expanded)
    mode: str  # chmod of the script
    dir_mode: str  # mkdir -m of its directory
    contexts: list[str]  # the SLURM_SCRIPT_CONTEXT values it is linked for (prolog_slurmd, epilog_slurmd)


def gcp_a3_mega_stage_scripts() -> StagedJobScript:
    """Parse stage_scripts.sh as the shell reads it (SLURM_ROOT expanded, continuations joined)."""
    import shlex

    body = [
        ln.strip() for ln in (TABLES / "gcp_a3_mega_stage_scripts.sh").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]  # fmt: skip
    root = next(ln.split("=", 1)[1] for ln in body if ln.startswith("SLURM_ROOT="))
    joined, cur = [], ""
    for ln in body:
        cur += ln.removesuffix("\\")
        if not ln.endswith("\\"):
            joined.append(shlex.split(cur.replace("${SLURM_ROOT}", root)))
            cur = ""
    curl = next(w for w in joined if w[0] == "curl")
    path, url = curl[curl.index("-o") + 1], curl[-1]
    mode = next(w[1] for w in joined if w[0] == "chmod" and w[2] == path)
    directory = path.rsplit("/", 1)[0]
    dir_mode = next(w[w.index("-m") + 1] for w in joined if w[0] == "mkdir" and w[-1] == directory)
    links = [w[-1] for w in joined if w[0] == "ln" and w[2] == path]
    contexts = [link.rsplit(".", 1)[1] for link in links]
    return StagedJobScript(url, path, mode, dir_mode, contexts)


def gcp_long_prolog_timers() -> dict[str, str]:
    """The TIMERS settings of the Cluster Toolkit's long-prolog slurm.conf template, in file order."""
    text = (TABLES / "gcp_long_prolog_slurm.conf").read_text()
    return dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#"))
