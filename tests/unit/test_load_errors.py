"""Every file under tests/malformed/ is unusable: exit 2, a located message on the right line, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli

MALFORMED = REPO / "tests" / "malformed"

# file → (line of the first finding, text its message or hint must contain)
EXPECTED: dict[str, tuple[int, str]] = {
    "alias-bomb.yaml": (9, "document too large"),
    "bad-enum.yaml": (10, "did you mean `infiniband-ndr`?"),
    "bad-name.yaml": (3, "names are lower-case"),
    "bad-ratio.yaml": (11, "is not a ratio"),
    "binary.yaml": (1, "not UTF-8"),
    "comments-only.yaml": (1, "the file is empty"),
    "deep-nesting.yaml": (44, "nesting deeper than 40 levels"),
    "duplicate-keys.yaml": (7, "duplicate key `count` (first at line 6)"),
    "empty.yaml": (1, "the file is empty"),
    "float-count.yaml": (6, "fractional part"),
    "latin1.yaml": (4, "not UTF-8"),
    "list-top.yaml": (1, "got a list"),
    "missing-key.yaml": (9, "missing required key `technology`"),
    "negative-count.yaml": (6, "greater than or equal to 1 (got -4)"),
    "nul-byte.yaml": (3, "NUL byte"),
    "pools-not-list.yaml": (4, "valid list"),
    "scalar-top.yaml": (1, "got a str"),
    "suppress-no-reason.yaml": (9, "missing required key `reason`"),
    "tabs.yaml": (6, "'\\t'"),
    "tiers-four.yaml": (14, "2 or 3 (got 4)"),
    "unknown-key.yaml": (9, "missing required key `technology`"),
    "unknown-server.yaml": (7, "did you mean `dgx-h100`?"),
    "unknown-switch.yaml": (11, "did you mean `qm9700`?"),
    "unknown-top-key.yaml": (1, "missing required key `pools`"),
    "unknown-topology.yaml": (12, "did you mean `fat-tree`?"),
    "wrong-api-version.yaml": (2, "cluster-blueprint/v1"),
    "wrong-type.yaml": (6, "valid integer"),
    "yaml-syntax.yaml": (8, "YAML syntax error"),
    "zero-values.yaml": (7, "greater than 0 (got 0)"),
}

# further findings some files must also carry: (line, text)
ALSO: dict[str, list[tuple[int, str]]] = {
    "unknown-key.yaml": [(10, "did you mean `technology`?")],
    "unknown-top-key.yaml": [(4, "did you mean `pools`?")],
    "zero-values.yaml": [(17, "fabrics.compute.topology.dimension")],
}


def test_every_malformed_file_has_an_expectation() -> None:
    files = sorted(p.name for p in MALFORMED.iterdir() if p.is_file())
    assert files == sorted(EXPECTED), "add the new malformed file to EXPECTED (or remove the stale entry)"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_text_output(name: str) -> None:
    path = MALFORMED / name
    code, out, err = run_cli("validate", str(path))
    text = out + err
    assert code == 2, text
    assert "Traceback" not in text
    line, _ = EXPECTED[name]
    assert f"{path}:{line}:" in text, text  # located as file:line:col


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_json_findings(name: str) -> None:
    path = MALFORMED / name
    code, out, err = run_cli("validate", str(path), "--format", "json")
    assert code == 2
    assert "Traceback" not in out + err
    report = json.loads(out)
    (entry,) = report["files"]
    assert entry["valid"] is False
    findings = entry["findings"]
    assert findings and all(f["severity"] == "error" for f in findings)
    assert all(f["file"] == str(path) and f["line"] >= 1 and f["column"] >= 1 for f in findings)
    line, text = EXPECTED[name]
    first = findings[0]
    assert first["line"] == line, first
    assert text in f"{first['message']} {first['hint'] or ''}", first
    for also_line, also_text in ALSO.get(name, []):
        assert any(
            f["line"] == also_line and also_text in f"{f['path']} {f['message']} {f['hint'] or ''}"
            for f in findings
        ), findings


def test_several_files_exit_2_when_one_is_unusable(tmp_path: Path) -> None:
    code, out, _ = run_cli(
        "validate",
        str(REPO / "examples" / "superpod-h100-4su.yaml"),
        str(MALFORMED / "bad-enum.yaml"),
        "--format",
        "json",
    )
    assert code == 2
    files = {Path(f["file"]).name: f["valid"] for f in json.loads(out)["files"]}
    assert files == {"superpod-h100-4su.yaml": True, "bad-enum.yaml": False}


def test_missing_file_is_located_not_a_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    code, out, err = run_cli("validate", str(missing))
    assert code == 2
    assert f"{missing}:1:1" in out + err and "cannot read" in out + err
    assert "Traceback" not in out + err
