"""Documented limits on the size of a design (docs/architecture.md, "Limits"), read by resolve and plan.

Just above the largest design the benchmarks cover (100k GPUs: 12,800 nodes, ~315k compute cables,
8,000 switches; validate 4 s and 350 MB), so that `validate` of any blueprint stays within seconds and
1 GB (benchmarks/hostile.py) while a hostile few-line blueprint is refused before any work is done.
"""

MAX_NODES = 16_384  # 131,072 GPUs at 8 per node
MAX_SWITCHES = 16_384  # per fabric
MAX_LINKS = 800_000  # all fabrics together
