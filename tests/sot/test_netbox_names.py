"""The NetBox files name things as the site will: OS interface names from the port map with the RDMA
device as label, mgmt_only on BMC ports alone, devicetype-library slugs for the models it has."""

from __future__ import annotations

import csv
from pathlib import Path

from conftest import EXAMPLES, run_cli
from generator.emit.cabling.netbox import DEVICETYPE_LIBRARY


def netbox_files(tmp_path: Path, example: str) -> dict[str, list[dict[str, str]]]:
    out = tmp_path / "nb"
    code, _, err = run_cli("cabling", str(EXAMPLES / example), "--format", "netbox", "-o", str(out))
    assert code == 0, err
    tables = {}
    for path in out.iterdir():
        with open(path, newline="") as fh:
            tables[path.name] = list(csv.DictReader(fh))
    return tables


def test_port_map_names_rdma_labels_and_out_of_band_only(tmp_path: Path) -> None:
    t = netbox_files(tmp_path, "maas-onprem-h100.yaml")  # DGX H100: the catalogue has its port map
    dgx = next(r["model"] for r in t["device-types.csv"] if r["slug"] == "dgx-h100")
    nodes = {r["name"] for r in t["devices.csv"] if r["device_type"] == dgx}
    node_ifaces = [r for r in t["interfaces.csv"] if r["device"] in nodes]
    rdma = [r for r in node_ifaces if r["label"].startswith("mlx5_")]
    assert rdma, "no RDMA ports on the DGX nodes"
    # the OS interface (ibp220s0, enp170s0f0np0), never the RDMA port, is the name; servers without a
    # port map in the catalogue (head and storage nodes here) keep the RDMA port: no name is made up
    assert all(not r["name"].startswith("mlx5_") and r["name"][:2] in ("ib", "en") for r in rdma)
    # only the BMC port is out-of-band; an RDMA port (in-band or storage) never is
    out_of_band = {r["name"] for r in node_ifaces if r["mgmt_only"] == "true"}
    assert out_of_band == {"BMC"}
    assert all(r["mgmt_only"] == "false" for r in rdma)
    # every GPU node has exactly one BMC port
    assert sum(r["mgmt_only"] == "true" for r in node_ifaces) == len(nodes)


def test_library_device_types_keep_the_library_slug(tmp_path: Path) -> None:
    t = netbox_files(tmp_path, "maas-onprem-h100.yaml")
    types = {r["slug"]: r for r in t["device-types.csv"]}
    library = {slug: model for model, slug in DEVICETYPE_LIBRARY.values()}
    used = set(types) & set(library)
    assert used, sorted(types)
    for slug in used:
        assert types[slug]["model"] == library[slug]
    # devices refer to the type by its model name, as NetBox's device import expects
    models = {r["model"] for r in t["device-types.csv"]}
    assert {r["device_type"] for r in t["devices.csv"]} <= models
