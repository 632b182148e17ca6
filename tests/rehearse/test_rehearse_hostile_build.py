"""A build directory is foreign input: names that would become extra `ip -batch` commands (run as root),
values of the wrong type and short lines are refused where they are read (exit 2, file and line), before
any namespace or daemon exists. No real tool is needed: the refusal comes before the tool check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from rehearse_fixtures import SMALL_ROCE, generate

from generator.foreign import ForeignInputError
from generator.rehearse.build_input import read_build
from generator.rehearse.frr import batch

INJECTED = "1 type dummy\nnetns add cbevil\nnetns exec cbevil touch /tmp/cb-pwned\nlink add name swpZ"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(SMALL_ROCE, tmp_path_factory.mktemp("roce") / "build")


def _copy(built: Path, tmp_path: Path) -> Path:
    root = tmp_path / "build"
    shutil.copytree(built, root)
    return root


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _refused(root: Path, *needles: str) -> str:
    code, out, err = run_cli("rehearse", str(root))
    assert code == 2, (code, out, err)
    assert all(n in err for n in needles), err
    assert not Path("/tmp/cb-pwned").exists()
    return err


def test_a_port_that_carries_ip_commands_is_refused(built: Path, tmp_path: Path) -> None:
    """The reviewer's case: a quoted cables.csv field with line breaks, and the same key in the leaf's
    startup.yaml so the port looks configured. Before: the lines reached `ip -batch` as commands."""
    root = _copy(built, tmp_path)
    _edit(root / "cabling" / "cables.csv", ",c-leaf-su1-r0,5,", ',c-leaf-su1-r0,"' + INJECTED + '",')
    err = _refused(root, "cables.csv:", "is not a port name of a generated build")
    assert "netns exec" in err  # the value is shown, escaped, so the user sees what was refused


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (",gpu001,", ",gpu 001,", "is not a device name"),
        (",swp1,", ",swp1234567890123,", "is not a Linux interface name"),  # 16 bytes: one too many
    ],
)
def test_device_and_netdev_names_are_held_to_what_generate_writes(
    built: Path, tmp_path: Path, old: str, new: str, message: str
) -> None:
    root = _copy(built, tmp_path)
    _edit(root / "cabling" / "cables.csv", old, new)
    _refused(root, "cables.csv:", message)


def test_a_short_cables_row_is_refused_with_its_line(built: Path, tmp_path: Path) -> None:
    root = _copy(built, tmp_path)
    with (root / "cabling" / "cables.csv").open("a") as f:
        f.write("999,C-X,compute\n")
    _refused(root, "cables.csv:", "field count differs from the header")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "            neighbor:\n",
            "            neighbor: [swp1]\n            x-neighbor:\n",
            "`neighbor` is list",
        ),
        ("        router-id: 10.254.0.1", "        router-id: 10.0.0.1 cbevil", "router-id"),
        (
            "            10.254.0.1/32: {}\n        type: loopback",
            "            7\n        type: loopback",
            "is int",
        ),
    ],
)
def test_startup_yaml_values_of_the_wrong_kind_are_refused(
    built: Path, tmp_path: Path, old: str, new: str, message: str
) -> None:
    root = _copy(built, tmp_path)
    startup = root / "switches" / "compute" / "c-leaf-su1-r0" / "startup.yaml"
    text = startup.read_text()
    if old not in text:
        pytest.fail(f"the generated startup.yaml changed shape: {old!r} not in it")
    startup.write_text(text.replace(old, new, 1))
    code, _, err = run_cli("rehearse", str(root))
    assert code == 2, err
    assert "startup.yaml" in err and message in err


def test_a_path_count_that_is_a_digit_but_no_number_is_left_out(built: Path, tmp_path: Path) -> None:
    """`"²".isdigit()` is true and `int("²")` a ValueError (exit 3 before): no maximum-paths is rendered."""
    root = _copy(built, tmp_path)
    startup = root / "switches" / "compute" / "c-leaf-su1-r0" / "startup.yaml"
    _edit(startup, "                  ebgp: 64", '                  ebgp: "\u00b2"')
    conf = read_build(root).switches["compute"]["c-leaf-su1-r0"].frr_conf
    assert "router bgp 4200000000" in conf and "maximum-paths" not in conf


def test_an_interface_key_that_is_no_linux_name_is_refused(built: Path, tmp_path: Path) -> None:
    root = _copy(built, tmp_path)
    startup = root / "switches" / "compute" / "c-leaf-su1-r0" / "startup.yaml"
    _edit(startup, "      swp5:", '      "swp5 type dummy":')
    _refused(root, "startup.yaml", "is not a Linux interface name")


@pytest.mark.parametrize(
    "conf",
    [
        "router bgp 65001\ninterface \n",  # a bare `interface`
        "interface swp1\n ip address \nrouter bgp 65001\n",  # the reviewer's IndexError
        "router bgp 65001\n bgp router-id \n",
        "router bgp 65001\n address-family ipv4 unicast\n  network \n",
        "interface swp1;reboot\nrouter bgp 65001\n",
    ],
)
def test_frr_conf_lines_without_their_value_are_refused(built: Path, tmp_path: Path, conf: str) -> None:
    root = _copy(built, tmp_path)
    sw = root / "switches" / "compute" / "c-leaf-su1-r0"
    (sw / "startup.yaml").unlink()
    (sw / "frr.conf").write_text(conf)
    _refused(root, "frr.conf:")


def test_a_manifest_whose_blueprint_is_no_object_is_read(tmp_path: Path) -> None:
    """`{"blueprint": "x"}` was an AttributeError (exit 3); the directory's name stands in."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "manifest.json").write_text('{"blueprint": "x"}')
    assert read_build(tmp_path / "b").name == "b"


