"""Parsers for the acceptance role: nccl-tests summaries, ibstat ports, `nvidia-smi topo -m`."""

from __future__ import annotations

import re

_BUSBW = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*([0-9.]+)", re.MULTILINE)
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)", re.MULTILINE)


def nccl_busbw(text: str) -> float:
    """Average bus bandwidth (GB/s) from an nccl-tests run; raises if the summary is missing."""
    m = _BUSBW.search(text or "")
    if m is None:
        raise ValueError("no '# Avg bus bandwidth' line in the nccl-tests output")
    return float(m.group(1))


def nccl_errors(text: str) -> int:
    """Out-of-bounds (wrong result) count reported by nccl-tests' data check."""
    m = _OOB.search(text or "")
    return int(m.group(1)) if m else 0


def ibstat_port(text: str) -> dict[str, object]:
    """One `ibstat <ca> <port>` block as {state, physical_state, rate, link_layer}."""
    out: dict[str, object] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        key, value = key.strip().lower().replace(" ", "_"), value.strip()
        if key == "rate":
            out["rate"] = float(value.split()[0]) if value else 0.0
        elif key in ("state", "physical_state", "link_layer"):
            out[key] = value
    return out


def nvidia_topo_matrix(text: str) -> dict[str, dict[str, str]]:
    """GPU-to-GPU cells of `nvidia-smi topo -m` ({"GPU0": {"GPU1": "NV18", ...}, ...})."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return {}
    header = lines[0].split()
    gpus = [h for h in header if re.fullmatch(r"GPU\d+", h)]
    matrix: dict[str, dict[str, str]] = {}
    for ln in lines[1:]:
        cells = ln.split()
        if not cells or not re.fullmatch(r"GPU\d+", cells[0]):
            continue
        row = cells[1:1 + len(header)]
        matrix[cells[0]] = {h: v for h, v in zip(header, row, strict=False) if h in gpus and h != cells[0]}
    return matrix


class FilterModule:
    def filters(self) -> dict[str, object]:
        return {
            "nccl_busbw": nccl_busbw,
            "nccl_errors": nccl_errors,
            "ibstat_port": ibstat_port,
            "nvidia_topo_matrix": nvidia_topo_matrix,
        }
