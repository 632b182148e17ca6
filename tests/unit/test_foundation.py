from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import EXAMPLES, run_cli

from generator.load import load_file
from generator.resolve import resolve


def test_reference_example_resolves() -> None:
    cluster = resolve(load_file(EXAMPLES / "superpod-h100-4su.yaml"))
    assert cluster.gpu_count == 1024
    dgx = cluster.pools[0]
    rails = [p.rdma_dev for p in dgx.ports_for("compute")]
    assert rails == [f"mlx5_{i}" for i in range(8)]
    # DGX H100 compute ports leave through 4 twin-port cages
    assert [(p.cage, p.cage_port) for p in dgx.ports_for("compute")][:3] == [(1, 1), (1, 2), (2, 1)]


def test_schema_validates_every_example(examples) -> None:
    code, out, _ = run_cli("schema")
    assert code == 0
    schema = json.loads(out)
    from ruamel.yaml import YAML

    for path in examples:
        data = YAML(typ="safe", pure=True).load(path.read_text())
        jsonschema.validate(data, schema)


def test_validate_every_example_exit_zero(examples) -> None:
    assert examples, "examples/ is empty"
    for path in examples:
        code, out, err = run_cli("validate", str(path))
        assert code == 0, f"{path}: {out}{err}"


@pytest.mark.parametrize("section", ["gpus", "switches", "nics", "cables"])
def test_catalog_sections(section: str) -> None:
    code, out, _ = run_cli("catalog", section, "--format", "json")
    assert code == 0
    assert json.loads(out)


def test_committed_schema_is_current() -> None:
    """examples/ point editors at ../blueprint.schema.json; regenerate it with `blueprint schema -o blueprint.schema.json`."""
    code, out, _ = run_cli("schema")
    assert code == 0
    committed = (EXAMPLES.parent / "blueprint.schema.json").read_text()
    assert json.loads(committed) == json.loads(out)
