from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import EXAMPLES, run_cli
from vendor_tables import dgx_h100_compute_ports

from generator.load import load_file
from generator.resolve import resolve


def test_reference_example_resolves() -> None:
    cluster = resolve(load_file(EXAMPLES / "superpod-h100-4su.yaml"))
    assert cluster.gpu_count == 127 * 8  # the RA's 127 DGX: one node slot carries the UFM appliances
    dgx = cluster.pools[0]
    table = dgx_h100_compute_ports()  # NVIDIA DGX H100/H200 User Guide, Table 6 (test data)
    compute = dgx.ports_for("compute")
    assert [p.rdma_dev for p in compute] == [r.rdma for r in table]
    assert [p.netdev for p in compute] == [r.netdev for r in table]
    # DGX H100 compute ports leave through 4 twin-port cages named OSFP<cage>P<port>
    assert [f"OSFP{p.cage}P{p.cage_port}" for p in compute] == [r.port for r in table]
    assert [p.faceplate for p in compute] == [r.port for r in table]


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


@pytest.mark.parametrize(
    ("server", "nodes"),
    [("gb200-nvl72-tray", 18), ("dgx-h100", 1)],
)
def test_nodes_per_nvlink_domain(server: str, nodes: int) -> None:
    """A GB200 NVL72 domain spans 18 trays of 4 GPUs (72 / 4); an 8-GPU NVSwitch box is its own domain."""
    from blueprints.catalog import default_catalog

    assert default_catalog().servers[server].nodes_per_nvlink_domain == nodes
