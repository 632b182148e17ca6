"""Platform rules: host port names and vendor settings (catalogue port maps, declared ports)."""
