"""`blueprint inventory --from-stack`: the inventory from what the Pulumi program created.

Each cloud example's program runs under Pulumi's mocks; its `nodes` and `storage` outputs are written as
`pulumi stack output --json` would, and the command joins them to the build. Every host gets the address
the provider reported, every managed file system becomes a mount with the vendor's options
(blueprints/catalog/data/cloud.yaml), and a stack that does not fit the build is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli
from ruamel.yaml import YAML

pytest.importorskip("pulumi", reason="the Pulumi SDK is in the test extra")

from pulumi_cases import generate, run_target

pytestmark = pytest.mark.pulumi

CLOUD_EXAMPLES = ["aws-p5-efa", "azure-ndh100v5", "gcp-a3-ultra", "oci-bm-h100"]
# Vendor mount options (independent of the code: copied from the pages cited in cloud.yaml)
FSX_OPTIONS = "relatime,flock,_netdev"  # FSx for Lustre user guide, mounting from EC2
EFS_OPTIONS = "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev"
GCP_LUSTRE_OPTIONS = "defaults,_netdev"  # cluster-toolkit managed-lustre module default
# Azure Managed Lustre: MicrosoftDocs/azure-stack-docs azure-managed-lustre/automount-clients-fstab.md
# (defaults,noatime,flock,_netdev; connect-clients.md: `mount -t lustre -o noatime,flock <MGS>@tcp:/lustrefs`)
AMLFS_OPTIONS = "defaults,noatime,flock,_netdev"
# client-install.md (Ubuntu): deb [arch=amd64] https://packages.microsoft.com/repos/amlfs-${DISTRIB_CODENAME}/
# ${DISTRIB_CODENAME} main; includes/client-install-version-ubuntu.md: amlfs-lustre-client-2.15.7-33-g79ddf99=$(uname -r)
AMLFS_REPO = "https://packages.microsoft.com/repos/amlfs-{{ ansible_distribution_release }}/"
AMLFS_PACKAGE_2204 = "amlfs-lustre-client-2.15.7-33-g79ddf99={{ ansible_kernel }}"
# The NFS services' documented fstab options, per cloud example with `managed_storage: nfs`:
DOCUMENTED_NFS_OPTIONS = {
    # MicrosoftDocs/azure-docs storage-files-how-to-mount-nfs-shares.md: command line + fstab + options table
    "azure-ndh100v5": "vers=4,minorversion=1,sec=sys,nconnect=4,rsize=1048576,wsize=1048576,_netdev,nofail",
    # cluster-toolkit modules/file-system/filestore: mount_options default
    "gcp-a3-ultra": "defaults,_netdev",
    # oci-hpc playbooks/compute.yml: FSS mounted with the NFS defaults
    "oci-bm-h100": "defaults,_netdev",
    # docs.aws.amazon.com/efs/latest/ug/nfs-automount-efs.html
    "aws-p5-efa": EFS_OPTIONS,
}


def stack_build(example: str, tmp: Path, blueprint: Path | None = None) -> tuple[Path, Path, dict]:  # type: ignore[type-arg]
    """generate (ansible + pulumi), run the program under mocks, save its outputs as the CLI would."""
    build = tmp / "build"
    source = blueprint or EXAMPLES / f"{example}.yaml"
    code, out, err = run_cli("generate", str(source), "-o", str(build), "--only", "ansible,pulumi")
    assert code == 0, out + err
    cluster = generate(source, build / "pulumi")
    run = run_target(cluster, build / "pulumi")
    outputs = tmp / "outputs.json"
    outputs.write_text(json.dumps(run.outputs, indent=2))
    return build, outputs, run.outputs


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    yaml = YAML(typ="safe", pure=True)
    # group_vars mark every string `!unsafe` (never templated): read it as the string it marks
    yaml.constructor.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(path.read_text())


def _management_addresses(inv: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """host -> the management address the stack inventory gives it (ansible_host is the access path's:
    tests/pulumi_programs/test_access_path.py)."""
    return {
        h: hv["cb_mgmt_address"]
        for g, grp in inv["all"]["children"].items()
        if g.startswith("pool_")
        for h, hv in grp["hosts"].items()
    }


@pytest.mark.parametrize("example", CLOUD_EXAMPLES)
def test_inventory_carries_the_stack_addresses_and_mounts(example: str, tmp_path: Path) -> None:
    build, outputs, raw = stack_build(example, tmp_path)
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 0, out + err
    inv = _load(build / "ansible" / "inventory.stack.yml")
    assert _management_addresses(inv) == {h: n["address"] for h, n in raw["nodes"].items()}
    # the generated groups are kept (rails, racks, roles)
    generated = _load(build / "ansible" / "inventory.yml")["all"]["children"]
    assert set(inv["all"]["children"]) == set(generated)
    mounts = {m["name"]: m for m in inv["all"]["vars"]["shared_storage_managed_mounts"]}
    storage = json.loads((build / "pulumi" / "cluster.json").read_text())["storage"]
    assert storage, f"{example} declares managed storage"
    assert set(mounts) == {s["name"] for s in storage} == set(raw["storage"])
    for name, m in mounts.items():
        assert m["src"] == raw["storage"][name]["source"] and m["path"] == raw["storage"][name]["mount"]
        assert m["kind"] in ("lustre", "nfs") and m["fstype"] == m["kind"]
        assert "_netdev" in m["opts"].split(",")


@pytest.mark.parametrize("example", ["maas-onprem-h100", "superpod-h100-4su"])
def test_maas_inventory_reads_the_programs_own_outputs(example: str, tmp_path: Path) -> None:
    """The MAAS program exports each fabric port as MAAS links it, address/prefix (`10.100.0.10/19`): the
    inventory reads them (it refused every MAAS build whose port map names the fabric netdevs)."""
    build, outputs, raw = stack_build(example, tmp_path)
    assert any(n.get("fabric_addresses") for n in raw["nodes"].values()), "no fabric port exported"
    assert all("/" in a for n in raw["nodes"].values() for a in (n.get("fabric_addresses") or {}).values())
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 0, out + err
    inv = _load(build / "ansible" / "inventory.stack.yml")
    assert _management_addresses(inv) == {h: n["address"] for h, n in raw["nodes"].items()}


def test_aws_fsx_gets_the_documented_options(tmp_path: Path) -> None:
    build, outputs, _raw = stack_build("aws-p5-efa", tmp_path)
    assert run_cli("inventory", str(build), "--from-stack", str(outputs))[0] == 0
    (mount,) = _load(build / "ansible" / "inventory.stack.yml")["all"]["vars"][
        "shared_storage_managed_mounts"
    ]
    assert mount["kind"] == "lustre" and mount["opts"].startswith(FSX_OPTIONS)
    assert mount["src"].endswith("@tcp:/abcdefgh")  # FSx DNS name @tcp:/ mount name


def test_gcp_managed_lustre_client_repository(tmp_path: Path) -> None:
    build, outputs, _ = stack_build("gcp-a3-ultra", tmp_path)
    assert run_cli("inventory", str(build), "--from-stack", str(outputs))[0] == 0
    all_vars = _load(build / "ansible" / "inventory.stack.yml")["all"]["vars"]
    (mount,) = all_vars["shared_storage_managed_mounts"]
    assert mount["opts"].startswith(GCP_LUSTRE_OPTIONS)
    # cluster-toolkit install-managed-lustre-client.sh
    assert (
        all_vars["shared_storage_lustre_repo_url"] == "https://us-apt.pkg.dev/projects/lustre-client-binaries"
    )
    assert (
        all_vars["shared_storage_lustre_repo_suite"]
        == "lustre-client-ubuntu-{{ ansible_distribution_release }}"
    )
    assert all_vars["shared_storage_lustre_packages"] == [
        "lustre-client-modules-{{ ansible_kernel }}",
        "lustre-client-utils",
    ]


def test_azure_managed_lustre_documented_mount_and_client(tmp_path: Path) -> None:
    build, outputs, _ = stack_build("azure-ndh100v5", tmp_path)
    assert run_cli("inventory", str(build), "--from-stack", str(outputs))[0] == 0
    all_vars = _load(build / "ansible" / "inventory.stack.yml")["all"]["vars"]
    (mount,) = all_vars["shared_storage_managed_mounts"]
    assert mount["opts"].startswith(AMLFS_OPTIONS)
    assert mount["src"].endswith("@tcp:/lustrefs")  # the page: keep the literal `lustrefs`
    assert all_vars["shared_storage_lustre_repo_url"] == AMLFS_REPO
    assert all_vars["shared_storage_lustre_repo_suite"] == "{{ ansible_distribution_release }}"
    assert all_vars["shared_storage_lustre_repo_components"] == ["main"]
    assert (
        all_vars["shared_storage_lustre_repo_key_url"] == "https://packages.microsoft.com/keys/microsoft.asc"
    )
    assert all_vars["shared_storage_lustre_packages"] == [AMLFS_PACKAGE_2204]


def test_amlfs_client_is_left_to_the_image_on_an_os_without_a_published_package(tmp_path: Path) -> None:
    """rhel-9 has no apt metapackage in the table: no repository variables, the role checks mount.lustre."""
    data = _load(EXAMPLES / "azure-ndh100v5.yaml")
    data["software"]["os"] = "rhel-9"
    # no default image for rhel-9 (DEP009); a bare image name is no image Azure takes (DEP015): a Marketplace URN
    data["deployment"]["cloud"]["image"] = "RedHat:RHEL:9-lvm-gen2:latest"
    bp = tmp_path / "azure-rhel.yaml"
    bp.write_text(json.dumps(data))
    build = tmp_path / "build"
    code, out, err = run_cli("generate", str(bp), "-o", str(build), "--only", "pulumi")
    assert code == 0, out + err
    (fs,) = json.loads((build / "pulumi" / "cluster.json").read_text())["storage"]
    assert fs["client"]["packages"] == []


@pytest.mark.parametrize("example", sorted(DOCUMENTED_NFS_OPTIONS))
def test_managed_nfs_gets_the_documented_options(example: str, tmp_path: Path) -> None:
    data = _load(EXAMPLES / f"{example}.yaml")
    data["deployment"]["cloud"]["managed_storage"] = "nfs"
    for st in data["storage"]:  # a size every NFS service offers (Azure Files: 100 TiB at most)
        st["capacity_tib"] = 10
        st.pop("throughput_gbytes", None)
    bp = tmp_path / f"{example}-nfs.yaml"
    bp.write_text(json.dumps(data))
    build = tmp_path / "build"
    code, out, err = run_cli("generate", str(bp), "-o", str(build), "--only", "pulumi")
    assert code == 0, out + err
    for fs in json.loads((build / "pulumi" / "cluster.json").read_text())["storage"]:
        assert fs["protocol"] == "nfs"
        assert fs["mount_options"].startswith(DOCUMENTED_NFS_OPTIONS[example]), fs["mount_options"]


def test_a_stack_that_does_not_fit_the_build_is_refused(tmp_path: Path) -> None:
    build, outputs, raw = stack_build("aws-p5-efa", tmp_path)
    nodes = dict(raw["nodes"])
    gone = sorted(nodes)[0]
    del nodes[gone]
    nodes["stranger01"] = {"address": "10.0.9.9"}
    outputs.write_text(json.dumps({**raw, "nodes": nodes}))
    code, _, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2 and f"not in the stack: {gone}" in err and "not in the blueprint: stranger01" in err
    assert not (build / "ansible" / "inventory.stack.yml").exists()
    outputs.write_text('{"nodes": {\n  "x": }')
    code, _out, err = run_cli("inventory", str(build), "--from-stack", str(outputs))
    assert code == 2 and f"{outputs}:2:" in err


def test_every_onprem_example_with_storage_mounts_it(tmp_path: Path) -> None:
    """On-prem targets: every declared file system is in the generated shared_storage mounts."""
    for path in sorted(EXAMPLES.glob("*.yaml")):
        data = _load(path)
        target = (data.get("deployment") or {}).get("target", "none")
        if target not in ("maas", "none") or not data.get("storage"):
            continue
        build = tmp_path / path.stem
        code, out, err = run_cli("generate", str(path), "-o", str(build), "--only", "ansible")
        assert code == 0, out + err
        mounts = _load(build / "ansible" / "group_vars" / "all.yml")["shared_storage_mounts"]
        assert {m["name"] for m in mounts} == {s["name"] for s in data["storage"]}, path.name


def test_the_generated_readme_s_stack_output_command_gives_what_inventory_reads(tmp_path: Path) -> None:
    """The build's pulumi/README.md said `pulumi stack output nodes --json > nodes.json`, one output, which
    `inventory --from-stack` refuses (it reads the whole stack's outputs: nodes and storage). Its command is
    played here as Pulumi would: an output named after `output` is that output alone, else all of them."""
    build, _, raw = stack_build("aws-p5-efa", tmp_path)
    readme = (build / "pulumi" / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("pulumi stack output"))
    command, _, _ = line.partition("#")
    words = command.split(">")[0].split()[3:]  # after `pulumi stack output`
    named = [w for w in words if not w.startswith("-")]
    written = raw[named[0]] if named else raw
    saved = tmp_path / command.split(">")[1].strip()
    saved.write_text(json.dumps(written))
    code, out, err = run_cli("inventory", str(build), "--from-stack", str(saved))
    assert code == 0, out + err
