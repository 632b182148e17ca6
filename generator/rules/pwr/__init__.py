"""PWR rules."""
