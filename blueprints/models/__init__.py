"""Pydantic v2 models of a cluster blueprint (one module per domain)."""

from blueprints.api_version import API_VERSION
from blueprints.models.cluster import Blueprint, Suppression
from blueprints.models.deployment import CloudSettings, Deployment, MaasSettings
from blueprints.models.fabric import Fabric, Fabrics, Lossless, SubnetManager
from blueprints.models.nodes import NicSpec, NodePool, ServerSpec
from blueprints.models.site import Site
from blueprints.models.software import Software
from blueprints.models.storage import SharedStorage
from blueprints.models.topology import Dragonfly, FatTree, Hypercube, LeafSpine, Torus, parse_ratio
from blueprints.models.workload import Workload

__all__ = [
    "API_VERSION",
    "Blueprint",
    "CloudSettings",
    "Deployment",
    "Dragonfly",
    "Fabric",
    "Fabrics",
    "FatTree",
    "Hypercube",
    "LeafSpine",
    "Lossless",
    "MaasSettings",
    "NicSpec",
    "NodePool",
    "ServerSpec",
    "SharedStorage",
    "Site",
    "Software",
    "SubnetManager",
    "Suppression",
    "Torus",
    "Workload",
    "parse_ratio",
]
