"""Extension points (issue 29): a cloud target, a switch OS and an output are each one new module.

Each test writes a dummy module into a temporary folder added to the registry package's search path (as a
new file in the package would be), and shows every consumer that lists that kind of thing picks it up with
no other edit. The registries' caches are cleared around each test, so no dummy outlives it. Where a lower
layer keeps its own copy of the names (the blueprint schema's switch-OS `Literal`s, the `--help` text of
`generate`), a test here checks the copy equals the registry, and the dummy tests set the copy as the
schema would. Deployment targets have no copy: their names are one list (blueprints/models/targets.yaml)
that the schema, the resolver and the registry read, and a dummy target adds its line to it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from conftest import EXAMPLES

import blueprints.models.targets as targets_data
import generator.deploy.targets as targets_pkg
import generator.emit as emit_pkg
import generator.emit.switches.systems as systems_pkg
from generator import resolve
from generator.build import generate
from generator.deploy.access import access_data
from generator.deploy.address_plan import address_plan
from generator.deploy.stack_outputs import read_stack_outputs
from generator.deploy.targets import cloud_targets, deploy_targets, provider_targets
from generator.emit import OUTPUTS, emitters
from generator.emit import _registry as emit_registry
from generator.emit import pulumi as pulumi_emit
from generator.emit import switches as switches_emit
from generator.emit.switches.systems import switch_oses
from generator.pipeline import check
from generator.plan.build import build_plan
from generator.rules.base import RuleContext
from generator.rules.dep.dep005_cloud_location import CloudLocation
from generator.rules.dep.dep006_capacity_mode import CapacityMode
from generator.rules.dep.dep007_provider_specific_setting import ProviderSpecificSetting

CACHES = (emit_registry._cached, targets_pkg._cached, systems_pkg._cached)


@pytest.fixture
def plug_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """plug_in(package, module_name, source): the module as a new file of `package`, for this test only."""
    added: list[str] = []

    def add(package: ModuleType, name: str, source: str) -> None:
        folder = tmp_path / package.__name__
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
        added.append(f"{package.__name__}.{name}")
        for cache in CACHES:
            cache.cache_clear()

    yield add
    for name in added:
        sys.modules.pop(name, None)
    for cache in CACHES:
        cache.cache_clear()


# ------------------------------------------------------------------------------------------- emitters

DUMMY_EMITTER = """
    from generator.emit._registry import BuildContext, Emitter

    class DummyEmitter(Emitter):
        name = "dummy"
        order = 55  # after slurm (50), before diagrams (60)

        def applies(self, cluster):
            return True

        def emit(self, ctx: BuildContext) -> None:
            (ctx.out / "hello.txt").write_text(f"{ctx.cluster.name} {len(ctx.findings)}\\n", encoding="utf-8")
