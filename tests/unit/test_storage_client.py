"""Catalogue client repositories: only the placeholders the deploy layer fills in, per-OS packages."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blueprints.catalog.schema import StorageClient

BASE = {"repo": "https://example.org/repos/x-{codename}/", "suite": "{codename}", "key_url": "https://k"}


def test_versioned_package_per_os_release() -> None:
    client = StorageClient(
        **BASE,
        packages_by_os={"ubuntu-22.04": ["amlfs-lustre-client-2.15.7-33-g79ddf99={kernel}"]},
    )
    assert client.packages_for("ubuntu-22.04") == ["amlfs-lustre-client-2.15.7-33-g79ddf99={kernel}"]
    assert client.packages_for("rhel-9") == []  # nothing published: the image or the site provides it
    plain = StorageClient(**BASE, packages=["lustre-client-modules-{kernel}", "lustre-client-utils"])
    assert plain.packages_for("ubuntu-24.04") == ["lustre-client-modules-{kernel}", "lustre-client-utils"]


@pytest.mark.parametrize(
    "field,value",
    [
        ("repo", "https://example.org/{release}/"),  # only {codename}
        ("repo", "http://example.org/"),  # https only
        ("suite", "{codename}-{codename}"),
        ("packages", ["pkg={kernel}={kernel}"]),
        ("packages", ["pkg-{codename}"]),
        ("packages", ["pkg; rm -rf /"]),
        ("packages_by_os", {"Ubuntu 22": ["pkg"]}),
    ],
)
def test_other_placeholders_and_text_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        StorageClient(**{**BASE, field: value})


# Azure Managed Lustre "Throughput configurations" (MicrosoftDocs/azure-stack-docs
# azure-managed-lustre/create-file-system-portal.md): MB/s per TiB -> (minimum, maximum, increment) in TiB.
AMLFS_TABLE = {40: (48, 768, 48), 125: (16, 128, 16), 250: (8, 128, 8), 500: (4, 128, 4)}


@pytest.mark.parametrize("tier,limits", sorted(AMLFS_TABLE.items()))
def test_amlfs_sizes_follow_the_documented_table(tier: int, limits: tuple[int, int, int]) -> None:
    from blueprints.catalog.load import default_catalog
    from generator.deploy.managed_storage import size_managed

    spec = default_catalog().managed_storage["azure"]["lustre"]
    low, high, step = limits
    assert (spec.tiers[tier].min, spec.tiers[tier].step, spec.tiers[tier].max) == (
        low * 1024,
        step * 1024,
        high * 1024,
    )
    # above the 128 TiB of the faster tiers only the 40 MB/s/TiB tier holds it, in 48 TiB increments
    big = size_managed(spec, 200, None, False)
    assert (big.tier, big.size) == (40, 5 * 48 * 1024) and not any("exceeds" in n for n in big.notes)
