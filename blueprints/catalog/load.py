"""Loads the catalogue YAML into typed, frozen entries."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from blueprints.catalog.schema import (
    CloudImage,
    CloudInstance,
    FabricTech,
    Gpu,
    Interconnects,
    ManagedStorage,
    Medium,
    Nic,
    Platform,
    Server,
    SoftwareCompat,
    Switch,
    Transceiver,
)

DATA_DIR = Path(__file__).parent / "data"

E = TypeVar("E", bound=BaseModel)

SECTIONS: dict[str, type[BaseModel]] = {
    "gpus": Gpu,
    "fabrics": FabricTech,
    "nics": Nic,
    "switches": Switch,
    "media": Medium,
    "transceivers": Transceiver,
    "servers": Server,
    "platforms": Platform,
}


SINGULAR = {
    "gpus": "GPU",
    "fabrics": "fabric technology",
    "nics": "NIC",
    "switches": "switch",
    "media": "medium",
    "transceivers": "transceiver",
    "servers": "server",
    "platforms": "platform",
}


class CatalogError(Exception):
    """A catalogue entry is missing or malformed; ``hint`` suggests the nearest known name."""

    def __init__(self, message: str, hint: str | None = None, source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.source = source


def did_you_mean(name: str, choices: list[str] | tuple[str, ...] | Any) -> str | None:
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=3, cutoff=0.5)
    if not close:
        return None
    # equally close names (qm9700 / qm9790 for "qm970"): a name the typo starts is the likelier one
    best = max(
        close, key=lambda c: (difflib.SequenceMatcher(None, str(name), c).ratio(), c.startswith(str(name)))
    )
    return f"did you mean `{best}`?"


def _read_yaml(path: Path) -> Any:
    yaml = YAML(typ="safe", pure=True)
    try:
        with path.open("rb") as fh:
            return yaml.load(fh)
    except (OSError, YAMLError) as exc:
        raise CatalogError(f"cannot read catalogue file {path}: {exc}", source=str(path)) from exc


def _parse_section(section: str, raw: Mapping[str, Any], source: str) -> dict[str, BaseModel]:
    model = SECTIONS[section]
    out: dict[str, BaseModel] = {}
    for key, value in (raw or {}).items():
        try:
            out[str(key)] = model.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise CatalogError(f"catalogue {section}.{key}.{loc}: {first['msg']}", source=source) from exc
    return out


@dataclass(frozen=True)
class Catalog:
    gpus: Mapping[str, Gpu]
    interconnects: Interconnects
    fabrics: Mapping[str, FabricTech]
    nics: Mapping[str, Nic]
    switches: Mapping[str, Switch]
    media: Mapping[str, Medium]
    transceivers: Mapping[str, Transceiver]
    servers: Mapping[str, Server]
    cloud: Mapping[str, Mapping[str, CloudInstance]]
    sources: tuple[str, ...] = field(default=())
    managed_storage: Mapping[str, Mapping[str, ManagedStorage]] = field(default_factory=dict)
    images: Mapping[str, Mapping[str, CloudImage]] = field(default_factory=dict)
    # Port maps and vendor settings, keyed by server id or `provider/instance-type` (data/platforms.yaml).
    platforms: Mapping[str, Platform] = field(default_factory=dict)
    # GPU architecture / CUDA / driver compatibility (data/software.yaml).
    software: SoftwareCompat | None = None

    def _get(self, section: str, key: str) -> Any:
        table = getattr(self, section)
        if key in table:
            return table[key]
        raise CatalogError(
            f"unknown {SINGULAR.get(section, section)} `{key}`",
            hint=did_you_mean(key, sorted(table)),
        )

    def gpu(self, key: str) -> Gpu:
        return self._get("gpus", key)

    def fabric(self, key: str) -> FabricTech:
        return self._get("fabrics", key)

    def nic(self, key: str) -> Nic:
        return self._get("nics", key)

    def switch(self, key: str) -> Switch:
        return self._get("switches", key)

    def server(self, key: str) -> Server:
        return self._get("servers", key)

    def medium(self, key: str) -> Medium:
        return self._get("media", key)

    def cloud_instance(self, provider: str, instance_type: str) -> CloudInstance:
        if provider not in self.cloud:
            raise CatalogError(f"unknown cloud `{provider}`", hint=did_you_mean(provider, sorted(self.cloud)))
        table = self.cloud[provider]
        if instance_type not in table:
            raise CatalogError(
                f"unknown {provider} instance type `{instance_type}`",
                hint=did_you_mean(instance_type, sorted(table)) or f"known: {', '.join(sorted(table))}",
            )
        return table[instance_type]

    def extended(self, path: Path) -> Catalog:
        """A new catalogue with the user's entries from ``path`` added (same section layout)."""
        raw = _read_yaml(path)
        if not isinstance(raw, Mapping):
            raise CatalogError(f"{path}: a catalogue file is a mapping of sections", source=str(path))
        unknown = set(raw) - set(SECTIONS) - {"cloud"}
        if unknown:
            name = sorted(unknown)[0]
            raise CatalogError(
                f"{path}: unknown catalogue section `{name}`",
                hint=did_you_mean(name, [*SECTIONS, "cloud"]),
                source=str(path),
            )
        updates: dict[str, Any] = {}
        for section in SECTIONS:
            if section in raw:
                merged = dict(getattr(self, section))
                merged.update(_parse_section(section, raw[section], str(path)))
                updates[section] = merged
        if "cloud" in raw:
            cloud = {p: dict(t) for p, t in self.cloud.items()}
            for provider, table in (raw["cloud"] or {}).items():
                for key, value in (table or {}).items():
                    try:
                        cloud.setdefault(provider, {})[key] = CloudInstance.model_validate(value)
                    except ValidationError as exc:
                        raise CatalogError(
                            f"{path}: cloud.{provider}.{key}: {exc.errors()[0]['msg']}"
                        ) from exc
            updates["cloud"] = cloud
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__}
        fields.update(updates)
        fields["sources"] = (*self.sources, str(path))
        return Catalog(**fields)


@cache
def default_catalog() -> Catalog:
    sections = {s: _parse_section(s, _read_yaml(DATA_DIR / f"{s}.yaml"), s) for s in SECTIONS}
    inter = Interconnects.model_validate(_read_yaml(DATA_DIR / "interconnects.yaml"))
    cloud_raw = dict(_read_yaml(DATA_DIR / "cloud.yaml"))
    storage_raw = cloud_raw.pop("managed_storage", None) or {}  # not a provider: the clouds' file systems
    images_raw = cloud_raw.pop("images", None) or {}  # default boot images per cloud and OS
    cloud = {
        provider: {k: CloudInstance.model_validate(v) for k, v in table.items()}
        for provider, table in cloud_raw.items()
    }
    managed = {
        provider: {k: ManagedStorage.model_validate(v) for k, v in table.items()}
        for provider, table in storage_raw.items()
    }
    software = SoftwareCompat.model_validate(_read_yaml(DATA_DIR / "software.yaml"))
    return Catalog(
        interconnects=inter,
        software=software,
        cloud=cloud,
        sources=("builtin",),
        managed_storage=managed,  # type: ignore[arg-type]
        images={p: {k: CloudImage.model_validate(v) for k, v in t.items()} for p, t in images_raw.items()},
        **sections,
    )