@pytest.mark.parametrize(
    "line",
    ["link add name swp1\nnetns exec x sh", 'link add name "swp1 x"', "link add name swp1 # x", "a\\ b"],
)
def test_the_last_guard_refuses_what_is_not_names_and_addresses(line: str) -> None:
    from generator.rehearse import names

    with pytest.raises(ForeignInputError, match="refused a command"):
        batch([], ["link set lo up", line])
    assert names.batch_lines(
        ["address add 10.0.0.1/31 dev ens1np0", "route replace fd00::/64 via fe80::1 dev x"]
    )


def test_a_bad_remote_as_names_its_file(built: Path, tmp_path: Path) -> None:
    root = _copy(built, tmp_path)
    startup = root / "switches" / "compute" / "c-leaf-su1-r0" / "startup.yaml"
    _edit(startup, "remote-as: external", "remote-as: 65001 cbevil")
    _refused(root, "c-leaf-su1-r0/startup.yaml: neighbor swp5 remote-as", "no usable BGP autonomous-system")


def test_a_long_declared_rdma_name_is_a_port_of_a_generated_build() -> None:
    """The schema's PortName takes 40 characters; the plan port adds `/<HCA port>`: a generated build's
    40-character RDMA name was refused."""
    from generator.rehearse import names

    assert names.port("mlx5_" + "a" * 35 + "/1", "x") == "mlx5_" + "a" * 35 + "/1"
    with pytest.raises(ForeignInputError):
        names.port("mlx5_0/1/2", "x")
    for check, value in ((names.port, "5\n"), (names.device, "leaf\n"), (names.ifname, "swp1\n")):
        with pytest.raises(ForeignInputError):  # `$` of re.match lets a final line break through
            check(value, "x")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("all: &a {children: {x: *a}}\n", "inventory.yml:1: holds a YAML anchor or alias"),
        ("all: {children: " + "{x: " * 100 + "{}" + "}" * 101 + "\n", "nested deeper than 64 levels"),
    ],
)
def test_an_inventory_that_expands_without_bound_is_refused(
    built: Path, tmp_path: Path, text: str, says: str
) -> None:
    """A self-referencing anchor in the build's inventory recursed until Python's limit (exit 3); an alias
    bomb expanded to gigabytes. Generate writes neither anchors nor deep nesting."""
    root = _copy(built, tmp_path)
    (root / "ansible" / "inventory.yml").write_text(text)
    _refused(root, says)


def test_a_port_cabled_twice_or_to_itself_is_refused_with_its_line(built: Path, tmp_path: Path) -> None:
    """Two rows on one switch port made `ip -batch` fail ("File exists") and the rehearsal end in an
    internal error (exit 3); refused where cables.csv is read, naming both lines."""
    root = _copy(built, tmp_path)
    path = root / "cabling" / "cables.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines, lines[1]]))
    _refused(root, f"cables.csv:{len(lines) + 1}", "is cabled twice (also at", "cables.csv:2)")
    header, row = lines[0], lines[1].rstrip("\n").split(",")
    cols = header.rstrip("\n").split(",")
    for end in ("device", "port"):
        row[cols.index(f"b_{end}")] = row[cols.index(f"a_{end}")]
    path.write_text(header + ",".join(row) + "\n")
    _refused(root, "cables.csv:2", "to itself")
