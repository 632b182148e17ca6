"""Azure images: `deployment.cloud.image` as Azure takes it.

The field took only a host-name-like string (no '/' or ':'), yet Azure's imageReference takes an ARM
resource id (/subscriptions/.../images/...) or a Marketplace image's publisher, offer, sku and version: no
blueprint value could work on Azure, every one validated, and the scale set failed at `pulumi up`. Now an
ARM id reaches imageReference.id, a URN publisher:offer:sku:version the four fields, both as data in
cluster.json, and anything else is DEP015 at deployment.cloud.image. The other targets keep their check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")

from pulumi_cases import generate_text, run_target

from generator.pipeline import check

pytestmark = pytest.mark.pulumi

ZONE = '    zone: "1"\n'
ARM_ID = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/hpc-images/providers/"
    "Microsoft.Compute/galleries/hpc.gallery/images/ubuntu-hpc/versions/1.2.3"
)
URN = "microsoft-dsvm:ubuntu-hpc:2204:22.04.2024102301"
SCALE_SET = "azure-native:compute:VirtualMachineScaleSet"


def _azure(image: str) -> str:
    text = (EXAMPLES / "azure-ndh100v5.yaml").read_text()
    assert ZONE in text and "image:" not in text
    return text.replace(ZONE, f'{ZONE}    image: "{image}"\n')


def _image_reference(run_inputs: dict[str, object]) -> object:
    return run_inputs["virtualMachineProfile"]["storageProfile"]["imageReference"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("image", "reference"),
    [
        (ARM_ID, {"id": ARM_ID}),
        (
            URN,
            {
                "publisher": "microsoft-dsvm",
                "offer": "ubuntu-hpc",
                "sku": "2204",
                "version": "22.04.2024102301",
            },
        ),
        (
            "Canonical:ubuntu-24_04-lts:server:latest",
            {"publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server", "version": "latest"},
        ),
    ],
)
def test_an_arm_id_or_a_urn_reaches_the_scale_set(
    image: str, reference: dict[str, str], tmp_path: Path
) -> None:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(_azure(image))
    assert not [f for f in check(blueprint).findings if f.rule == "DEP015"]
    cluster, project = generate_text(_azure(image), tmp_path)
    assert image not in (project / "__main__.py").read_text(), "read as data, not templated into code"
    data = json.loads((project / "cluster.json").read_text())["image"]
    assert data == reference
    scale_sets = run_target(cluster, project).of_type(SCALE_SET)
    assert scale_sets and all(_image_reference(vmss.inputs) == reference for vmss in scale_sets)


@pytest.mark.parametrize(
    "image",
    [
        "my-hpc-image",  # a bare name: neither form
        "Canonical:ubuntu:server:v1",  # a version that is neither latest nor Major.Minor.Build
        "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Compute/images/img",  # no subscription id
        "/etc/passwd",
    ],
)
def test_anything_else_is_refused_at_the_field(image: str, tmp_path: Path) -> None:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(_azure(image))
    (finding,) = [f for f in check(blueprint).findings if f.rule == "DEP015"]
    assert finding.path == ("deployment", "cloud", "image") and finding.location is not None
    assert blueprint.read_text().splitlines()[finding.location.line - 1].strip().startswith("image:")
    code, _, err = run_cli("generate", str(blueprint), "-o", str(tmp_path / "out"), "--only", "pulumi")
    assert code == 1 and "DEP015" in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("image", [URN, ARM_ID])
def test_other_targets_keep_their_check(image: str, tmp_path: Path) -> None:
    text = (EXAMPLES / "aws-p5-efa.yaml").read_text()
    zone = "    zone: us-east-1a\n"
    assert zone in text and "image:" not in text
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(text.replace(zone, f'{zone}    image: "{image}"\n'))
    (finding,) = [f for f in check(blueprint).findings if f.rule == "DEP015"]
    assert finding.path == ("deployment", "cloud", "image") and "aws" in finding.message
    blueprint.write_text(text.replace(zone, f"{zone}    image: ami-0123456789abcdef0\n"))
    assert not [f for f in check(blueprint).findings if f.rule == "DEP015"]


@pytest.mark.parametrize(
    ("override", "reference"),
    [
        (
            URN,
            {
                "publisher": "microsoft-dsvm",
                "offer": "ubuntu-hpc",
                "sku": "2204",
                "version": "22.04.2024102301",
            },
        ),
        (ARM_ID, {"id": ARM_ID}),
    ],
)
def test_an_image_set_with_pulumi_config_is_read_as_azure_takes_it(
    override: str, reference: dict[str, str], tmp_path: Path
) -> None:
    """`pulumi config set imageId publisher:offer:sku:version` (the README's route) went to imageReference.id,
    which takes an ARM resource id only."""
    cluster, project = generate_text((EXAMPLES / "azure-ndh100v5.yaml").read_text(), tmp_path)
    scale_sets = run_target(cluster, project, {f"{cluster.name}:imageId": override}).of_type(SCALE_SET)
    assert scale_sets and all(_image_reference(vmss.inputs) == reference for vmss in scale_sets)


@pytest.mark.parametrize("override", ["a:b:c:1.2", "microsoft-dsvm:ubuntu-hpc:2204", "/etc/passwd"])
def test_an_image_set_with_pulumi_config_is_checked_as_the_blueprint_s_is(
    override: str, tmp_path: Path
) -> None:
    """An `imageId` set with `pulumi config` in neither form DEP015 takes (a three-part version, a URN without
    its version, a path that is no ARM image id) reached Azure, which refused it mid-deployment; the program
    now stops before creating anything, with the same two forms the blueprint's image is checked against."""
    from blueprints.models.deployment import azure_image

    assert azure_image(override) is None  # refused in a blueprint too (DEP015)
    cluster, project = generate_text((EXAMPLES / "azure-ndh100v5.yaml").read_text(), tmp_path)
    with pytest.raises(Exception, match="neither an ARM image id"):
        run_target(cluster, project, {f"{cluster.name}:imageId": override})
