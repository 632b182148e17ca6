"""The one YAML writer (generator/yamltext.py) against independent readers: every string of a generated
corpus of awkward strings (YAML 1.1 and 1.2 booleans, nulls, ints, floats, dates, merge keys, indicators,
controls, line separators) comes back as the same string from PyYAML (YAML 1.1, pure and libyaml, the
loaders Ansible uses) and from ruamel.yaml in YAML 1.2 and YAML 1.1 mode, in block style and in the
Ansible mode (`!unsafe` where a value holds a brace), as a value, a key and a list item; and the Ansible
mode from ansible-core's own loader (ansible.parsing.yaml.loader.AnsibleLoader, what ansible-playbook reads
group_vars with), which in 2.19 reads an `!unsafe` scalar as if it were unquoted (`!unsafe "550.120"` is a
float there)."""

from __future__ import annotations

import itertools
import re
import textwrap
import warnings
from typing import Any

import pytest
import yaml
from ansible.parsing.yaml.loader import AnsibleLoader
from hypothesis import example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from generator.yamltext import (
    PROVEN_PLAIN,
    UNSAFE,
    WRAP,
    ansible_block,
    block_yaml,
    double_quoted,
    folded,
    number,
    scalar,
)


class Unsafe(str):
    """What a reader makes of a `!unsafe` scalar here (Ansible: AnsibleUnsafeText)."""


def _pyyaml_loader(base: type) -> type:
    loader = type("UnsafeLoader", (base,), {})
    loader.add_constructor("!unsafe", lambda ld, node: Unsafe(ld.construct_scalar(node)))
    return loader


PY_LOADERS = [_pyyaml_loader(yaml.SafeLoader)]
if hasattr(yaml, "CSafeLoader"):  # libyaml: what Ansible uses when it is installed
    PY_LOADERS.append(_pyyaml_loader(yaml.CSafeLoader))


def _ruamel(version: tuple[int, int] | None) -> YAML:
    reader = YAML(typ="safe", pure=True)
    if version is not None:
        reader.version = version
    reader.constructor.add_constructor("!unsafe", lambda ld, node: Unsafe(ld.construct_scalar(node)))
    return reader


def readers() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [(f"pyyaml-{ld.__bases__[0].__name__}", ld) for ld in PY_LOADERS]
    return [*out, ("ruamel-1.2", (1, 2)), ("ruamel-1.1", (1, 1))]


def read_ansible(text: str) -> Any:
    """``text`` as ansible-playbook reads a vars file."""
    return yaml.load(text, Loader=AnsibleLoader)  # Ansible's own loader is the oracle here


def read_all(text: str) -> dict[str, Any]:
    got: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ruamel warns about YAML 1.1 floats without a dot: we quote them
        for name, how in readers():
            got[name] = yaml.load(text, Loader=how) if isinstance(how, type) else _ruamel(how).load(text)
    return got


# ------------------------------------------------------------------------------------------- corpus
def _cases(*words: str) -> list[str]:
    out = []
    for w in words:
        out += [w, w.upper(), w.capitalize()]
        out += [
            "".join(c)
            for c in itertools.islice(itertools.product(*((ch.lower(), ch.upper()) for ch in w)), 8)
        ]
    return out


