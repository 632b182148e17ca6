"""Platform facts the emitters share: host port names (port maps) and vendor-published settings."""
