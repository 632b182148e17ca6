"""Per-target data for the Pulumi emitter: ``<target>.project(cluster, plan) -> Project``."""
