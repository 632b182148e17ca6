"""The blueprint schema version this tool reads: one string, importable without the models (the CLI's
help text names it; `blueprint migrate` upgrades older files to it; docs/schema-versions.md)."""

API_VERSION = "cluster-blueprint/v1"