"""


def test_written_out_output_names_equal_the_registry() -> None:
    assert tuple(emitters()) == OUTPUTS
    orders = [e.order for e in emitters().values()]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)


def test_a_new_emitter_module_is_an_output_of_generate(plug_in, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    plug_in(emit_pkg, "dummy_output", DUMMY_EMITTER)
    names = list(emitters())
    assert names.index("dummy") == names.index("slurm") + 1 and "dummy" not in OUTPUTS

    checked = check(EXAMPLES / "single-dgx-h100.yaml")
    result = generate(checked, tmp_path / "build")
    assert result.outputs.index("dummy") == result.outputs.index("slurm") + 1
    hello = (tmp_path / "build" / "dummy" / "hello.txt").read_text(encoding="utf-8")
    assert hello == f"{checked.cluster.name} {len(checked.findings)}\n"  # it received the build context
    manifest = json.loads((tmp_path / "build" / "manifest.json").read_text(encoding="utf-8"))
    assert "dummy" in manifest["outputs"] and "dummy/hello.txt" in manifest["files"]

    only = generate(checked, tmp_path / "only", only=["dummy"])  # `--only dummy` is known too
    assert only.outputs == ["dummy"]


def test_report_receives_the_findings_through_the_context(tmp_path: Path) -> None:
    checked = check(EXAMPLES / "single-dgx-h100.yaml")
    generate(checked, tmp_path / "build", only=["report"])
    written = json.loads((tmp_path / "build" / "report" / "findings.json").read_text(encoding="utf-8"))
    assert written == [f.as_dict() for f in checked.findings]


# -------------------------------------------------------------------------------------- cloud targets

DUMMY_TARGET = """
    from generator.deploy.address_plan import AddressPlan, CloudNetwork, Subnet
    from generator.deploy.stack_outputs import AwsOutputs
    from generator.deploy.targets import CloudTarget

    def _subnets(net: CloudNetwork, plan: AddressPlan) -> None:
        plan.subnets.append(Subnet(f"everything-{net.reserved}", str(net.first), net.nodes))

    TARGET = CloudTarget(
        name="dummycloud",
        title="Dummy Cloud GPUs",
        components="network, compute",
        subnet_reserved=7,
        stack_outputs=AwsOutputs,
        default_access="iap",
        subnet_layout=_subnets,
        zone_required=True,
        zone_check=lambda region, zone: None if zone == region + "-z" else f"`{zone}` is not a dummy zone",
        reservation_id="dummy reservation handle",
        own_settings={"boot_disk_gb": "only the dummy cloud sizes boot disks"},
    )
"""


def _retargeted(cluster: resolve.ResolvedCluster, target: str, **cloud: object) -> resolve.ResolvedCluster:
    """The cluster as if its blueprint said `deployment.target: <target>` (the schema names it)."""
    dep = cluster.blueprint.deployment
    assert dep.cloud is not None
    settings = dep.cloud.model_copy(update=cloud)
    for key in cloud:  # as if written in the blueprint
        settings.model_fields_set.add(key)
    new_dep = dep.model_copy(update={"target": target, "cloud": settings})
    return dataclasses.replace(
        cluster, blueprint=cluster.blueprint.model_copy(update={"deployment": new_dep})
    )


def _messages(rule: object, cluster: resolve.ResolvedCluster) -> list[str]:
    return [f.message for f in rule.check(RuleContext(cluster))]  # type: ignore[attr-defined]


def test_a_new_target_module_is_read_by_every_table(
    plug_in,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setitem(targets_data.TARGETS, "dummycloud", targets_data.Target(provider=True))  # its line
    plug_in(targets_pkg, "dummycloud", DUMMY_TARGET)
    assert "dummycloud" in deploy_targets() and "dummycloud" in provider_targets()
    aws = check(EXAMPLES / "aws-p5-efa.yaml").cluster
    cluster = _retargeted(aws, "dummycloud", zone="nowhere", capacity="reservation")

    assert pulumi_emit.applies(cluster)
    assert [s.name for s in address_plan(cluster).subnets] == ["everything-7"]  # its layout, its reservation
    assert access_data(cluster)["via"] == "iap"
    assert _messages(CloudLocation(), cluster) == ["`nowhere` is not a dummy zone"]
    assert "capacity reservation on dummycloud needs reservation_id (the dummy reservation handle)" in (
        _messages(CapacityMode(), cluster)
    )
    on_aws = _retargeted(aws, "aws", boot_disk_gb=1024)
    assert any(
        "only the dummy cloud sizes boot disks" in m for m in _messages(ProviderSpecificSetting(), on_aws)
    )

    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"nodes": {"gpu001": {"address": "10.0.0.5"}}}), encoding="utf-8")
    assert read_stack_outputs(outputs, "dummycloud").nodes["gpu001"].address == "10.0.0.5"


def test_lower_layers_name_the_registered_targets() -> None:
    from blueprints.models.deployment import Deployment

    schema = typing.get_args(Deployment.model_fields["target"].annotation)
    assert sorted(schema) == sorted([*deploy_targets(), "none"])
    assert sorted(targets_data.providers()) == sorted(provider_targets())
    assert all(t.title and t.components and t.subnet_reserved >= 2 for t in cloud_targets().values())


def test_the_target_list_reads_as_a_yaml_loader_reads_it(tmp_path: Path) -> None:
    import yaml

    raw = yaml.safe_load(targets_data.DATA.read_text(encoding="utf-8"))
    assert {n: (t["provider"], tuple(t.get("own_access", ()))) for n, t in raw.items()} == {
        n: (t.provider, t.own_access) for n, t in targets_data.TARGETS.items()
    }
    assert list(raw) == list(targets_data.TARGETS)  # the schema's order
    bad = tmp_path / "targets.yaml"
    bad.write_text("aws: {provider: yes}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"targets\.yaml:1"):
        targets_data._load(bad)


def test_a_target_module_missing_from_the_list_is_refused(plug_in) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuntimeError, match=r"not in blueprints/models/targets\.yaml"):
        plug_in(targets_pkg, "dummycloud", DUMMY_TARGET)
        deploy_targets()


def test_the_list_decides_what_is_a_cloud(monkeypatch: pytest.MonkeyPatch) -> None:
    aws = check(EXAMPLES / "aws-p5-efa.yaml").cluster
    assert aws.is_cloud and cloud_targets()["aws"].provider
    monkeypatch.setitem(targets_data.TARGETS, "aws", targets_data.Target(provider=False))
    assert not aws.is_cloud and not cloud_targets()["aws"].provider


def test_every_target_has_its_program() -> None:
    from generator.resources import templates_dir

    for name in deploy_targets():
        assert (Path(pulumi_emit.__file__).parent / "pulumi_targets" / f"{name}.py").is_file(), name
        assert (templates_dir() / "pulumi" / name / "__main__.py").is_file(), name


# ---------------------------------------------------------------------------------------- switch OSes

DUMMY_OS = """
    from generator.emit.switches.systems import SwitchOs

    SWITCH_OS = SwitchOs(
        kind="dummyos",
        names=("dummyos", "dummy-os"),
        config_file="dummy.conf",
        connection={"ansible_connection": "ansible.builtin.ssh"},
        render=lambda sw, qos, mtu, switch_os: f"hostname {sw.name}\\nasn {sw.asn}\\nmtu {mtu}\\n",
    )
