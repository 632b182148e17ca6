"""The catalogue's `software.driver_packages` (NVIDIA's driver packages, CUDA repository key and DNF versionlock
plug-in per OS) from a site's catalogue extension: its entries come before the shipped ones, so an entry naming
an OS replaces the shipped one for that OS (a `software:` section was refused as an unknown catalogue section),
and each is checked like any other extension entry, with a located CAT002."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from conftest import run_cli

BLUEPRINT = """\
catalog: cat.yaml
apiVersion: cluster-blueprint/v1
name: site-driver
site: {rows: 1, racks_per_row: 2, rack: {units: 48, power_kw: 60}}
pools:
  - {name: gpu, role: gpu, count: 2, server: dgx-h100, placement: {nodes_per_rack: 2}}
fabrics:
  compute:
    technology: infiniband-ndr
    topology: {kind: fat-tree, switch: qm9700, rail_optimized: true}
    subnet_manager: {kind: opensm, ha: true}
software: {os: rocky-9, driver_branch: "570", cuda: "12.8", nccl: "2.25.1", ofed: {kind: doca, version: "2.9.1"}}
"""

CATALOG = """\
software:
  driver_packages:
    - os: [{os}]
      repo_dirs: {{{os}: site9}}
      repo_dirs_source: "the site's mirror of rhel9/"
      repo_key: SITE0001.pub
      repo_key_source: "the site's mirror signs with its own key"
      proprietary: {{packages: [cuda-drivers-<branch>], version_package: nvidia-driver,
                    module_stream: <branch>-dkms, source: "site mirror"}}
      open: {{packages: [nvidia-open], version_package: nvidia-driver, module_stream: <branch>-open,
             source: "site mirror"}}
      fabricmanager: nvidia-fabricmanager-<branch>
      nscq: libnvidia-nscq-<branch>
      source: "site mirror"
      versionlock_package: python3-site-versionlock
      versionlock_source: "site mirror"
"""
OS_LINE = 3  # `- os: [...]` in CATALOG


def site(tmp_path: Path, os: str = "rocky-9") -> Path:
    (tmp_path / "cat.yaml").write_text(CATALOG.format(os=os), encoding="utf-8")
    bp = tmp_path / "bp.yaml"
    bp.write_text(BLUEPRINT, encoding="utf-8")
    return bp


def test_an_extension_entry_replaces_the_shipped_one_for_its_os(tmp_path: Path) -> None:
    bp = site(tmp_path)
    code, _, err = run_cli("generate", str(bp), "-o", str(tmp_path / "out"), "--only", "ansible")
    assert code == 0, err
    group_vars = tmp_path / "out" / "ansible" / "group_vars"
    every = yaml.safe_load((group_vars / "all.yml").read_text())
    pool = yaml.safe_load((group_vars / "pool_gpu.yml").read_text())
    assert every["nvidia_driver_versionlock_package"] == "python3-site-versionlock"
    assert every["doca_ofed_versionlock_package"] == "python3-site-versionlock"
    assert every["nvidia_driver_repo_key_file"] == every["nccl_repo_key_file"] == "SITE0001.pub"
    assert every["nvidia_driver_repo_distro"] == every["nccl_repo_distro"] == "site9"
    assert "nvidia_driver_repo_key_file" not in pool  # the OS's, not the pool's: once, in all.yml


def test_a_bad_extension_entry_is_one_error_at_its_line(tmp_path: Path) -> None:
    bp = site(tmp_path)
    (tmp_path / "cat.yaml").write_text(
        CATALOG.format(os="rocky-9").replace("repo_key: SITE0001.pub", "repo_key: ../key"), encoding="utf-8"
    )
    code, out, err = run_cli("validate", str(bp))
    errors = re.findall(r"^\S+: error .*$", out + err, re.M)
    assert code == 2 and len(errors) == 1, out + err
    where = r"\S*cat\.yaml:6:\d+: error CAT002 .*driver_packages\[0\]\.repo_key"
    assert re.match(where, errors[0]), errors[0]


def test_only_driver_packages_can_be_extended(tmp_path: Path) -> None:
    bp = site(tmp_path)
    (tmp_path / "cat.yaml").write_text("software:\n  cuda_drivers: {}\n", encoding="utf-8")
    code, out, err = run_cli("validate", str(bp))
    assert code == 2, out + err
    says = r"cat\.yaml:2:\d+: error CAT002 .*`cuda_drivers` cannot be extended"
    assert re.search(says, out + err), out + err


def test_an_os_that_is_not_a_software_os_value_is_refused_at_its_line(tmp_path: Path) -> None:
    """`os: [rhel9]` (software.os spells it rhel-9) matched no blueprint, so the entry was silently unused."""
    bp = site(tmp_path, os="rhel9")
    for argv in (["validate", str(bp)], ["generate", str(bp), "-o", str(tmp_path / "out")]):
        code, out, err = run_cli(*argv)
        errors = re.findall(r"^\S+: error .*$", out + err, re.M)
        assert code == 2 and len(errors) == 1, (argv[0], out + err)
        assert re.match(
            rf"\S*cat\.yaml:{OS_LINE}:\d+: error CAT002 .*driver_packages\[0\]\.os: .*`rhel9` is not a "
            r"software\.os value; known: ubuntu-22\.04, .*rocky-9",
            errors[0],
        ), errors[0]
    assert not (tmp_path / "out").exists()


def test_the_shipped_entries_name_only_software_os_values() -> None:
    from blueprints.catalog.load import default_catalog
    from blueprints.catalog.schema import SOFTWARE_OS

    software = default_catalog().software
    assert software is not None
    named = [os for entry in software.driver_packages for os in entry.os]
    assert sorted(named) == sorted(SOFTWARE_OS)  # each OS once: none without an entry, none in two


def test_every_os_of_an_entry_has_its_repository_directory(tmp_path: Path) -> None:
    bp = site(tmp_path)
    text = CATALOG.format(os="rocky-9").replace("repo_dirs: {rocky-9: site9}", "repo_dirs: {rhel-9: site9}")
    (tmp_path / "cat.yaml").write_text(text, encoding="utf-8")
    code, out, err = run_cli("validate", str(bp))
    says = r"cat\.yaml:4:\d+: error CAT002 .*repo_dirs: one CUDA repository directory for each os value"
    assert code == 2 and re.search(says + r" \(none for rocky-9\)", out + err), out + err
