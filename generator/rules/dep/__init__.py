"""DEP rules."""
