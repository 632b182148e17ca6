"""PRF: performance rules from the collective and training-step model (generator/perf)."""
