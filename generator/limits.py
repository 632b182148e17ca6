"""Documented limits on the size of a design (docs/architecture.md, "Limits"), read by resolve and plan.

Ten times the largest design the benchmarks cover (100k GPUs: 12,800 nodes, ~600k cables), so a real
cluster never meets them while a hostile few-line blueprint is refused before any work is done.
"""

MAX_NODES = 131_072
MAX_SWITCHES = 65_536  # per fabric
MAX_LINKS = 4_000_000  # per fabric
