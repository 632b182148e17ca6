"""The generated Pulumi project: files, determinism, pinned SDKs, config without secrets."""

from __future__ import annotations

import ast
import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from real_tools import needs, needs_module

needs_module("pulumi", "the Pulumi SDK is in the test extra")

from pulumi_cases import generate, generate_text  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402

from generator.emit import pulumi as pulumi_emit  # noqa: E402
from generator.load import load_file  # noqa: E402
from generator.plan.build import build_plan  # noqa: E402
from generator.resolve import resolve  # noqa: E402

pytestmark = pytest.mark.pulumi

CLOUD_EXAMPLES = ["aws-p5-efa", "azure-ndh100v5", "gcp-a3-ultra", "oci-bm-h100", "maas-onprem-h100"]
SECRET_WORDS = re.compile(r"(api_?key|password|private_?key|secret|token|client_secret)", re.IGNORECASE)
EXPECTED_FILES = {
    ".gitignore",
    "Pulumi.yaml",
    "Pulumi.prod.yaml",
    "README.md",
    "__main__.py",
    "cluster.json",
    "requirements.txt",
}
yaml = YAML(typ="safe", pure=True)


@pytest.mark.parametrize("name", CLOUD_EXAMPLES)
def test_project_files_and_determinism(name: str, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    cluster = generate(EXAMPLES / f"{name}.yaml", a)
    generate(EXAMPLES / f"{name}.yaml", b)
    files = {p.name for p in a.iterdir()}
    assert files == EXPECTED_FILES
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f"{f} differs between two builds"
    project = yaml.load((a / "Pulumi.yaml").read_text())
    assert project["name"] == cluster.name
    assert project["runtime"]["name"] == "python" and project["runtime"]["options"]["virtualenv"] == "venv"
    ast.parse((a / "__main__.py").read_text())  # valid Python
    data = json.loads((a / "cluster.json").read_text())
    assert data["blueprint"] == cluster.name and data["target"] == cluster.target
    assert sum(len(p["nodes"]) for p in data["pools"]) == cluster.node_count


@pytest.mark.parametrize("name", CLOUD_EXAMPLES)
def test_stack_config_has_no_secrets(name: str, tmp_path: Path) -> None:
    cluster = generate(EXAMPLES / f"{name}.yaml", tmp_path)
    text = (tmp_path / "Pulumi.prod.yaml").read_text()
    config = yaml.load(text)["config"]
    assert config, "the stack config is empty"
    assert "secure:" not in text
    for key, value in config.items():
        assert ":" in key, f"{key} is not namespaced"
        assert not SECRET_WORDS.search(key), f"{key} looks like a secret"
        assert not (isinstance(value, str) and re.search(r"-----BEGIN|AKIA[0-9A-Z]{16}", value))
    # The README tells the user how to set what the file does not hold.
    readme = (tmp_path / "README.md").read_text()
    assert "pulumi up" in readme and "## Credentials" in readme
    if cluster.target == "maas":
        assert "pulumi config set --secret maas:apiKey" in readme
        assert "community provider" in readme
    else:
        assert "pulumi config set sshPublicKey" in readme


def test_requirements_pin_the_installed_sdks(tmp_path: Path) -> None:
    pins = pulumi_emit.pinned_versions()
    for package, pinned in pins.items():
        assert version(package) == pinned, f"templates/pulumi/versions.yaml pins {package}=={pinned}"
    for name, package in (
        ("aws-p5-efa", "pulumi-aws"),
        ("maas-onprem-h100", "pulumi-maas"),
        ("azure-ndh100v5", "pulumi-azure-native"),
        ("gcp-a3-ultra", "pulumi-gcp"),
        ("oci-bm-h100", "pulumi-oci"),
    ):
        out = tmp_path / name
        out.mkdir()
        generate(EXAMPLES / f"{name}.yaml", out)
        lines = (out / "requirements.txt").read_text().splitlines()
        assert lines == [f"pulumi=={pins['pulumi']}", f"{package}=={pins[package]}"]


def test_applies_only_to_deployment_targets() -> None:
    deployed = resolve(load_file(EXAMPLES / "aws-p5-efa.yaml"))
    assert pulumi_emit.applies(deployed)
    local = resolve(load_file(EXAMPLES / "single-dgx-h100.yaml"))
    assert local.target == "none" and not pulumi_emit.applies(local)


def test_cloud_tags_come_from_the_plan_for_maas(tmp_path: Path) -> None:
    cluster = resolve(load_file(EXAMPLES / "maas-onprem-h100.yaml"))
    plan = build_plan(cluster)
    pulumi_emit.emit(cluster, plan, tmp_path)
    data = json.loads((tmp_path / "cluster.json").read_text())
    dgx = {n["hostname"]: n for n in data["pools"][0]["nodes"]}
    for device in plan.nodes():
        if device.pool == "dgx":
            assert dgx[device.name]["rack"] == device.rack and dgx[device.name]["su"] == device.su
            assert f"maas-onprem-h100-rack-{device.rack}" in dgx[device.name]["tags"]


def test_maas_static_addresses_are_unique_and_reserved(tmp_path: Path) -> None:
    generate(EXAMPLES / "maas-onprem-h100.yaml", tmp_path)
    data = json.loads((tmp_path / "cluster.json").read_text())
    addresses = [i["address"] for p in data["pools"] for n in p["nodes"] for i in n["interfaces"]]
    assert len(addresses) == len(set(addresses))
    import ipaddress

    for fabric in data["fabrics"]:
        for sub in fabric["subnets"]:
            start, end = (ipaddress.ip_address(x) for x in sub["reserved"])
            inside = [
                ipaddress.ip_interface(a).ip
                for a in addresses
                if ipaddress.ip_interface(a).network == ipaddress.ip_network(sub["cidr"])
            ]
            # every configured address is inside the reservation; ports the port map does not name are
            # planned and reserved too, but carry no interface (PLT001), so a range may hold none of them
            assert all(start <= ip <= end for ip in inside)
            assert not inside or min(inside) == start


def test_generate_command_writes_the_pulumi_folder(tmp_path: Path) -> None:
    out = tmp_path / "build"
    code, _, err = run_cli(
        "generate", str(EXAMPLES / "aws-p5-efa.yaml"), "-o", str(out), "--only", "pulumi", "--quiet"
    )
    assert code == 0, err
    assert (out / "pulumi" / "Pulumi.prod.yaml").is_file() and (out / "pulumi" / "__main__.py").is_file()


def test_generated_programs_are_ruff_clean(tmp_path: Path) -> None:
    import subprocess
    import sys

    from generator.resources import templates_dir

    mains = sorted(str(p) for p in (templates_dir() / "pulumi").glob("*/__main__.py"))
    assert len(mains) == 5
    ruff = Path(sys.executable).parent / "ruff"
    needs([] if ruff.exists() else [str(ruff)], "ruff is in the test extra")
    result = subprocess.run(
        # the installed copy is outside `templates/**`, whose E501 exemption pyproject.toml sets: say it here
        [str(ruff), "check", "--no-cache", "--extend-ignore", "E501", *mains],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_nfs_and_lustre_sizes_in_cluster_json(tmp_path: Path) -> None:
    _cluster, project = generate_text(
        """
apiVersion: cluster-blueprint/v1
name: sizes
pools:
  - {name: gpu, count: 2, server: aws/p4d.24xlarge}
storage:
  - {name: fast, kind: managed, mount: /fast, capacity_tib: 3, throughput_gbytes: 2}
deployment:
  target: aws
  cloud: {region: us-east-1, zone: us-east-1a}
""",
        tmp_path,
    )
    spec = json.loads((project / "cluster.json").read_text())["storage"][0]
    # p4d cannot use EFA-enabled FSx: plain PERSISTENT_2 steps (2400 GiB), tier chosen for 2 GB/s.
    assert spec["efa"] is False and spec["size"] == 4800 and spec["tier"] == 500
    assert spec["throughput_gbytes"] >= 2
