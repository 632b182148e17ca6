"""GPU rules."""
