"""`verify-cabling --accept FILE`: a key the accept file may not have is refused at its `file:line:col`.

docs/existing-site.md promises every accept-file error at its `file:line:col`. A misspelt device did get one,
an unknown key only a JSON path: the doc's own example, `reason: ticket 4711, optic on order` in a flow
mapping, splits at the comma into a key `optic on order` and was refused as `FILE: $.cables[0]["optic on
order"]`, with no line to look at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from vfy_plans import TINY, plan_of

from generator.foreign import ForeignInputError
from generator.verify.accept import read_accept


def _refusal(tmp_path: Path, text: str) -> str:
    path = tmp_path / "accepted.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ForeignInputError) as exc:
        read_accept(path, plan_of(TINY), "compute")
    return str(exc.value)


def test_unquoted_comma_in_a_flow_mapping_is_refused_at_its_line_and_column(tmp_path: Path) -> None:
    text = "absent: []\ncables:\n  - {cable: C-NL-000001, reason: ticket 4711, optic on order}\n"
    message = _refusal(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'accepted.yaml'}:3:")
    assert '$.cables[0]["optic on order"]: Extra inputs are not permitted' in message


def test_misspelt_key_is_refused_at_the_key(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "ports:\n  - {device: c-leaf-su1-r0, port: 40, reasn: UFM}\n")
    assert message.startswith(f"{tmp_path / 'accepted.yaml'}:2:39: $.ports[0].reasn: ")


def test_missing_key_is_refused_at_its_entry(tmp_path: Path) -> None:
    message = _refusal(tmp_path, "absent:\n  - {reason: never installed}\n")
    assert message.startswith(f"{tmp_path / 'accepted.yaml'}:2:5: $.absent[0].device: Field required")


def test_quoted_reason_keeps_its_comma(tmp_path: Path) -> None:
    path = tmp_path / "accepted.yaml"
    path.write_text('cables:\n  - {cable: C-NL-000001, reason: "ticket 4711, optic on order"}\n')
    accepted = read_accept(path, plan_of(TINY), "compute")
    assert accepted.cables == {"C-NL-000001": "ticket 4711, optic on order"}
