"""The hardware catalogue: GPUs, interconnects, fabrics, NICs, switches, media, servers, clouds.

Data lives in ``data/*.yaml`` (one file per section, every figure with its source beside it).
Users add entries from their own YAML file with the same sections (``Catalog.extended``).
"""

from blueprints.catalog.load import Catalog, CatalogError, default_catalog

__all__ = ["Catalog", "CatalogError", "default_catalog"]
