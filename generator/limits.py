"""Documented limits on the size of a design (docs/architecture.md, "Limits"), read by resolve and plan.

Just above the largest design the benchmarks cover (100k GPUs: 12,800 nodes, ~315k compute cables,
8,000 switches; validate 4 s and 350 MB), so that `validate` of any blueprint stays within seconds and
1 GB (benchmarks/hostile.py) while a hostile few-line blueprint is refused before any work is done.
"""

MAX_NODES = 16_384  # 131,072 GPUs at 8 per node
MAX_SWITCHES = 16_384  # per fabric
MAX_LINKS = 800_000  # all fabrics together

# A fabric builds at most max(IDLE_FLOOR, IDLE_FACTOR × what its nodes need) switches (dragonfly routers,
# torus/hypercube vertices), computed in closed form by resolve before anything is built. The absolute
# limits above let a 300-byte blueprint of 2 nodes ask for a 16,384-router dragonfly (508k links): it
# validated in 18 s and `generate` wrote 765 MB. The floor keeps small designs with spare groups (the
# TOP007 fixture: 264 routers for 16 needed); the 102,400-GPU dragonfly of benchmarks/run.py builds
# exactly the routers it needs.
#
# Output size: examples/roce-dragonfly.yaml (512 routers, 24,064 links) writes 36.7 MB, of which
# build/switches/ is 10.3 MB (about 20 KB per RoCE switch: startup.yaml or frr.conf) and build/cabling/
# 24.0 MB (about 1 KB per link over its CSV, labels, NetBox, expected-discovery and XLSX forms). So
# generate's output is bounded by about MAX_SWITCHES × 20 KB + MAX_LINKS × 1 KB ≈ 1.1 GB for the largest
# design inside the limits, and by the nodes' own needs (× IDLE_FACTOR) for any smaller one.
IDLE_FLOOR = 1_024
IDLE_FACTOR = 4