WORDS = _cases("y", "n", "yes", "no", "true", "false", "on", "off", "null", "nan", "inf")
NUMBERS = [
    "0",
    "00",
    "007",
    "08",
    "09",
    "123",
    "-1",
    "+1",
    "1_000",
    "1__",
    "0_",
    "0x1F",
    "0X1f",
    "0o17",
    "0b101",
    "0b",
    "0x",
    "0o",
    "1e3",
    "1E3",
    "1e+3",
    "1e-3",
    "7.0e10",
    "7.0E+10",
    "1.",
    ".5",
    "0.",
    "0._",
    "._",
    "1.5",
    "-1.5",
    "+.5",
    "1.2.3",
    "10.0.0.1",
    "190:20:30",
    "1:20",
    "-1:30",
    "12:30:00.5",
    ".inf",
    "-.inf",
    "+.INF",
    ".nan",
    ".NaN",
    "1e",
    "e3",
    "0e0",
    "123abc",
    "4096",
    "1_0.5_0",
]
DATES = ["2001-12-14", "2001-1-4", "2002-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "1999-99-99"]
INDICATORS = [c + "x" for c in "-?:,[]{}#&*!|>'\"%@`=~<"] + [
    "<<",
    "=",
    "-",
    "?",
    ":",
    "- x",
    "? x",
    "x: y",
    "x #y",
    "x#y",
    "a,b",
    "[a]",
    "{a}",
    "&a",
    "*a",
    "!a",
    "!!str",
    "%TAG",
    "@x",
    "`x`",
    "---",
    "...",
    "--- x",
    "x ",
    " x",
    " ",
    "",
    "''",
    '""',
    "'",
    '"',
]
CONTROLS = [
    "a\nb",
    "a\n",
    "\n",
    "a\tb",
    "\t",
    "a\rb",
    "a\x00b",
    "a\x07",
    "a\x1b[0m",
    "a\x7f",
    "a\x85b",
    "a\u2028b",
    "a\u2029b",
    "\ufeffa",
    "a\ufeff",
    "a\u00a0b",
    "é",
    "日本",
    "a\\b",
    "\\",
    "a\\nb",
    "\U0001f600",
    "a\ufffd",
    "{{ lookup('pipe', 'id') }}",
    "{% if %}",
    "{# x #}",
    "a  b",
    "a   b  ",
    "x" * 300,
]
NAMES = ["gpu001", "c-leaf-su1-r0", "swp1", "ibp220s0", "mlx5_0/1", "10.0.0.1/24", "gpu[001-004]", "a b"]
CORPUS = sorted(set(WORDS + NUMBERS + DATES + INDICATORS + CONTROLS + NAMES))


def _check(text: str, expected: Any) -> None:
    for name, got in read_all(text).items():
        assert got == expected, f"{name} read {got!r} from:\n{text}"
        _same_types(got, expected, name)


def _same_types(got: Any, expected: Any, name: str) -> None:
    if isinstance(expected, dict):
        for (gk, gv), (ek, ev) in zip(
            sorted(got.items(), key=repr), sorted(expected.items(), key=repr), strict=True
        ):
            _same_types(gk, ek, name)
            _same_types(gv, ev, name)
    elif isinstance(expected, list):
        for g, e in zip(got, expected, strict=True):
            _same_types(g, e, name)
    else:
        # bool is an int and an int equals a float: the type itself must match (str subclasses: Unsafe)
        assert isinstance(got, str) if isinstance(expected, str) else type(got) is type(expected), (
            f"{name}: {got!r} ({type(got).__name__}) for {expected!r}"
        )


@pytest.mark.parametrize("value", CORPUS, ids=lambda v: repr(v)[:40])
def test_block_style_reads_back_as_the_same_string(value: str) -> None:
    doc = {"value": value, "list": [value, 1], "nested": {"deep": value}}
    _check(block_yaml(doc), doc)
    if value:  # an empty key is not a key some readers take
        _check(block_yaml({value: 1}), {value: 1})


@pytest.mark.parametrize("value", CORPUS, ids=lambda v: repr(v)[:40])
def test_ansible_mode_reads_back_as_the_same_string(value: str) -> None:
    """The same string from every reader and from Ansible's; `!unsafe` where it holds a brace, the start of
    every Jinja delimiter (a string without one is never templated)."""
    doc = {"value": value, "list": [value], "flow": (value, 2)}
    text = ansible_block(doc, tag=UNSAFE)
    for name, got in read_all(text).items():
        assert got == {"value": value, "list": [value], "flow": [value, 2]}, f"{name}:\n{text}"
        tagged = [isinstance(v, Unsafe) for v in (got["value"], got["list"][0], got["flow"][0])]
        assert tagged == [bool({"{", "}"} & set(value))] * 3, name
    by_ansible = read_ansible(text)
    assert by_ansible == {"value": value, "list": [value], "flow": [value, 2]}, text
    assert all(
        isinstance(v, str) for v in (by_ansible["value"], by_ansible["list"][0], by_ansible["flow"][0])
    )


@pytest.mark.parametrize(
    "value", [v for v in CORPUS if "{" not in v and "%}" not in v], ids=lambda v: repr(v)[:40]
)
def test_proven_plain_strings_are_untagged_strings(value: str) -> None:
    text = ansible_block({"value": value, value or "k": 1}, tag=PROVEN_PLAIN)
    for name, got in read_all(text).items():
        assert got == {"value": value, value or "k": 1}, f"{name}:\n{text}"
        assert not isinstance(got["value"], Unsafe), name


def test_template_syntax_is_never_written_untagged() -> None:
    with pytest.raises(ValueError, match="template syntax"):
        ansible_block({"host": "{{ evil }}"}, tag=PROVEN_PLAIN)


# ------------------------------------------------------------------------------------------ generated
_awkward = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("yYnNoOeEtTfFlLuUaA0123456789._-+:#'\"!&*?|>%@`[]{},~<= \t\n\\x")),
        st.characters(codec="utf-8"),
    ),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(_awkward, _awkward)
