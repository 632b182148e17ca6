"""What `validate` says of a blueprint is what `generate` does with it (one truth per fact).

Each case is an example with one change a user could make. Before, `validate` passed each of them and
`generate` crashed (exit 3), refused it (exit 2), or built something the rules had not checked (ports past a
switch's last, two devices of one name, a storage mount dropped), or the two disagreed on a number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, run_cli
from ruamel.yaml import YAML


def _variant(tmp_path: Path, example: str, change: Callable[[dict[str, Any]], None]) -> Path:
    yaml = YAML(typ="safe", pure=True)
    doc = yaml.load((EXAMPLES / f"{example}.yaml").read_text())
    change(doc)
    path = tmp_path / f"{example}-variant.yaml"
    with path.open("w") as fh:
        yaml.dump(doc, fh)
    return path


def _validate(path: Path) -> tuple[int, str]:
    code, out, err = run_cli("validate", str(path))
    return code, out + err


def _generate(path: Path, out: Path) -> tuple[int, str]:
    code, stdout, err = run_cli("generate", str(path), "-o", str(out), "--quiet")
    return code, stdout + err


def test_a_guard_rule_cannot_be_suppressed_into_a_crash(tmp_path: Path) -> None:
    """DEP010 suppressed let a /28 VPC through validate; generate then died on StopIteration (exit 3)."""

    def change(doc: dict[str, Any]) -> None:
        doc["deployment"]["cloud"]["network_cidr"] = "10.0.0.0/28"
        doc["suppress"] = [{"rule": "DEP010", "reason": "probe"}]

    path = _variant(tmp_path, "aws-p5-efa", change)
    code, text = _validate(path)
    assert code == 1 and "DEP010" in text and "SUP001" in text
    code, text = _generate(path, tmp_path / "build")
    assert code in (1, 2) and "internal error" not in text and not (tmp_path / "build").exists()


def test_switched_hypercube_counts_every_node_port(tmp_path: Path) -> None:
    """19 two-port nodes and 4 links need 42 ports of a 40-port QM8700: TOP013 said so, but the builder counted
    one port a node, so `plan` drew 672 ports on 640 and generate (TOP013 suppressed) cabled ports 41-42."""

    def change(doc: dict[str, Any]) -> None:
        doc["pools"][0]["count"] = 304
        doc["site"]["racks_per_row"] = 100
        doc["fabrics"]["compute"]["topology"]["nodes_per_switch"] = 19

    path = _variant(tmp_path, "hypercube-research", change)
    code, text = _validate(path)
    assert code == 1 and "19 nodes × 2 ports + 4 neighbour links = 42 ports" in text
    code, out, err = run_cli("plan", str(path))
    assert code == 2 and "19 nodes x 2 ports + 4 hypercube ports = 42" in out + err


def test_appliance_names_are_not_host_or_switch_names(tmp_path: Path) -> None:
    for name in ("dgx001", "s-leaf-su1-01"):

        def change(doc: dict[str, Any], name: str = name) -> None:
            doc["appliances"] = [{"name": name, "fabric": "storage", "ports": 1}]

        path = _variant(tmp_path, "maas-onprem-h100", change)
        code, text = _validate(path)
        assert code == 1 and f"appliance `{name}`: the name is also a" in text, text


def test_appliances_of_one_model_with_two_heights_build(tmp_path: Path) -> None:
    """NetBox holds one height per device type: a 1U ufm01 beside an undeclared ufm02 was exit 3."""

    def change(doc: dict[str, Any]) -> None:
        doc["appliances"][0].update(rack_units=1, power_w=500)

    path = _variant(tmp_path, "superpod-h100-4su", change)
    assert _validate(path)[0] == 0
    code, text = _generate(path, tmp_path / "build")
    assert code == 0, text
    rows = list(csv.DictReader(io.StringIO((tmp_path / "build/cabling/netbox/device-types.csv").read_text())))
    ufm = [r for r in rows if r["model"].startswith("ufm-enterprise-appliance-3")]
    assert sorted(r["u_height"] for r in ufm) == ["0", "1"] and len({r["slug"] for r in ufm}) == 2


def test_a_plan_that_cannot_be_built_is_refused_by_validate_suppressed_or_not(tmp_path: Path) -> None:
    """PLN001 could be suppressed: validate passed an appliance with no switch to cable to, and generate, which
    builds the plan whatever the rules say, refused it (found by a fuzzing review)."""

    def change(doc: dict[str, Any]) -> None:
        doc["pools"] = [{"name": "dgx", "role": "gpu", "count": 1, "server": "dgx-h100"}]
        doc.pop("fabrics", None)
        doc["appliances"] = [{"name": "ap1", "fabric": "compute", "ports": 1}]
        doc["suppress"] = [{"rule": "PLN001", "reason": "known, fixing later"}]

    path = _variant(tmp_path, "single-dgx-h100", change)
    code, text = _validate(path)
    assert code == 1 and "PLN001" in text and "appliance `ap1`" in text and "SUP001" in text, text
    code, text = _generate(path, tmp_path / "build")
    assert code == 1 and "PLN001" in text and not (tmp_path / "build").exists()


def test_a_cloud_plan_that_cannot_be_built_is_refused_by_validate(tmp_path: Path) -> None:
    """On a cloud target PLN001 said nothing: with DEP002 suppressed (the appliance is on-prem) validate passed
    what generate refused, its management fabric having no switch to cable the appliance to."""

    def change(doc: dict[str, Any]) -> None:
        doc["appliances"] = [{"name": "app01", "fabric": "management", "ports": 1}]
        doc["suppress"] = [{"rule": "DEP002", "reason": "the appliance is on-prem"}]

    path = _variant(tmp_path, "aws-p5-efa", change)
    code, text = _validate(path)
    assert code == 1 and "PLN001" in text and "appliance `app01`" in text, text
    code, text = _generate(path, tmp_path / "build")
    assert code == 1 and "PLN001" in text and not (tmp_path / "build").exists()


def test_an_appliance_on_a_cloud_is_refused_by_validate(tmp_path: Path) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["appliances"] = [{"name": "x", "fabric": "compute", "ports": 1}]

    path = _variant(tmp_path, "aws-p5-efa", change)
    code, text = _validate(path)
    assert code == 1 and "DEP002" in text and "appliance `x`" in text


def test_rack_power_of_a_pool_smaller_than_its_rack(tmp_path: Path) -> None:
    """4 GB200 trays (an 18-tray domain by default) make one rack of 4 x 6.7 kW; PWR001 said 120.6 kW."""

    def change(doc: dict[str, Any]) -> None:
        doc["pools"][0].update(server="gb200-nvl72-tray", count=4)
        doc["pools"][0].pop("placement", None)

    path = _variant(tmp_path, "roce-rail-2tier", change)
    code, text = _validate(path)
    assert "PWR001" not in text and "120.6 kW" not in text, text


def test_a_data_degree_alone_is_checked(tmp_path: Path) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["workload"]["parallelism"] = {"data": 1000000}

    path = _variant(tmp_path, "hdr-fat-tree-a100", change)
    code, text = _validate(path)
    assert code == 1 and "WRK004" in text and "data 1000000 = 1,000,000" in text


def test_a_leaf_spine_compute_fabric_builds(tmp_path: Path) -> None:
    """The schema and the rules size a leaf-spine compute fabric; the plan built none ("no node has a port
    on this fabric"). 64 HGX x 8 rails of 400G on SN5600 (128 ports at 400G, 1:1): 512 ports on 8 leaves of
    64 down and 64 up, and 512 uplinks on 4 spines of 128 ports."""

    def change(doc: dict[str, Any]) -> None:
        doc["fabrics"]["compute"]["topology"] = {"kind": "leaf-spine", "switch": "sn5600"}

    path = _variant(tmp_path, "roce-rail-2tier", change)
    code, text = _validate(path)
    assert code == 0, text
    code, text = _generate(path, tmp_path / "build")
    assert code == 0, text
    rows = list(csv.DictReader(io.StringIO((tmp_path / "build/cabling/cables.csv").read_text())))
    compute = [r for r in rows if r["fabric"] == "compute"]
    leaves = {r["b_device"] for r in compute if r["layer"] == "node_leaf"}
    spines = {r["b_device"] for r in compute if r["layer"] == "leaf_spine"}
    assert len([r for r in compute if r["layer"] == "node_leaf"]) == 512 and len(leaves) == 8
    assert len([r for r in compute if r["layer"] == "leaf_spine"]) == 512 and len(spines) == 4


def test_on_prem_networks_may_not_overlap(tmp_path: Path) -> None:
    """compute_cidr equal to management_cidr gave every host two routes to one range (management 10.10.1.1/16
    and a rail's 10.10.0.10/19), and validate said nothing; so did a switch loopback block inside it."""

    def same(doc: dict[str, Any]) -> None:
        doc["deployment"]["maas"]["compute_cidr"] = "10.10.0.0/16"

    code, text = _validate(_variant(tmp_path, "maas-onprem-h100", same))
    assert code == 1 and "DEP010" in text and "`10.10.0.0/16` overlaps `10.10.0.0/16`" in text, text
    assert "deployment.maas.management_cidr" in text

    def loopbacks(doc: dict[str, Any]) -> None:
        doc["deployment"] = {"target": "maas", "maas": {"management_cidr": "10.254.0.0/16"}}

    code, text = _validate(_variant(tmp_path, "roce-rail-2tier", loopbacks))
    assert code == 1 and "overlaps `10.254.0.0/16` (deployment.maas.management_cidr)" in text, text

    def two_routed(doc: dict[str, Any]) -> None:  # routed fabrics share the default loopback pool
        doc["fabrics"]["storage"] = {
            "technology": "roce-v2-400",
            "topology": {"kind": "leaf-spine", "switch": "sn5600"},
        }

    code, text = _validate(_variant(tmp_path, "roce-rail-2tier", two_routed))
    assert "overlaps" not in text, text

    # without MAAS the hosts' fabric addresses come from the default blocks all the same: a loopback block
    # inside the default compute block gave a leaf's loopback and a host /31's gateway one address (and a
    # BMC block over it put one address on a management VLAN and a compute port)
    def loopback_in_compute(doc: dict[str, Any]) -> None:
        doc["fabrics"]["compute"]["underlay"] = {"loopback_cidr": "10.100.0.0/24"}

    code, text = _validate(_variant(tmp_path, "roce-rail-2tier", loopback_in_compute))
    assert code == 1 and "DEP010 `10.100.0.0/24` overlaps `10.100.0.0/16` (the default compute block" in text

    def bmc_in_compute(doc: dict[str, Any]) -> None:
        doc["fabrics"]["management"]["vlans"] = {"bmc_cidr": "10.100.0.0/16"}

    code, text = _validate(_variant(tmp_path, "roce-rail-2tier", bmc_in_compute))
    assert code == 1 and "NET019 10.100.0.0/16 overlaps the default compute block" in text, text


def test_gcp_gpu_nic_networks_stay_off_the_host_network(tmp_path: Path) -> None:
    """`gpu_network_cidr` equal to `network_cidr` passed validate: every VM got host0 10.0.0.0/17 and gpu0
    10.0.0.0/19, two connected routes to one range, so traffic for other nodes' host addresses left through
    an RDMA NIC. Refused as the on-prem plan refuses overlapping networks."""

    def same(doc: dict[str, Any]) -> None:
        doc["deployment"]["cloud"]["gpu_network_cidr"] = "10.0.0.0/16"

    path = _variant(tmp_path, "gcp-a3-ultra", same)
    code, text = _validate(path)
    assert code == 1 and "DEP010" in text and "10.0.0.0/16 overlaps network_cidr 10.0.0.0/16" in text, text
    line, col = (int(x) for x in text.split(".yaml:", 1)[1].split(":")[:2])  # located at its key
    assert path.read_text().splitlines()[line - 1][col - 1 :].startswith("gpu_network_cidr:"), text
    code, text = _generate(path, tmp_path / "build")
    assert code == 1 and not (tmp_path / "build").exists(), text

    def inside(doc: dict[str, Any]) -> None:
        doc["deployment"]["cloud"]["gpu_network_cidr"] = "10.0.128.0/17"

    code, text = _validate(_variant(tmp_path, "gcp-a3-ultra", inside))
    assert code == 1 and "overlaps network_cidr" in text, text


@pytest.mark.parametrize(("example", "cidr"), [("aws-p5-efa", "10.0.0.0/8"), ("oci-bm-h100", "10.0.0.0/12")])
def test_a_cloud_network_larger_than_the_provider_takes_is_refused(
    tmp_path: Path, example: str, cidr: str
) -> None:
    """AWS's largest VPC is a /16 (EC2 CreateVpc), OCI's largest VCN block a /16 (CreateVcn): a /8 or /12
    passed validate and generate, and `pulumi up` failed creating the network."""

    def big(doc: dict[str, Any]) -> None:
        doc["deployment"]["cloud"]["network_cidr"] = cidr

    path = _variant(tmp_path, example, big)
    code, text = _validate(path)
    assert code == 1 and "DEP010" in text and f"{cidr} is larger than" in text and "use a /16" in text, text
    code, text = _generate(path, tmp_path / "build")
    assert code == 1 and not (tmp_path / "build").exists(), text


def test_a_dhcp_server_is_an_address(tmp_path: Path) -> None:
    """`999.1.1.1` matched the pattern and reached the leaves' startup.yaml."""

    def change(doc: dict[str, Any]) -> None:
        doc["fabrics"]["management"]["vlans"] = {"dhcp_server": "999.1.1.1"}

    code, text = _validate(_variant(tmp_path, "superpod-h100-4su", change))
    assert code == 2 and "dhcp_server" in text and "no IPv4 address" in text, text


def test_single_switch_warning_counts_the_planned_switches(tmp_path: Path) -> None:
    """Two DGX on the storage leaf-spine: TOP015 said "all 8 nodes hang off one qm9700 switch" from a closed
    form while the plan built leaves and spines; it now counts the plan's switches."""

    def change(doc: dict[str, Any]) -> None:
        doc["pools"][0]["count"] = 2

    path = _variant(tmp_path, "maas-onprem-h100", change)
    code, text = _validate(path)
    assert "TOP015" not in text, text
    code, out, err = run_cli("plan", str(path), "--format", "json")
    assert code == 0, err


def test_a_management_port_layout_keeps_uplinks_on_the_uplink_ports(tmp_path: Path) -> None:
    """An SN2201 has 48 x 1G node ports and 4 x 100G uplinks (49-52): `up: 47-48` cabled 100G AOC spine
    uplinks to 1G RJ45 ports, and validate and generate passed it."""

    def change(doc: dict[str, Any]) -> None:
        doc["fabrics"]["management"]["topology"]["port_layout"] = {"down": "1-40", "up": "47-48"}

    code, text = _validate(_variant(tmp_path, "roce-rail-2tier", change))
    assert code == 1 and "uplink port 47 is one of the leaf's 48 node ports" in text, text

    def fine(doc: dict[str, Any]) -> None:
        doc["fabrics"]["management"]["topology"]["port_layout"] = {"down": "1-40", "up": "49-50"}

    assert _validate(_variant(tmp_path, "roce-rail-2tier", fine))[0] == 0
