"""The article's advice as numbers (``data/advice.yaml``): server limits, topology and fabric by scale."""

from functools import cache

from pydantic import BaseModel, ConfigDict

from blueprints.catalog.load import validated_file


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use


class ScaleRange(_Entry):
    min_nodes: int
    max_nodes: int | None

    def holds(self, nodes: int) -> bool:
        return nodes >= self.min_nodes and (self.max_nodes is None or nodes <= self.max_nodes)

    def text(self) -> str:
        if self.max_nodes is None:
            return f"{self.min_nodes} nodes or more"
        return f"{self.min_nodes}–{self.max_nodes} nodes"


class Advice(_Entry):
    max_gpus_per_server: int
    node_memory_class_gb: float
    rack_scale_nvlink_domain_gpus: int
    small_cluster_nodes: int
    dragonfly_above_nodes: int
    nvlink_to_injection_ratio: float
    large_model_params: float
    topology_scale: dict[str, ScaleRange]


@cache
def advice() -> Advice:
    return validated_file(Advice, "advice.yaml")
