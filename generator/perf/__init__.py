"""Performance model: NCCL collective cost on a planned cluster, the training step, and the advisor.

``predict_busbw(cluster, plan, collective, size_bytes, nodes=None)`` → ``Prediction`` is the entry point
other stages use (rules, the Ansible acceptance thresholds); ``blueprint estimate`` and ``blueprint advise``
are the commands.
"""

from generator.perf.collectives import ALGORITHMS, COLLECTIVES, bus_factor, ring_time_s
from generator.perf.predict import Prediction, job_for, predict_busbw, predict_on, sweep
from generator.perf.system import Limit, PerfError, System, system_for

__all__ = [
    "ALGORITHMS",
    "COLLECTIVES",
    "Limit",
    "PerfError",
    "Prediction",
    "System",
    "bus_factor",
    "job_for",
    "predict_busbw",
    "predict_on",
    "ring_time_s",
    "sweep",
    "system_for",
]
