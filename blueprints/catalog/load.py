"""Loads the catalogue YAML into typed, frozen entries."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from blueprints.catalog.schema import (
    CATALOG_ID_RE,
    AccessPath,
    CloudImage,
    CloudInstance,
    DriverPackages,
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
from blueprints.snapshot import cache_root, private_dir, snapshot

DATA_DIR = Path(__file__).parent / "data"

E = TypeVar("E", bound=BaseModel)
T = TypeVar("T")

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


MAX_CATALOG_BYTES = 1024 * 1024  # the built-in catalogue is ~60 KB; an extension is a few entries
MAX_CATALOG_NODES = 50_000  # bounds alias expansion and absurd documents
MAX_CATALOG_DEPTH = 12  # section > table > entry > field > value is 5 deep


class CatalogError(Exception):
    """A catalogue entry is missing or malformed; ``hint`` suggests the nearest known name.

    ``source`` is the catalogue file and ``line``/``column`` (1-based) the offending spot when known.
    """

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.source = source
        self.line = line
        self.column = column


def did_you_mean(name: str, choices: list[str] | tuple[str, ...] | Any) -> str | None:
    import difflib  # only for a name the catalogue lacks

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=3, cutoff=0.5)
    if not close:
        return None
    # equally close names (qm9700 / qm9790 for "qm970"): a name the typo starts is the likelier one
    best = max(
        close, key=lambda c: (difflib.SequenceMatcher(None, str(name), c).ratio(), c.startswith(str(name)))
    )
    return f"did you mean `{best}`?"


def missing_hint(key: str, section: str, table: Mapping[str, Any]) -> str:
    """What to do about an id the catalogue lacks: the same family's entries first (an unknown
    `a100-pcie` means an A100, not an `h100-pcie`), else the closest spelling; and always how to add
    one's own hardware, since a missing entry is as likely as a typo."""
    family = str(key).split("-")[0].lower()
    # a first token with a digit is a model (a100, h100, qm9700); a bare word (dgx, pcie) is not
    model = any(ch.isdigit() for ch in family)
    same = sorted(k for k in table if str(k).split("-")[0].lower() == family) if model else []
    if same:
        guess = "did you mean " + " or ".join(f"`{k}`" for k in same[:4]) + "?"
    else:
        guess = did_you_mean(key, sorted(table)) or ""
    known = f"known ids: `blueprint catalog {section}`"
    add = f"your own hardware goes in a side file named by `catalog:` in the blueprint (section `{section}`)"
    return f"{guess} ({known}); {add}" if guess else f"{known}; {add}"


def read_shipped(path: Path) -> Any:
    """A shipped data file, from the parse cache when it has it (each reader reads its file once)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CatalogError(f"cannot read catalogue file {path}: {exc}", source=str(path)) from exc
    return read_data(data, str(path))


def read_data(data: bytes, source: str) -> Any:
    """The YAML document in ``data`` exactly as ruamel's safe loader gives it.

    The pure-Python parser costs ~0.3 s per process for the shipped files, so its result is kept in
    the user's cache directory as JSON, keyed by a hash of the bytes and of the parser's own files:
    a changed catalogue or a new ruamel is parsed again. The cache is only ever a copy of a parse
    (never a second parser), and anything it cannot hold exactly (a date, a set) is not cached.
    Each call returns a new object, as a parse does, so a caller may change what it gets.
    """
    key = _cache_key(data)
    cached = _cache_read(key)
    if cached is not _MISSING:
        return cached
    from ruamel.yaml import YAML  # only on a cache miss: a command reading the cache never imports it
    from ruamel.yaml.error import YAMLError

    try:
        doc = YAML(typ="safe", pure=True).load(data)
    except YAMLError as exc:
        raise CatalogError(f"cannot read catalogue file {source}: {exc}", source=source) from exc
    _cache_write(key, doc)
    return doc


# --- parse cache ---------------------------------------------------------------------------------
# JSON keeps str/int/float/bool/None, lists and str-keyed mappings exactly (floats by repr, which
# round-trips: https://docs.python.org/3/library/json.html#json.dumps uses float.__repr__). Mappings
# with other keys (`400:` speeds) are written as {PAIRS: [[key, value], ...]} so their key types survive.

CACHE_FORMAT = "1"
PAIRS = "\x00pairs"  # a str-keyed mapping that has this key is written as pairs too, so stays exact
_MISSING = object()


def cache_dir() -> Path | None:
    """$XDG_CACHE_HOME/cluster-blueprint/catalog (blueprints/snapshot.py ``cache_root``)."""
    root = cache_root()
    return None if root is None else root / "catalog"


def _cache_key(data: bytes) -> str:
    digest = hashlib.sha256(CACHE_FORMAT.encode())
    digest.update(_parser_identity().encode())
    digest.update(data)
    return digest.hexdigest()


@cache
def _parser_identity() -> str:
    """ruamel.yaml's version without importing it (the import alone costs a tenth of a second)."""
    from importlib.util import find_spec

    try:
        spec = find_spec("ruamel.yaml")
        origin = spec.origin if spec is not None else None
        st = os.stat(origin) if origin else None
    except (ImportError, ValueError, OSError):
        return "unknown"
    return f"{origin}:{st.st_size}:{st.st_mtime_ns}" if st else "unknown"


