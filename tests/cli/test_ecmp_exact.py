"""ECMP's expected maximum load, counted exactly without numpy, against numpy's float path and a brute force.

`validate` of the RoCE/Ethernet examples needs E[max load] for a few dozen flows; counting it with Python
integers (generator/perf/ecmp.py, `_count_at_most`) spares the numpy import (issue 32). The count is
checked against an independent oracle (enumerating every way to hash the flows), the probabilities
against the numpy convolution path on every shipped example's sizes and on random fabrics, and the
findings of every example against a run forced onto the numpy path.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from generator.perf import ecmp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


def _brute_force_count(m: int, k: int, f: int) -> int:
    """Ways to send f labelled flows to k paths with at most m on any path, by enumeration."""
    return sum(1 for ways in itertools.product(range(k), repeat=f) if max(Counter(ways).values()) <= m)


@pytest.mark.parametrize(("f", "k"), [(1, 1), (2, 2), (3, 2), (4, 4), (5, 3), (6, 4), (7, 2), (6, 5)])
def test_exact_count_equals_enumeration(f: int, k: int) -> None:
    for m in range(f + 1):
        assert ecmp._count_at_most(m, k, f) == _brute_force_count(m, k, f), (m, k, f)


def test_exact_count_closed_forms() -> None:
    # every path at most one flow: k!/(k-f)! injective hashings; at most f: all k^f of them
    for f, k in [(4, 4), (5, 9), (12, 16), (30, 40)]:
        assert ecmp._count_at_most(1, k, f) == math.perm(k, f)
        assert ecmp._count_at_most(f, k, f) == k**f


def _numpy_path(flows: int, bins: int, monkeypatch: pytest.MonkeyPatch) -> float:
    def not_here(*_: int) -> int:
        raise AssertionError("the numpy path counted exactly")

    with monkeypatch.context() as m:
        m.setattr(ecmp, "MAX_EXACT_FLOWS", 0)
        m.setattr(ecmp, "_count_at_most", not_here)
        return ecmp.expected_max_load.__wrapped__(flows, bins)


def _exact_path(flows: int, bins: int) -> float:
    assert flows <= ecmp.MAX_EXACT_FLOWS and flows * bins <= ecmp.MAX_EXACT_CELLS
    return ecmp.expected_max_load.__wrapped__(flows, bins)


def _example_sizes() -> set[tuple[int, int]]:
    """(flows, paths) of every E[max load] the shipped examples ask for."""
    from generator.pipeline import check

    seen: set[tuple[int, int]] = set()
    original = ecmp.expected_max_load

    def spy(flows: int, bins: int) -> float:
        seen.add((flows, bins))
        return original.__wrapped__(flows, bins)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(ecmp, "expected_max_load", spy)
        for example in EXAMPLES:
            check(example)
    return seen


def test_exact_path_equals_numpy_on_every_example(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = _example_sizes()
    # roce-rail-2tier and ethernet-torus (hashed over a node's 4 ports), roce-dragonfly
    assert {(4, 4), (34, 34)} <= sizes
    for flows, bins in sorted(sizes):
        assert _exact_path(flows, bins) == pytest.approx(_numpy_path(flows, bins, monkeypatch), rel=1e-12)


def test_exact_path_equals_numpy_on_random_fabrics(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(32)
    most = ecmp.MAX_EXACT_FLOWS
    cases = [(most, ecmp.MAX_EXACT_CELLS // most), (most, 2), (2, ecmp.MAX_EXACT_CELLS // 2)]
    for _ in range(12):
        flows = rng.randint(2, most)
        cases.append((flows, rng.randint(2, ecmp.MAX_EXACT_CELLS // flows)))
    for flows, bins in cases:
        assert _exact_path(flows, bins) == pytest.approx(_numpy_path(flows, bins, monkeypatch), rel=1e-12)


def test_rail_example_value_is_exact() -> None:
    # 4 flows on 4 paths, 4^4 = 256 ways: P(M > 1) = 1 - 4!/256, P(M > 3) = 4/256, P(M > 2) = 52/256
    # (4 paths x 4 choices of the flow left out x 3 other paths + the 4 all-on-one): E[M] = 544/256
    assert _exact_path(4, 4) == 2.125


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_findings_do_not_depend_on_the_path(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from generator.pipeline import check

    ecmp.expected_max_load.cache_clear()
    exact = [f.as_dict() for f in check(example).findings]
    ecmp.expected_max_load.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(ecmp, "MAX_EXACT_FLOWS", 0)
        by_numpy = [f.as_dict() for f in check(example).findings]
    ecmp.expected_max_load.cache_clear()
    assert exact == by_numpy
