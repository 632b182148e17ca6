"""Catalogue entries a site writes itself: facts the schema added later are optional (unknown = refused where
used, never a load error), and policy pairs must be coherent."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blueprints.catalog.perf import Policy, perf_data
from blueprints.catalog.schema import Gpu
from generator.findings import Severity
from generator.pipeline import check

# a site's own GPU entry, with only the facts every entry has had from the start
SITE_GPU = {
    "name": "Site GPU",
    "vendor": "nvidia",
    "memory_gb": 80,
    "tdp_w": 700,
    "bf16_tflops": 989,
    "form_factor": "sxm",
    "nvlink": {"generation": 4, "links": 18},
    "sm_arch": 90,
}


def test_a_site_gpu_without_a_pcie_width_loads_as_unknown() -> None:
    entry = {**SITE_GPU, "pcie_gen": 5}
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


def test_a_gpu_without_a_pcie_generation_loads_as_unknown() -> None:
    """NVIDIA gives GB200's host link as NVLink-C2C and no PCIe generation: the field is optional."""
    assert Gpu.model_validate(SITE_GPU).pcie_gen is None


def test_pcie_between_gpus_of_unknown_generation_is_named_not_checked(tmp_path) -> None:
    """A GB200 pool declared on PCIe: GPU005 says the generation is unknown (it cannot compare it) and
    PRF005 says the model does not apply, instead of a comparison with None or a traceback."""
    bp = tmp_path / "gb-pcie.yaml"
    bp.write_text(
        "apiVersion: cluster-blueprint/v1\nname: gb-pcie\npools:\n  - name: gpu\n    role: gpu\n    count: 1\n"
        "    spec: {gpu: gb200, gpus: 4, gpu_interconnect: pcie5, nvlink_domain_gpus: 1, nvswitches: 0,\n"
        "           pcie_gen: 5, power_kw: 6.7, rack_units: 1,\n"
        "           nics: [{purpose: management, model: x710, count: 1, ports: 1, speed_gbps: 1}]}\n"
    )
    findings = check(bp).findings
    gpu005 = [f for f in findings if f.rule == "GPU005"]
    assert len(gpu005) == 1 and "no PCIe generation" in gpu005[0].message and "5.0" in gpu005[0].message
    prf005 = [f for f in findings if f.rule == "PRF005"]
    assert len(prf005) == 1 and "pcie_gen" in prf005[0].message
    assert not any(f.severity == Severity.ERROR for f in findings)
