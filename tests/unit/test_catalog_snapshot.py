"""The catalogue's snapshots (blueprints/snapshot.py): a hit is what the loader makes, a change of a
data file or of the model code is a miss, and a directory that cannot be trusted or written costs only a
fresh load."""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from blueprints.catalog import advice, appliances, perf, subnet_managers, switch_os, workload
from blueprints.catalog.load import _load_default_catalog, cache_dir, default_catalog
from blueprints.snapshot import code_digest, snapshot, snapshot_key


class Loader:
    """A loader of one data file that counts its calls (a snapshot hit does not call it)."""

    def __init__(self, data: Path) -> None:
        self.data, self.calls = data, 0

    def __call__(self) -> dict[str, str]:
        self.calls += 1
        return {"text": self.data.read_text(encoding="utf-8")}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    return path


def where(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "cluster-blueprint" / "catalog"


def test_second_load_is_read_back_and_equal(tmp_path: Path, data: Path) -> None:
    load = Loader(data)
    first = snapshot(where(tmp_path), "doc", [data], dict, load)
    again = snapshot(where(tmp_path), "doc", [data], dict, load)
    assert load.calls == 1  # the second came from the file
    assert again == first == {"text": "a: 1\n"} and again is not first
    assert [p.name.split(".")[0] for p in where(tmp_path).glob("*.pickle")] == ["doc"]


def test_changed_data_file_is_loaded_again_and_replaces_the_old_snapshot(tmp_path: Path, data: Path) -> None:
    load = Loader(data)
    snapshot(where(tmp_path), "doc", [data], dict, load)
    data.write_text("a: 2\n", encoding="utf-8")  # same size, other bytes
    assert snapshot(where(tmp_path), "doc", [data], dict, load) == {"text": "a: 2\n"}
    assert load.calls == 2
    assert len(list(where(tmp_path).glob("doc.*.pickle"))) == 1  # the stale one removed


def test_key_covers_every_input() -> None:
    base = snapshot_key("doc", [b"ab", b"c"])
    assert snapshot_key("doc", [b"ab", b"c"]) == base
    assert snapshot_key("other", [b"ab", b"c"]) != base  # the loader
    assert snapshot_key("doc", [b"a", b"bc"]) != base  # file boundaries, not only the bytes
    assert snapshot_key("doc", [b"ab", b"d"]) != base


def test_code_digest_changes_with_any_module_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n", encoding="utf-8")
    (package / "sub" / "b.py").write_text("y = 1\n", encoding="utf-8")
    (package / "notes.txt").write_text("not code\n", encoding="utf-8")
    before = code_digest.__wrapped__(package)
    (package / "notes.txt").write_text("still not code\n", encoding="utf-8")
    assert code_digest.__wrapped__(package) == before
    (package / "sub" / "b.py").write_text("y = 2\n", encoding="utf-8")
    changed = code_digest.__wrapped__(package)
    assert changed != before
    (package / "sub" / "b.py").rename(package / "sub" / "c.py")  # a renamed module is other code
    assert code_digest.__wrapped__(package) != changed


def test_untrusted_directory_is_not_read(tmp_path: Path, data: Path) -> None:
    load = Loader(data)
    snapshot(where(tmp_path), "doc", [data], dict, load)
    (stored,) = where(tmp_path).glob("doc.*.pickle")
    stored.write_bytes(pickle.dumps({"text": "planted"}))
    os.chmod(where(tmp_path), 0o777)  # others could have written it: unpickling would run their code
    assert snapshot(where(tmp_path), "doc", [data], dict, load) == {"text": "a: 1\n"}
    assert load.calls == 2


@pytest.mark.parametrize("content", [b"", b"not a pickle", pickle.dumps(["a list, not the kind"])])
def test_damaged_or_foreign_snapshot_is_loaded_again(tmp_path: Path, data: Path, content: bytes) -> None:
    load = Loader(data)
    snapshot(where(tmp_path), "doc", [data], dict, load)
    (stored,) = where(tmp_path).glob("doc.*.pickle")
    stored.write_bytes(content)
    assert snapshot(where(tmp_path), "doc", [data], dict, load) == {"text": "a: 1\n"}
    assert load.calls == 2
    assert snapshot(where(tmp_path), "doc", [data], dict, load) == {"text": "a: 1\n"}  # rewritten
    assert load.calls == 2


def test_unwritable_or_missing_directory_only_costs_a_load(tmp_path: Path, data: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would be\n", encoding="utf-8")
    for place in (blocker / "catalog", None):
        load = Loader(data)
        assert snapshot(place, "doc", [data], dict, load) == {"text": "a: 1\n"}
        assert snapshot(place, "doc", [data], dict, load) == {"text": "a: 1\n"}
        assert load.calls == 2


def test_loader_errors_pass_through_and_nothing_is_stored(tmp_path: Path, data: Path) -> None:
    def broken() -> dict[str, str]:
        raise ValueError("a broken data file")

    with pytest.raises(ValueError, match="broken"):
        snapshot(where(tmp_path), "doc", [data], dict, broken)
    assert not list(where(tmp_path).glob("*.pickle")) if where(tmp_path).exists() else True


SHIPPED = [
    ("catalog", lambda: default_catalog.__wrapped__(), _load_default_catalog),
    ("perf", lambda: perf.perf_data.__wrapped__(), perf.load_perf),
    ("advice", lambda: advice.advice.__wrapped__(), lambda: advice.Advice.model_validate(_raw("advice"))),
    (
        "workload",
        lambda: workload.workload_factors.__wrapped__(),
        lambda: workload.WorkloadFactors.model_validate(_raw("workload")),
    ),
    (
        "switch_os",
        lambda: switch_os._document.__wrapped__(),
        lambda: switch_os._Document.model_validate(_raw("switch_os")),
    ),
    (
        "subnet_managers",
        lambda: subnet_managers._document.__wrapped__(),
        lambda: subnet_managers._Document.model_validate(_raw("subnet_managers")),
    ),
    (
        "appliances",
        lambda: appliances._document.__wrapped__(),
        lambda: appliances._Document.model_validate(_raw("appliances")),
    ),
]


def _raw(name: str) -> object:
    from blueprints.catalog.load import DATA_DIR, read_shipped

    return read_shipped(DATA_DIR / f"{name}.yaml")


@pytest.mark.parametrize(("name", "through_snapshot", "validate"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_documents_read_back_equal_a_fresh_validation(
    name: str, through_snapshot: object, validate: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    made = through_snapshot()  # type: ignore[operator]  # empty cache: validated, then stored
    stored = list(where(tmp_path).glob(f"{name}.*.pickle"))
    assert len(stored) == 1 and cache_dir() == where(tmp_path)
    read_back = through_snapshot()  # type: ignore[operator]
    assert read_back is not made
    fresh = validate()  # type: ignore[operator]
    assert read_back == fresh == made
    assert _same(read_back, fresh)  # field for field, with types and the fields set


def _same(a: object, b: object) -> bool:
    """Equal with the same types all the way down (1, 1.0 and True are not the same), and for models the
    same fields set (what `model_fields_set` readers see)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, BaseModel):
        assert isinstance(b, BaseModel)
        return a.model_fields_set == b.model_fields_set and all(
            _same(getattr(a, f), getattr(b, f)) for f in type(a).model_fields
        )
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple)
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_same_tells_types_values_and_fields_set_apart() -> None:
    class M(BaseModel):
        x: float = 1.0
        y: list[int] = []

    assert _same(M(), M()) and _same(M(x=2, y=[1]), M(x=2.0, y=[1]))
    assert not _same(M(), M(x=1.0))  # same values, another field set
    assert not _same(M(y=[1]), M(y=[2]))
    assert not _same({"a": 1}, {"a": 1.0}) and not _same({"a": 1, "b": 2}, {"b": 2, "a": 1})


def test_model_field_docs_read_back_equal_a_fresh_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import blueprints.models as models
    from blueprints.models import field_docs

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    modules = sorted(
        m for m in sys.modules if m.startswith(models.__name__ + ".") and m != field_docs.__name__
    )
    assert len(modules) >= 10
    for module in modules:
        made = field_docs._class_docs.__wrapped__(module)  # empty cache: parsed, then stored
        again = field_docs._class_docs.__wrapped__(module)  # read back
        assert again == made == field_docs._parse_docs(sys.modules[module].__file__)  # type: ignore[arg-type]
    stored = list((tmp_path / "cache" / "cluster-blueprint" / "models").glob("docs_*.pickle"))
    assert len(stored) == sum(1 for m in modules if sys.modules[m].__file__)
    assert any(field_docs._class_docs.__wrapped__(m) for m in modules)  # the models do document fields
