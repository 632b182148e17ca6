"""cluster-blueprint: load → resolve → check → build → emit."""

from __future__ import annotations

import os
import sys

DIST_NAME = "cluster-blueprint"
SOURCE_VERSION = "0.0.0+source"  # running from a source tree without an install


def installed_version() -> str:
    """The installed distribution's version, read without importing importlib.metadata if possible.

    importlib.metadata (with email, zipfile, csv) costs more CPU than the rest of `blueprint --version`
    together, so the ``*.dist-info/METADATA`` file (the core metadata format, whose ``Version:`` header
    is required: https://packaging.python.org/en/latest/specifications/core-metadata/) is read
    directly from the first sys.path entry holding it, the same search order importlib.metadata uses.
    Anything unusual (an egg, a zip import, no header) falls back to importlib.metadata.
    """
    prefix = DIST_NAME.replace("-", "_") + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if not name.lower().startswith(prefix):
                continue
            if name.endswith(".dist-info"):
                found = _metadata_version(os.path.join(entry or ".", name, "METADATA"))
                return found if found is not None else _metadata_library_version()
            if name.endswith(".egg-info"):
                return _metadata_library_version()
    return _metadata_library_version()


def _metadata_version(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    return None  # end of the headers; no Version: header
                if line.lower().startswith("version:"):
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        return None
    return None


def _metadata_library_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST_NAME)
    except PackageNotFoundError:
        return SOURCE_VERSION


def __getattr__(name: str) -> str:
    # PEP 562: __version__ is computed on first use, so importing generator costs no metadata lookup.
    if name == "__version__":
        value = installed_version()
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
