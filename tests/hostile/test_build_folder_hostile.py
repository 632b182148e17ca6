"""The files of a build folder a user (or an attacker) may have edited, read back by generate, cabling and
inventory (review h180, findings 3 and 4): a YAML alias bomb in the Pulumi stack file took 37 s and 1.2 GB
before generate refused it (one more level: minutes), and JSON nested 100,000 deep in manifest.json or
pulumi/cluster.json was a RecursionError (exit 3). Each is refused at its file and line, exit 2, nothing
written. The builds are test_stack_outputs.py's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from test_stack_outputs import builds, case

__all__ = ["builds", "case"]  # the fixtures, found by pytest in this module's names

DEEP = "[" * 100_000 + "]" * 100_000
STACK = Path("pulumi") / "Pulumi.prod.yaml"


def _bomb(levels: int) -> str:
    """``levels`` lists of nine aliases to the one before: 9**(levels + 1) ones when copied out."""
    return "x0: &a0 [1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, levels + 1)
    )


def _copy(builds: dict[str, Path], tmp_path: Path) -> Path:
    build = tmp_path / "gcp"
    shutil.copytree(builds["gcp"], build)
    return build


def _generate(build: Path, *extra: str) -> tuple[int, str]:
    code, out, err = run_cli(
        "generate", str(EXAMPLES / "gcp-a3-ultra.yaml"), "-o", str(build), "-q", "--only", "ansible,pulumi",
        *extra,
    )  # fmt: skip
    return code, out + err


@pytest.mark.parametrize(
    ("edit", "line"),
    [
        # 780 bytes; on the old code this size took seconds and gigabytes per level more
        (lambda text: _bomb(5) + text.replace('gcp:zone: "europe-west1-b"', "gcp:zone: *a5"), 1),
        # a self-referencing anchor, refused before anything follows it
        (lambda text: text.replace('gcp:zone: "europe-west1-b"', "gcp:zone: &r [*r]"), None),
    ],
    ids=["alias bomb", "self-reference"],
)
def test_an_alias_in_the_stack_file_is_refused_at_its_line(
    builds: dict[str, Path], tmp_path: Path, edit: object, line: int | None
) -> None:
    build = _copy(builds, tmp_path)
    stack = build / STACK
    text = stack.read_text()
    assert 'gcp:zone: "europe-west1-b"' in text
    mine = edit(text)  # type: ignore[operator]
    stack.write_text(mine)
    before = (build / "manifest.json").read_bytes()
    for extra in ((), ("--overwrite-edited",)):
        code, said = _generate(build, *extra)
        assert code == 2 and "anchor or alias" in said, said
        at = line if line is not None else mine[: mine.index("&r")].count("\n") + 1
        assert f"{STACK.name}:{at}:" in said, said
        assert stack.read_text() == mine and (build / "manifest.json").read_bytes() == before


def test_a_stack_file_without_aliases_is_still_merged(builds: dict[str, Path], tmp_path: Path) -> None:
    """The refusal is of anchors and aliases only: a key added with `pulumi config set` stays."""
    build = _copy(builds, tmp_path)
    stack = build / STACK
    stack.write_text(stack.read_text() + "  gcp:project: mine-123\n")
    code, said = _generate(build)
    assert code == 0, said
    assert "gcp:project: mine-123" in stack.read_text()


def test_a_deep_manifest_is_refused_by_generate(builds: dict[str, Path], tmp_path: Path) -> None:
    build = _copy(builds, tmp_path)
    manifest = build / "manifest.json"
    manifest.write_text('{"files": ' + DEEP + "}")
    code, said = _generate(build)
    assert code == 2 and "manifest.json:1: " in said and "deeper than 64" in said, said
    assert manifest.read_text().startswith('{"files": [[[')


def test_a_deep_manifest_is_refused_by_cabling(tmp_path: Path) -> None:
    """`cabling -o BUILD/cabling` refreshes the build's manifest, which it reads first."""
    build = tmp_path / "ib"
    (build / "cabling").mkdir(parents=True)
    (build / "manifest.json").write_text('{"files": ' + DEEP + "}")
    code, out, err = run_cli(
        "cabling", str(EXAMPLES / "hdr-fat-tree-a100.yaml"), "-o", str(build / "cabling"), "--force"
    )
    assert code == 2 and "manifest.json:1: " in err and "deeper than 64" in err, out + err
    assert list((build / "cabling").iterdir()) == []


def test_a_deep_cluster_json_is_refused_by_inventory(case: object) -> None:
    build, outputs, data = case("gcp")  # type: ignore[operator]
    outputs.write_text(json.dumps(data))
    (build / "pulumi" / "cluster.json").write_text('{"blueprint": ' + DEEP + "}")
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs), "-o", "-")
    assert code == 2 and "cluster.json:1: " in err and "deeper than 64" in err, out + err
