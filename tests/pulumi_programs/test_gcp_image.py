"""GCP images: `deployment.cloud.image` as Google documents it.

The field took only a host-name-like string, so the paths Google documents for a boot disk's image
(`projects/<project>/global/images/<image>`, `.../global/images/family/<family>`, the
`https://www.googleapis.com/compute/v1/projects/...` self link) were refused at the schema, although the
catalogue's own default is such a path; and a bare name Google refuses (upper case, '.') passed. Now the
forms pulumi-gcp's `bootDisk.initializeParams.image` documents reach the instance as data (cluster.json),
and anything else on GCP is DEP015 at deployment.cloud.image.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli

from generator.pipeline import check

ZONE = "    zone: europe-west1-b\n"
INSTANCE = "gcp:compute/instance:Instance"
FAMILY = "ubuntu-accelerator-2204-amd64-with-nvidia-570"


def _gcp(image: str) -> str:
    text = (EXAMPLES / "gcp-a3-ultra.yaml").read_text()
    assert ZONE in text and "image:" not in text
    return text.replace(ZONE, f"{ZONE}    image: '{image}'\n")


ACCEPTED = [
    f"projects/ubuntu-os-accelerator-images/global/images/family/{FAMILY}",  # the catalogue's default form
    "projects/my-project/global/images/ubuntu-2204-hpc-v20250101",
    "https://www.googleapis.com/compute/v1/projects/my-project/global/images/ubuntu-2204-hpc-v20250101",
    f"https://www.googleapis.com/compute/v1/projects/ubuntu-os-accelerator-images/global/images/family/{FAMILY}",
    "global/images/my-custom-image",
    "global/images/family/my-image-family",
    "family/debian-12",
    "debian-cloud/debian-12",
    "ubuntu-2204-hpc-v20250101",
    "a" * 63,
]


@pytest.mark.parametrize("image", ACCEPTED)
def test_the_documented_forms_pass(image: str, tmp_path: Path) -> None:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(_gcp(image))
    code, _, err = run_cli("validate", str(blueprint))
    assert code == 0, err
    assert not [f for f in check(blueprint).findings if f.rule == "DEP015"]


@pytest.mark.parametrize(
    "image",
    [
        "Ubuntu-2204",  # Google names are lower case (passed the old host-name-like check)
        "ubuntu.2204",  # no '.' in a Google name (passed the old check)
        "ubuntu-2204-",  # no trailing '-'
        "2204-ubuntu",  # starts with a letter
        "a" * 64,  # 63 characters at most
        "projects/proj/global/images/ubuntu",  # a project id has 6-30 characters
        "projects/my-project/global/images/family/family/ubuntu",
        "projects/my-project/zones/europe-west1-b/disks/boot",  # a disk, not an image
        "my-project/family/ubuntu",  # not a documented form
        "http://www.googleapis.com/compute/v1/projects/my-project/global/images/ubuntu",  # not https
        "https://www.googleapis.com/compute/beta/projects/my-project/global/images/ubuntu",
        "https://evil.example/compute/v1/projects/my-project/global/images/ubuntu",
        "ocid1.image.oc1..aaaa",  # another provider's id
        "projects/my-project/global/images/ubuntu;rm -rf x",
    ],
)
def test_anything_else_is_refused_at_the_field(image: str, tmp_path: Path) -> None:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(_gcp(image))
    line = 1 + _gcp(image).splitlines().index(f"    image: '{image}'")
    code, _, err = run_cli("generate", str(blueprint), "-o", str(tmp_path / "out"), "--only", "pulumi")
    assert code in (1, 2), err
    assert f"bp.yaml:{line}:" in err and ("DEP015" in err or "deployment.cloud.image" in err)
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_gcp_path_on_another_target_is_refused(tmp_path: Path) -> None:
    text = (EXAMPLES / "aws-p5-efa.yaml").read_text()
    zone = "    zone: us-east-1a\n"
    assert zone in text
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text(text.replace(zone, f"{zone}    image: projects/my-project/global/images/ubuntu\n"))
    (finding,) = [f for f in check(blueprint).findings if f.rule == "DEP015"]
    assert finding.path == ("deployment", "cloud", "image") and "aws" in finding.message


def test_the_catalogue_default_is_a_form_the_check_takes() -> None:
    """The catalogue's GCP images (data/cloud.yaml) are written in the same forms a blueprint may use."""
    from blueprints.catalog import default_catalog
    from blueprints.models.deployment import GCP_IMAGE

    images = default_catalog().images["gcp"]
    assert images and all(GCP_IMAGE.fullmatch(v) for d in images.values() for v in d.image.values())


@pytest.mark.pulumi
@pytest.mark.parametrize("image", ACCEPTED[:4])
def test_the_image_reaches_the_instance_as_data(image: str, tmp_path: Path) -> None:
    pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")
    from pulumi_cases import generate_text, run_target

    cluster, project = generate_text(_gcp(image), tmp_path)
    assert image not in (project / "__main__.py").read_text(), "read as data, not templated into code"
    assert json.loads((project / "cluster.json").read_text())["image"] == {"id": image}
    vms = run_target(cluster, project).of_type(INSTANCE)
    assert vms and all(vm.inputs["bootDisk"]["initializeParams"]["image"] == image for vm in vms)
