"""Slurm hostlist compression: ranges, zero padding, gaps, several prefixes, and the round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.emit.slurm.hostlist import HostlistError, compress, expand


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([f"dgx{i:03d}" for i in range(1, 33)], "dgx[001-032]"),
        (["dgx001"], "dgx001"),
        (["n098", "n099", "n100"], "n[098-100]"),  # padded width kept across the 99 → 100 boundary
        (["n8", "n9", "n10"], "n[8-10]"),  # unpadded numbers of different lengths form one range
        (["dgx004", "dgx001", "dgx002", "dgx003", "dgx010", "dgx013", "dgx012"], "dgx[001-004,010,012-013]"),
        (["b1", "a2", "a1"], "a[1-2],b1"),
        (["login", "dgx002", "dgx001"], "dgx[001-002],login"),
        (["dgx001", "dgx001", "dgx002"], "dgx[001-002]"),
        (["n05", "n8", "n9", "n10"], "n[05,8-9,10]"),  # 10 joins the 2-digit padded class, 8-9 stay bare
        (["su2", "su10", "su1"], "su[1-2,10]"),
        (["c-leaf-su1-r0", "c-leaf-su1-r1"], "c-leaf-su1-r[0-1]"),
        (["p5001", "p5002"], "p[5001-5002]"),
        ([], ""),
    ],
)
def test_compress(names: list[str], expected: str) -> None:
    assert compress(names) == expected
    assert sorted(expand(expected)) == sorted(set(names))


def test_expand_forms_slurm_accepts() -> None:
    assert expand("tux[0-3,12,18-20]") == ["tux0", "tux1", "tux2", "tux3", "tux12", "tux18", "tux19", "tux20"]
    assert expand("rack[1-2]-sw") == ["rack1-sw", "rack2-sw"]
    assert expand("r[1-2]n[01-02]") == ["r1n01", "r1n02", "r2n01", "r2n02"]
    assert expand("a1,b[2-3]") == ["a1", "b2", "b3"]


@pytest.mark.parametrize("bad", ["dgx[001-", "dgx]1[", "n[3-1]", "n[a-b]"])
def test_expand_rejects(bad: str) -> None:
    with pytest.raises(HostlistError):
        expand(bad)


def test_compress_rejects_hostlist_metacharacters() -> None:
    with pytest.raises(HostlistError):
        compress(["bad[1]"])


_names = st.lists(
    st.tuples(
        st.sampled_from(["dgx", "n", "gpu-", "c-leaf-su"]),
        st.integers(0, 1200),
        st.sampled_from([0, 1, 3, 5]),
    ).map(lambda t: f"{t[0]}{t[1]:0{t[2]}d}" if t[2] else f"{t[0]}{t[1]}"),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_names)
def test_round_trip(names: list[str]) -> None:
    text = compress(names)
    back = expand(text)
    assert sorted(back) == sorted(set(names))
    assert len(back) == len(set(back))
    assert compress(back) == text  # canonical: compressing the expansion gives the same text
