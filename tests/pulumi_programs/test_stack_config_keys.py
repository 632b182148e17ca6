"""DEP013's list of the keys each program reads (read from the program's text) against the keys the program
reads when it runs under Pulumi's mocks; and what a colliding key does to the stack."""

from __future__ import annotations

from pathlib import Path

import pulumi.config
import pytest
from conftest import EXAMPLES
from pulumi_cases import SSH_KEY, generate, run_target

from generator.deploy.stack_config import ConfigKey, program_config_keys, qualified
from generator.pipeline import check

DEPLOY = {
    "aws": "aws-p5-efa.yaml",
    "azure": "azure-ndh100v5.yaml",
    "gcp": "gcp-a3-ultra.yaml",
    "oci": "oci-bm-h100.yaml",
    "maas": "maas-onprem-h100.yaml",
}


@pytest.mark.parametrize("target", sorted(DEPLOY))
def test_every_key_the_program_reads_is_known(target: str, tmp_path: Path, monkeypatch) -> None:
    cluster = generate(EXAMPLES / DEPLOY[target], tmp_path)
    read: set[str] = set()
    original = pulumi.config.get_config

    def recording(full_key: str):
        read.add(full_key)
        return original(full_key)

    monkeypatch.setattr(pulumi.config, "get_config", recording)
    run_target(cluster, tmp_path)
    at_run = {qualified(k, cluster.name) for k in read}
    # the one key each program reads through a name the blueprint gives (the SSH key, the MAAS API URL)
    named = {qualified("sshPublicKey", cluster.name), ConfigKey("maas", "apiUrl")}
    assert at_run - named, "the recording saw no config reads"
    assert at_run - named <= program_config_keys(target), sorted(map(str, at_run - named))


def test_a_colliding_ssh_key_name_is_refused_and_why(tmp_path: Path) -> None:
    text = (EXAMPLES / "azure-ndh100v5.yaml").read_text()
    bad = tmp_path / "b.yaml"
    bad.write_text(
        text.replace("    capacity: on-demand\n", "    capacity: on-demand\n    ssh_key_config: zone\n")
    )
    findings = [f for f in check(bad).findings if f.rule == "DEP013"]
    assert len(findings) == 1 and findings[0].location is not None
    assert findings[0].location.line == text.splitlines().index("    capacity: on-demand") + 2

    # what the refusal prevents: the program hands the zone to the VMs as their SSH key
    cluster = generate(bad, tmp_path / "out")
    run = run_target(cluster, tmp_path / "out", {f"{cluster.name}:sshPublicKey": ""})
    keys = [r.inputs for r in run.resources if "VirtualMachineScaleSet" in r.type]
    assert keys and SSH_KEY not in str(keys) and "'keyData': '1'" in str(keys)


@pytest.mark.parametrize(
    ("setting", "refused"),
    [
        ('api_url_config: "maas:apiKey"', True),
        ("api_url_config: managementInterface", True),
        ('api_url_config: "maas-onprem-h100:distroSeries"', True),
        ('api_url_config: "maas:url"', False),
    ],
)
def test_maas_api_url_key(setting: str, refused: bool, tmp_path: Path) -> None:
    text = (EXAMPLES / "maas-onprem-h100.yaml").read_text()
    assert "  maas:\n" in text
    path = tmp_path / "m.yaml"
    path.write_text(text.replace("  maas:\n", f"  maas:\n    {setting}\n", 1))
    fired = [f for f in check(path).findings if f.rule == "DEP013"]
    assert bool(fired) == refused, [f.message for f in fired]


def test_a_cloud_section_beside_target_none_is_not_a_program_to_read(tmp_path: Path) -> None:
    """`cloud:` with the default target `none` (which the schema takes) made DEP013 read
    templates/pulumi/none/__main__.py: the rule failed, and validate refused a blueprint it had passed."""
    path = tmp_path / "none.yaml"
    path.write_text(
        "apiVersion: cluster-blueprint/v1\nname: lab\npools:\n  - {name: gpu, count: 1, server: dgx-h100}\n"
        "deployment: {cloud: {region: eastus, ssh_key_config: zone}}\n"
    )
    findings = check(path).findings
    assert not [f for f in findings if f.rule == "DEP013" or "failed" in f.message], [f.message for f in findings]
    assert program_config_keys("none") == frozenset()
