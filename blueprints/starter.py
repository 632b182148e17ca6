"""What a design starts from when the user names nothing else (`blueprint advise`, `blueprint init`).

One home for these defaults: the advisor's request, the advice reader and the commands' options read them
here (a module with no imports, so the CLI can name the default in `--help` without loading the
catalogue).
"""

from __future__ import annotations

# The GPU of NVIDIA's DGX H100 SuperPOD reference architecture, the design the advisor's rack policy comes
# from (catalogue perf.yaml advisor.rack_power_kw and rack_units cite it); a catalogue id of data/gpus.yaml
# (tests/unit/test_starter_defaults.py checks it is one).
STARTER_GPU = "h100-sxm"
