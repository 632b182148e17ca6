"""Catalogue entries a site writes itself: facts the schema added later are optional (unknown = refused where
used, never a load error), and policy pairs must be coherent."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blueprints.catalog.perf import Policy, perf_data
from blueprints.catalog.schema import Gpu


def test_a_site_gpu_without_a_pcie_width_loads_as_unknown() -> None:
    entry = {
        "name": "Site GPU",
        "vendor": "nvidia",
        "memory_gb": 80,
        "tdp_w": 700,
        "bf16_tflops": 989,
        "form_factor": "sxm",
        "nvlink": {"generation": 4, "links": 18},
        "pcie_gen": 5,
        "sm_arch": 90,
    }
    gpu = Gpu.model_validate(entry)
    assert gpu.pcie_lanes is None and gpu.infinity_fabric_links is None
    assert Gpu.model_validate({**entry, "pcie_lanes": 16}).pcie_lanes == 16
    with pytest.raises(ValidationError):
        Gpu.model_validate({**entry, "pcie_lanes": 0})


def test_the_calibration_range_must_be_a_range() -> None:
    shipped = perf_data().policy.model_dump()
    shipped["calibration_factor_min"]["value"] = 2.5
    with pytest.raises(ValidationError, match="calibration_factor_min must be above 0 and below"):
        Policy.model_validate(shipped)