def _cache_read(key: str) -> Any:
    where = cache_dir()
    if where is None or not private_dir(where):
        return _MISSING
    try:
        with open(where / f"{key}.json", encoding="utf-8") as fh:
            return json.load(fh, object_hook=_decode)
    except (OSError, ValueError, TypeError, RecursionError):
        return _MISSING  # no cache yet, or a damaged one: parse (and rewrite it)


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and PAIRS in obj:
        return {k: v for k, v in obj[PAIRS]}
    return obj


def _encode(node: Any) -> Any:
    """``node`` in the cache's JSON form; TypeError when JSON cannot keep it exactly."""
    if isinstance(node, dict):
        if all(type(k) is str for k in node) and PAIRS not in node:
            return {k: _encode(v) for k, v in node.items()}
        if not all(k is None or type(k) in (str, int, float, bool) for k in node):
            raise TypeError("a mapping key JSON cannot keep")
        return {PAIRS: [[k, _encode(v)] for k, v in node.items()]}
    if isinstance(node, list):
        return [_encode(v) for v in node]
    if node is None or type(node) in (str, int, float, bool):
        return node
    raise TypeError(f"{type(node).__name__} is not kept by the cache")


def _cache_write(key: str, doc: Any) -> None:
    where = cache_dir()
    if where is None:
        return
    try:
        text = json.dumps(_encode(doc), ensure_ascii=False)
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not private_dir(where):
            return
        import tempfile  # only on a cache miss

        fd, tmp = tempfile.mkstemp(dir=where, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, where / f"{key}.json")  # whole or not at all, also with concurrent writers
    except (OSError, TypeError, ValueError, RecursionError):
        return  # an unwritable or full cache directory only costs the next process a parse


def _read_user_yaml(path: Path) -> Any:
    """A user's catalogue file: a regular file of bounded size, parsed keeping positions (ruamel rt)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise CatalogError(f"cannot read catalogue file {path}: {exc.strerror}", source=str(path)) from exc
    if not stat.S_ISREG(st.st_mode):
        raise CatalogError(f"catalogue file {path} is not a regular file", source=str(path))
    if st.st_size > MAX_CATALOG_BYTES:
        raise CatalogError(
            f"catalogue file {path} is {st.st_size:,} bytes; the limit is {MAX_CATALOG_BYTES:,}",
            source=str(path),
        )
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CATALOG_BYTES + 1)
        text = data[:MAX_CATALOG_BYTES].decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read catalogue file {path}: {exc}", source=str(path)) from exc
    line, column = _flow_too_deep(text)  # before parsing: the scanner is quadratic in flow depth
    if line is not None:
        raise CatalogError(
            f"catalogue file {path}: nesting too deep", source=str(path), line=line, column=column
        )
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    try:
        doc = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise CatalogError(
            f"YAML syntax error in catalogue file {path}: {problem}",
            source=str(path),
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        ) from None
    except RecursionError:
        line, column = _flow_too_deep(text)
        raise CatalogError(
            f"catalogue file {path}: nesting too deep", source=str(path), line=line, column=column
        ) from None
    except (YAMLError, ValueError, TypeError) as exc:
        huge = re.search(r"\d{4000,}", text)  # the one unmarked ValueError: an int too long to convert
        line, column = _offset_position(text, huge.start()) if huge else (None, None)
        raise CatalogError(
            f"cannot read catalogue file {path}: {exc}", source=str(path), line=line, column=column
        ) from None
    _check_shape(doc, path)
    return doc


_FLOW_TOKEN = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|#[^\n]*|[\[\]{}]""")


