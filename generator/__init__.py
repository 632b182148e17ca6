"""cluster-blueprint: load → resolve → check → build → emit."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("cluster-blueprint")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"
