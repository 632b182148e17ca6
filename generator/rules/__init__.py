"""Performance and design rules: one module per rule, grouped by category."""