def test_any_string_reads_back_in_both_styles(value: str, key: str) -> None:
    doc: dict[str, Any] = {"v": value, "l": [value]}
    if key:
        doc[key + "_k"] = key
    _check(block_yaml(doc), doc)
    got = read_all(ansible_block(doc, tag=UNSAFE))
    assert all(g == doc for g in got.values()), got
    assert read_ansible(ansible_block(doc, tag=UNSAFE)) == doc


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False) | st.sampled_from([1e16, 1e-5, 7e10, 1e300, float("inf"), float("-inf")]))
def test_floats_read_back_as_the_same_float(value: float) -> None:
    _check(f"v: {number(value)}\n", {"v": value})
    _check(block_yaml({"v": value}), {"v": value})


def test_nan_reads_back_as_nan() -> None:
    for got in read_all(f"v: {number(float('nan'))}\n").values():
        assert got["v"] != got["v"]


# -------------------------------------------------------------------------------------------- folding
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab é"\\\n{}x')), max_size=400), st.integers(0, 120))
@example("\\" * 46 + "  ", 81)  # one unbreakable word ending in a run of spaces, longer than its line
def test_a_folded_string_reads_back_whole(value: str, indent: int) -> None:
    body = folded(value, indent)
    width = max(40, WRAP - indent)
    # a longer line holds no place to break: a single space between two non-spaces (a run of spaces stays,
    # since YAML would fold a break beside it away)
    assert all(
        len(line.strip()) <= width or not re.search(r"\S \S", line.strip()) for line in body.split("\n")
    )
    for name, got in read_all("k: " + body + "\n").items():
        assert got == {"k": value}, f"{name}:\n{body}"


@given(st.lists(st.text(alphabet="abcdefghij-", min_size=1, max_size=30), max_size=40), st.integers(0, 120))
def test_folding_single_spaced_text_is_what_textwrap_writes(words: list[str], indent: int) -> None:
    value = " ".join(words)
    text = double_quoted(value)  # no brace: no `!unsafe`
    lines = textwrap.wrap(text, width=max(40, WRAP - indent), break_long_words=False, break_on_hyphens=False)
    assert folded(value, indent) == ("\n" + " " * (indent + 2)).join(lines)


def test_plain_strings_stay_plain() -> None:
    # the output of every example relies on these staying unquoted (golden copies)
    for value in ["gpu001", "c-leaf-su1-r0", "swp1", "10.0.0.1", "10.0.0.1/24", "gpu[001-004]", "1.2.3"]:
        assert scalar(value) == value
    assert [scalar(v) for v in ("y", "1e3", "2001-12-14", "<<", "a\nb")] == [
        "'y'",
        "'1e3'",
        "'2001-12-14'",
        "'<<'",
        '"a\\nb"',
    ]


@pytest.mark.parametrize(
    "value", ["#jinja2:variable_start_string:'[['\n[[ 7 * 6 ]]", "x #jinja2:y", "{", "a}"]
)
def test_what_ansible_could_template_is_tagged(value: str) -> None:
    """A brace starts every Jinja delimiter, and a `#jinja2:` header sets other ones (`[[ ]]`), which
    ansible-core 2.16-2.18 templates too: such a value is written `!unsafe` (read back as the tagged string
    by every reader, and as the same string by Ansible's loader); an inventory value holding one is
    refused."""
    text = ansible_block({"v": value}, tag=UNSAFE)
    assert all(isinstance(got["v"], Unsafe) and got["v"] == value for got in read_all(text).values())
    assert read_ansible(text)["v"] == value
    with pytest.raises(ValueError, match="template syntax"):
        ansible_block({"v": value if "jinja2" in value else "{{ x }}"}, tag=PROVEN_PLAIN)