"""


def test_a_new_switch_os_module_is_written_by_the_switches_output(plug_in) -> None:  # type: ignore[no-untyped-def]
    plug_in(systems_pkg, "dummyos", DUMMY_OS)
    assert "dummyos" in switch_oses()
    cluster = check(EXAMPLES / "roce-rail-2tier.yaml").cluster
    fabric = cluster.fabrics["compute"]
    spec = fabric.spec.model_copy(update={"switch_os": "dummy-os"})  # as the schema would accept it
    fabrics = {**cluster.fabrics, "compute": dataclasses.replace(fabric, spec=spec)}
    cluster = dataclasses.replace(cluster, fabrics=fabrics)
    plan = build_plan(cluster)

    files = switches_emit.render(cluster, plan)
    configs = sorted(rel for rel in files if rel.startswith("compute/"))
    assert configs and all(rel.endswith("/dummy.conf") for rel in configs)
    first = configs[0]
    assert files[first].startswith(f"hostname {first.split('/')[1]}\n")
    assert "cb_switch_os: dummyos" in files["inventory.yml"]
    assert "cb_switch_config: dummy.conf" in files["inventory.yml"]


def test_lower_layers_name_the_registered_switch_oses() -> None:
    import re

    from blueprints.models.fabric import SWITCH_OS_PATTERN, SwitchOs

    assert sorted(typing.get_args(SwitchOs)) == sorted(switch_oses())
    for record in switch_oses().values():
        assert record.names and all(re.fullmatch(SWITCH_OS_PATTERN, n) for n in record.names)
