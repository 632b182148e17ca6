"""What `rehearse` reads from a build folder that may have been edited, bounded (review h180, findings 5 to
7): a CSV field over Python's field limit (128 KiB) in cables.csv or asn-plan.csv and 350 nested keys in a
switch's startup.yaml were internal errors (exit 3); each is now refused at its file and line, exit 2,
before any namespace exists (no real tool is needed). partitions.conf is parsed in linear time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from rehearse_fixtures import SMALL_ROCE, generate

from generator.foreign import MAX_YAML_DEPTH, ForeignInputError, parse_yaml
from generator.rehearse import block_read, partitions

FIELD = "x" * (200 * 1024)  # over csv.field_size_limit(), 131,072 characters


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(SMALL_ROCE, tmp_path_factory.mktemp("roce") / "build")


def _refused(built: Path, tmp_path: Path, rel: str, edit: str, *needles: str) -> None:
    """``edit`` appended to the build's file ``rel``: `rehearse` exits 2 naming the file and line."""
    root = tmp_path / "build"
    shutil.copytree(built, root)
    with (root / rel).open("a") as f:
        f.write(edit)
    code, out, err = run_cli("rehearse", str(root))
    assert code == 2 and "internal error" not in err, (code, out, err)
    assert all(n in err for n in needles), err


@pytest.mark.parametrize(
    ("rel", "row"),
    [
        ("cabling/cables.csv", f"999,{FIELD},compute\n"),
        ("switches/asn-plan.csv", f"compute,c-leaf-x,leaf,sn5600,4200000099,{FIELD},32,32\n"),
    ],
)
def test_a_csv_field_over_the_limit_is_refused_at_its_line(
    built: Path, tmp_path: Path, rel: str, row: str
) -> None:
    line = (built / rel).read_text().count("\n") + 1
    _refused(built, tmp_path, rel, row, f"{Path(rel).name}:{line}: ", "field larger than field limit")


def test_startup_yaml_nested_350_deep_is_refused_at_its_line(built: Path, tmp_path: Path) -> None:
    """350 nested keys under a second `- set:` item: the fast reader recursed past Python's limit."""
    rel = "switches/compute/c-leaf-su1-r0/startup.yaml"
    text = (built / rel).read_text()
    assert text.startswith("#") and "\n- set:\n    interface:\n" in text and text.endswith("\n")
    deep = "- set:\n" + "".join("  " * (i + 2) + f"k{i}:\n" for i in range(349)) + "  " * 351 + "k: 1\n"
    # the list, its item and the mapping under `set` are three levels: the 65th is the key k62's mapping
    line = text.count("\n") + 1 + 63
    _refused(built, tmp_path, rel, deep, f"startup.yaml:{line}: ", "nested deeper than 64 levels")


@pytest.mark.parametrize("depth", [MAX_YAML_DEPTH - 1, MAX_YAML_DEPTH, MAX_YAML_DEPTH + 1, 350])
@pytest.mark.parametrize("leaf", ["1", "{}", "[]"])
def test_the_block_reader_hands_over_at_the_full_loaders_depth(depth: int, leaf: str) -> None:
    """What the fast reader takes, the full loader takes the same: nested past the limit, it is left to the
    full loader, which refuses it."""
    text = "".join("  " * i + f"k{i}:\n" for i in range(depth - 1)) + "  " * (depth - 1) + f"k: {leaf}\n"
    try:
        full = parse_yaml(text, "f")
    except ForeignInputError as exc:
        assert "nested deeper than" in exc.message
        with pytest.raises(block_read.NotBlock, match="nested deeper"):
            block_read.load(text)
    else:
        assert block_read.load(text) == full


def test_partitions_parse_is_linear_in_lines_without_a_semicolon() -> None:
    """Each line joined one growing string and searched all of it for `;`: 20,000 lines of 1,000
    characters took 105 s, now well under a second."""
    text = ("P" * 1000 + "\n") * 20_000 + "Default=0x7fff : ALL=full ;\nX=0x10, defmember=full : ALL_CAS ;\n"
    parts = partitions.parse(text)
    assert [(p.name[-7:], p.pkey, p.line) for p in parts] == [("Default", 0x7FFF, 1), ("X", 0x10, 20_002)]
