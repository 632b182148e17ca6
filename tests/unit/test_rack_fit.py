"""One rack fit (issue 29): the rules, the plan's rack count and the allocator agree on every budget.

Oracle: exact decimal arithmetic (fractions.Fraction of the numbers as written), independent of the code's
milliwatt integers. Before, three computations (floor(budget/kW + 1e-9), budget // kW, and a running float
sum) disagreed on 427 of ~27,000 pairs.
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

from generator.plan.placement import RackAllocator, servers_per_rack

BUDGETS = [round(b * 0.5, 1) for b in range(2, 241)]  # 1.0 … 120.0 kW in 0.5 kW steps
DRAWS = [round(0.1 * k, 1) for k in range(1, 121)]  # 0.1 … 12.0 kW


def _site(budget: float, units: int = 1_000_000) -> SimpleNamespace:
    rack = SimpleNamespace(units=units, reserved_units=0, power_kw=budget)
    return SimpleNamespace(rack=rack, rows=1, racks_per_row=1000)


def test_servers_per_rack_is_the_exact_quotient() -> None:
    wrong = [
        (b, kw)
        for b in BUDGETS
        for kw in DRAWS
        if servers_per_rack(_site(b), 1, kw) != (Fraction(str(b)) // Fraction(str(kw)))  # type: ignore[arg-type]
    ]
    assert not wrong, wrong[:10]


def test_the_allocator_places_exactly_that_many_per_rack() -> None:
    for b in BUDGETS[::7]:
        for kw in DRAWS[::3]:
            fit = servers_per_rack(_site(b), 1, kw)  # type: ignore[arg-type]
            if fit == 0:
                continue
            alloc = RackAllocator(_site(b))  # type: ignore[arg-type]
            placed: dict = {}
            alloc.place_nodes([f"n{i}" for i in range(2 * fit + 1)], 1, kw, None, placed)
            assert [len(r.devices) for r in alloc.racks] == [fit, fit, 1], (b, kw)


def test_space_limits_too() -> None:
    site = _site(100.0, units=42)
    assert servers_per_rack(site, 2, 2.25) == 21  # type: ignore[arg-type]
    assert servers_per_rack(site, 4, 10.0) == 10  # type: ignore[arg-type]
    assert servers_per_rack(site, 2, 0.0) == 21  # cloud: no draw on the blueprint's racks
