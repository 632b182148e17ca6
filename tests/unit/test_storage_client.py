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