def _flow_too_deep(text: str) -> tuple[int | None, int | None]:
    """Line and column where flow nesting (``[[[...``) passes MAX_CATALOG_DEPTH, if it does."""
    depth = 0
    for m in _FLOW_TOKEN.finditer(text):  # quoted scalars and comments are skipped, brackets counted
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > MAX_CATALOG_DEPTH:
                return _offset_position(text, m.start())
        elif token in "]}":
            depth = max(0, depth - 1)
    return None, None


def _offset_position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _check_shape(doc: Any, path: Path) -> None:
    """Bounded depth and size (aliases count every time they are used), without recursion."""
    stack: list[tuple[Any, int, Any]] = [(doc, 0, doc)]
    seen = 0
    while stack:
        node, depth, container = stack.pop()
        seen += 1
        if seen > MAX_CATALOG_NODES or depth > MAX_CATALOG_DEPTH:
            line, column = _position(container)
            what = (
                f"more than {MAX_CATALOG_NODES:,} values" if seen > MAX_CATALOG_NODES else "nesting too deep"
            )
            raise CatalogError(f"catalogue file {path}: {what}", source=str(path), line=line, column=column)
        if isinstance(node, Mapping):
            stack.extend((v, depth + 1, node) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1, node) for v in node)


def _to_plain(node: Any) -> Any:
    """ruamel's round-trip types as plain dict/list/str/int/float (depth already bounded)."""
    if isinstance(node, Mapping):
        return {_to_plain(k): _to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_to_plain(v) for v in node]
    if isinstance(node, str):
        return str(node)
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return node


def _position(node: Any, key: Any = None) -> tuple[int | None, int | None]:
    """1-based line/column of ``key`` in the mapping ``node`` (or of the node itself), if ruamel kept it."""
    lc = getattr(node, "lc", None)
    if lc is None:
        return None, None
    try:
        line, col = lc.key(key) if key is not None else (lc.line, lc.col)
    except (KeyError, TypeError, AttributeError):
        line, col = lc.line, lc.col
    return line + 1, col + 1


def _error_at(message: str, source: str, node: Any, key: Any = None, hint: str | None = None) -> CatalogError:
    line, column = _position(node, key)
    return CatalogError(message, hint=hint, source=source, line=line, column=column)


