"""PLN rules: the physical plan can be built."""
