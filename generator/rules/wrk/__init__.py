"""WRK rules."""
