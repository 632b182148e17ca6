"""TOP rules."""
