"""NET rules."""
