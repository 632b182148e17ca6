"""`sot push -o FILE` replaces an existing file only with --force (review b181), refused before the server is
written to; --force is the same option as `sot csv`'s (add_common), which replaces a non-empty -o folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from fake_netbox import FakeNetBox
from sot_fixtures import builds
from test_sot_netbox import TOKEN

__all__ = ["builds"]  # the fixture, found by pytest in this module's names

MINE = b"the user's own file\n"


@pytest.fixture
def netbox() -> Iterator[FakeNetBox]:
    fake = FakeNetBox()
    yield fake
    fake.close()


def test_push_replaces_an_existing_report_only_with_force(
    netbox: FakeNetBox, builds: dict, tmp_path: Path
) -> None:
    report = tmp_path / "report.txt"
    report.write_bytes(MINE)
    argv = ("sot", "push", str(builds["small"]), "--url", netbox.url, "--token", TOKEN, "-o", str(report))
    code, out, err = run_cli(*argv)
    assert code == 2 and "exists; add --force to replace it (nothing written)" in err, out + err
    assert report.read_bytes() == MINE and netbox.requests == []
    code, out, err = run_cli(*argv, "--force")
    assert code == 0, out + err
    assert report.read_bytes() != MINE and "change(s) written" in report.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]
