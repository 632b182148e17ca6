"""How a run's processes hold its ranks, and what RCCL makes of that: the run setting both the model
(generator.perf.predict) and the results reader (generator.perf.nccl_results) carry, spelled once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessSettings:
    """How the run's processes hold its ranks and what RCCL makes of that: ``gpus_per_process`` as nccl-tests
    -g (times -t); ``msccl`` False as RCCL_MSCCL_ENABLE=0; ``msccl_single_process`` as
    RCCL_MSCCL_ENABLE_SINGLE_PROCESS, whether ranks sharing a process run MSCCL (None: RCCL's default,
    perf.yaml rccl.msccl_single_process_default)."""

    gpus_per_process: int = 1
    msccl: bool = True
    msccl_single_process: bool | None = None

    def describe(self) -> list[str]:
        parts = [f"{self.gpus_per_process} GPUs a process"] if self.gpus_per_process > 1 else []
        if not self.msccl:
            parts.append("RCCL_MSCCL_ENABLE=0")
        if self.msccl_single_process is not None:
            parts.append(f"RCCL_MSCCL_ENABLE_SINGLE_PROCESS={int(self.msccl_single_process)}")
        return parts

    def msccl_runs(self, shared_by_default: bool) -> bool:
        """Whether RCCL runs MSCCL for these processes; ``shared_by_default``: RCCL's default for ranks that
        share a process (perf.yaml rccl.msccl_single_process_default)."""
        shared = shared_by_default if self.msccl_single_process is None else self.msccl_single_process
        return self.msccl and (self.gpus_per_process == 1 or shared)


# one rank a process, RCCL's MSCCL settings left at their defaults: what a run that records none of them ran
DEFAULT_PROCESSES = ProcessSettings()
