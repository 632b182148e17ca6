"""ECMP hash collisions: what flow hashing costs traffic that crosses the uplinks of an Ethernet fabric.

A switch without adaptive routing hashes each flow (one RDMA queue pair: one UDP 5-tuple) onto one of ``k``
equal-cost uplinks (RFC 2992), independently and uniformly. With ``f`` flows of equal rate the busiest
uplink carries ``M`` of them and every flow on it gets ``1/M`` of the link, so a bulk-synchronous collective
step — as slow as its slowest flow — runs at ``(f/k) / E[M]`` of the fabric's capacity. ``E[M]`` is the
expected maximum load of ``f`` balls thrown into ``k`` bins, computed exactly:

    P(M ≤ m) = f! / k^f · [x^f] (Σ_{j≤m} x^j / j!)^k,      E[M] = Σ_{m≥0} (1 − P(M ≤ m)).

For small f and k the count f!·[x^f](…)^k is an exact integer (Python's big integers, no numpy
import); beyond, float convolutions with numpy. Both agree to float rounding (tests/cli/test_ecmp_exact.py).

Adaptive routing (Spectrum-X, InfiniBand AR) sprays packets over the paths instead and has no such loss;
InfiniBand subnet managers program destination routes (ftree balances them) rather than hashing flows.
"""

from __future__ import annotations

import math
from functools import cache

MAX_FLOWS = 2048
# Up to this many flows, and flows x paths, the probabilities are counted exactly with Python integers
# (below), which costs less than importing numpy (~70 ms of CPU on the benchmark machine;
# benchmarks/startup.py, issue 32): at most ~20 ms (48 flows on 52 paths). The integers grow with both,
# so larger fabrics use numpy's float convolutions.
MAX_EXACT_FLOWS = 48
MAX_EXACT_CELLS = 2500


def _count_at_most(m: int, k: int, f: int) -> int:
    """How many of the k^f ways to throw f labelled balls into k bins put at most m in every bin:
    f! · [x^f] (Σ_{j≤m} x^j/j!)^k, in exact integer arithmetic.

    Q = m'! · Σ_{j≤m'} x^j/j! (m' = min(m, f)) has integer coefficients; its k-th power is taken by
    squaring on one integer holding each coefficient in a slot of ``width`` bits (Kronecker substitution:
    the products run inside CPython's big-integer multiplication). No coefficient of any power Q^i, i ≤ k,
    exceeds Q(1)^k, so a slot never carries into the next, and dropping the slots above degree f (a mask)
    is the truncation. Then [x^f] Q^k = m'!^k · [x^f] (Σ x^j/j!)^k."""
    top = min(m, f)
    q = [math.factorial(top) // math.factorial(j) for j in range(top + 1)]
    width = (sum(q) ** k).bit_length() + 1
    keep = (1 << ((f + 1) * width)) - 1  # the slots of degree <= f
    packed = 0
    for c in reversed(q):
        packed = (packed << width) | c
    result, power, n = 1, packed, k
    while n:
        if n & 1:
            result = (result * power) & keep
        n >>= 1
        if n:
            power = (power * power) & keep
    coeff = (result >> (f * width)) & ((1 << width) - 1)
    return math.factorial(f) * coeff // math.factorial(top) ** k


def _p_at_most(m: int, k: int, f: int, log_scale: float) -> float:
    """P(M <= m): exact counts (one rounding, the final division) for small f, numpy beyond."""
    if f <= MAX_EXACT_FLOWS and f * k <= MAX_EXACT_CELLS:
        return min(1.0, _count_at_most(m, k, f) / k**f)
    coeff = _power_coefficient(m, k, f)
    return min(1.0, math.exp(log_scale + math.log(coeff))) if coeff > 0 else 0.0


def _power_coefficient(m: int, k: int, f: int) -> float:
    """[x^f] (Σ_{j≤m} x^j/j!)^k, by squaring with truncation at degree f (numpy convolutions)."""
    import numpy as np

    base = np.zeros(f + 1)
    for j in range(min(m, f) + 1):
        base[j] = 1 / math.factorial(j)
    result = np.zeros(f + 1)
    result[0] = 1.0
    power = base
    n = k
    while n:
        if n & 1:
            result = np.convolve(result, power)[: f + 1]
        n >>= 1
        if n:
            power = np.convolve(power, power)[: f + 1]
    return float(result[f])


@cache
def expected_max_load(flows: int, bins: int) -> float:
    """E[max load] of ``flows`` balls thrown uniformly into ``bins`` bins (exact up to float rounding)."""
    if flows < 0 or bins < 1:
        raise ValueError("flows >= 0 and bins >= 1")
    if flows == 0:
        return 0.0
    if bins == 1:
        return float(flows)
    flows = min(flows, MAX_FLOWS)
    log_scale = math.lgamma(flows + 1) - flows * math.log(bins)
    low = -(-flows // bins)  # below ceil(f/k) some bin must hold more: P(M <= m) = 0
    expected = float(low)
    for m in range(low, flows):
        p_le = _p_at_most(m, bins, flows, log_scale)
        expected += 1.0 - p_le
        if 1.0 - p_le < 1e-9:  # float rounding keeps P a hair below 1: the tail adds nothing visible
            break
    return expected


def ecmp_efficiency(paths: int, flows_per_path: int = 1) -> float:
    """Share of the uplink capacity a collective step gets when ``paths × flows_per_path`` equal flows are
    hashed onto ``paths`` equal-cost paths: (f/k) / E[max load]."""
    if paths <= 1:
        return 1.0
    flows = paths * max(1, flows_per_path)
    return (flows / paths) / expected_max_load(flows, paths)