def _table(raw: Any, where: str, source: str, parent: Any, key: Any) -> Mapping[str, Any]:
    """``raw`` as a mapping of entries (None = empty), or a located error."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _error_at(
            f"catalogue {where}: expected a mapping of entries, "
            f"got {'a list' if isinstance(raw, list) else 'a scalar'}",
            source,
            parent,
            key,
        )
    return raw


# Port maps are keyed by server id or by cloud instance type as provider/type (oci/BM.GPU.H100.8).
PLATFORM_ID_RE = r"^(?:[A-Za-z0-9][A-Za-z0-9._+-]{0,63}/)?[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"


def _entry(model: type[E], where: str, key: Any, value: Any, source: str, table: Any) -> E:
    id_re = PLATFORM_ID_RE if where == "platforms" else CATALOG_ID_RE
    if not isinstance(key, str) or not re.fullmatch(id_re, key):
        raise _error_at(f"catalogue {where}: id {str(key)[:80]!r} must match {id_re}", source, table, key)
    return _validated(model, f"{where}.{key}", value, source, table, key)


def _validated(model: type[E], where: str, value: Any, source: str, table: Any, key: Any) -> E:
    """``value`` as ``model``, or an error located at the offending field (else at ``key`` in ``table``)."""
    try:
        return model.model_validate(_to_plain(value))
    except ValidationError as exc:
        first = exc.errors()[0]
        field_path: tuple[Any, ...] = tuple(first["loc"]) or _field_named(first["msg"])
        loc = ".".join(str(p) for p in first["loc"])
        node, field_key = _deepest(value, field_path)
        raise _error_at(
            f"catalogue {where}{'.' + loc if loc else ''}: {first['msg']}",
            source,
            node if node is not None else table,
            field_key if node is not None else key,
        ) from exc


def _field_named(msg: str) -> tuple[str, ...]:
    """The field an entry-level check names first (``Value error, power_w: ...``), for its position."""
    m = re.match(r"Value error, ([A-Za-z_]+(?:\.[A-Za-z_]+)*)", msg)  # a nested key too: port_layout.up
    return tuple(m.group(1).split(".")) if m else ()


def _deepest(value: Any, loc: tuple[Any, ...]) -> tuple[Any, Any]:
    """The innermost mapping on ``loc`` that has position data, and the key inside it."""
    node, key = None, None
    cur = value
    for part in loc:
        if isinstance(cur, Mapping) and part in cur:
            node, key = cur, part
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            cur = cur[part]
        else:
            break
    return node, key


def _parse_section(section: str, raw: Any, source: str, parent: Any = None) -> dict[str, BaseModel]:
    model = SECTIONS[section]
    table = _table(raw, section, source, parent, section)
    return {str(key): _entry(model, section, key, value, source, table) for key, value in table.items()}


@dataclass(frozen=True)
class Catalog:
    """The hardware catalogue: the shipped entries, and a user's `catalog:` file's when extended."""

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
    access: Mapping[str, AccessPath] = field(default_factory=dict)
    # Port maps and vendor settings, keyed by server id or `provider/instance-type` (data/platforms.yaml).
    platforms: Mapping[str, Platform] = field(default_factory=dict)
    # GPU architecture / CUDA / driver compatibility (data/software.yaml).
    software: SoftwareCompat | None = None

    def _get(self, section: str, key: str) -> Any:
        table = getattr(self, section)
        if key in table:
            return table[key]
        raise CatalogError(
            f"unknown {SINGULAR.get(section, section)} `{key}`", hint=missing_hint(key, section, table)
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
        raw = _read_user_yaml(path)
        source = str(path)
        if not isinstance(raw, Mapping):
            raise _error_at(f"{path}: a catalogue file is a mapping of sections", source, raw)
        unknown = set(map(str, raw)) - set(SECTIONS) - {"cloud", "software"}
        if unknown:
            name = sorted(unknown)[0]
            raise _error_at(
                f"{path}: unknown catalogue section `{name[:80]}`",
                source,
                raw,
                name,
                hint=did_you_mean(name, [*SECTIONS, "cloud", "software"]),
            )
        updates: dict[str, Any] = {}
        for section in SECTIONS:
            if section in raw:
                merged = dict(getattr(self, section))
                merged.update(_parse_section(section, raw[section], source, raw))
                updates[section] = merged
        if "cloud" in raw:
            cloud = {p: dict(t) for p, t in self.cloud.items()}
            providers = _table(raw["cloud"], "cloud", source, raw, "cloud")
            for provider, table in providers.items():
                where = f"cloud.{provider}"
                if not isinstance(provider, str) or not re.fullmatch(CATALOG_ID_RE, provider):
                    raise _error_at(
                        f"catalogue cloud: provider {str(provider)[:80]!r} is not an id",
                        source,
                        providers,
                        provider,
                    )
                entries = _table(table, where, source, providers, provider)
                for key, value in entries.items():
                    cloud.setdefault(provider, {})[key] = _entry(
                        CloudInstance, where, key, value, source, entries
                    )
            updates["cloud"] = cloud
        if "software" in raw:
            updates["software"] = _software_extension(self.software, raw, source)
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__}
        fields.update(updates)
        fields["sources"] = (*self.sources, str(path))
        return Catalog(**fields)


# What a catalogue extension's `software:` section may hold: a site's own driver_packages entries, which come
# before the shipped ones, so an entry naming an OS replaces the shipped entry for that OS.
SOFTWARE_EXTENSIONS = ("driver_packages",)


def _software_extension(current: SoftwareCompat | None, raw: Any, source: str) -> SoftwareCompat:
    section = _table(raw["software"], "software", source, raw, "software")
    for name in section:
        if name not in SOFTWARE_EXTENSIONS:
            raise _error_at(
                f"catalogue software: `{str(name)[:80]}` cannot be extended "
                f"(only {', '.join(SOFTWARE_EXTENSIONS)})",
                source,
                section,
                name,
                hint=did_you_mean(str(name), SOFTWARE_EXTENSIONS),
            )
    if current is None:
        raise _error_at(
            "catalogue software: this catalogue has no software facts to extend", source, raw, "software"
        )
    entries = section.get("driver_packages") or []
    if not isinstance(entries, list):
        raise _error_at(
            "catalogue software.driver_packages: expected a list", source, section, "driver_packages"
        )
    own = tuple(
        _validated(DriverPackages, f"software.driver_packages[{i}]", e, source, entries, i)
        for i, e in enumerate(entries)
    )
    return current.model_copy(update={"driver_packages": (*own, *current.driver_packages)})


def shipped(name: str, files: list[str], kind: type[T], load: Callable[[], T]) -> T:
    """What ``load()`` makes of the shipped data ``files`` (names in DATA_DIR), validated once per change
    of them or of the models, not once per process (blueprints/snapshot.py)."""
    return snapshot(cache_dir(), name, [DATA_DIR / f for f in files], kind, load)


def validated_file(kind: type[E], file: str) -> E:
    """The shipped document ``file`` (in DATA_DIR) validated as ``kind``, through its snapshot."""
    return shipped(
        file.removesuffix(".yaml"), [file], kind, lambda: kind.model_validate(read_shipped(DATA_DIR / file))
    )


CATALOG_FILES = [*(f"{s}.yaml" for s in SECTIONS), "interconnects.yaml", "cloud.yaml", "software.yaml"]


@cache
def default_catalog() -> Catalog:
    return shipped("catalog", CATALOG_FILES, Catalog, _load_default_catalog)


def _load_default_catalog() -> Catalog:
    # each section's table of its own model (Gpu, Nic, ...): typed by the Catalog fields they fill
    sections: dict[str, Any] = {
        s: _parse_section(s, read_shipped(DATA_DIR / f"{s}.yaml"), s) for s in SECTIONS
    }
    inter = Interconnects.model_validate(read_shipped(DATA_DIR / "interconnects.yaml"))
    cloud_raw = dict(read_shipped(DATA_DIR / "cloud.yaml"))
    storage_raw = cloud_raw.pop("managed_storage", None) or {}  # not a provider: the clouds' file systems
    images_raw = cloud_raw.pop("images", None) or {}  # default boot images per cloud and OS
    access_raw = cloud_raw.pop("access", None) or {}  # documented ways into private nodes (SSM, IAP)
    cloud = {
        provider: {k: CloudInstance.model_validate(v) for k, v in table.items()}
        for provider, table in cloud_raw.items()
    }
    managed = {
        provider: {k: ManagedStorage.model_validate(v) for k, v in table.items()}
        for provider, table in storage_raw.items()
    }
    software = SoftwareCompat.model_validate(read_shipped(DATA_DIR / "software.yaml"))
    return Catalog(
        interconnects=inter,
        software=software,
        cloud=cloud,
        sources=("builtin",),
        managed_storage=managed,
        images={p: {k: CloudImage.model_validate(v) for k, v in t.items()} for p, t in images_raw.items()},
        access={k: AccessPath.model_validate(v) for k, v in access_raw.items()},
        **sections,
    )
