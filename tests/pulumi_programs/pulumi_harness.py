"""Run a generated Pulumi program in-process under Pulumi's mocks and record what it registers.

The Pulumi CLI is not available here, so `pulumi up` cannot run; the program runs exactly as the
Python language host would (``runpy.run_path`` of ``__main__.py``) against ``pulumi.runtime.set_mocks``.
Every resource constructor and ``*Args`` class of the provider SDKs rejects unknown keyword arguments,
so a misspelt or removed argument fails here as it would in ``pulumi preview``.
"""

from __future__ import annotations

import hashlib
import runpy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import settings
from ruamel.yaml import YAML


@dataclass
class Registered:
    type: str
    name: str
    inputs: dict[str, Any]
    custom: bool


@dataclass(frozen=True)
class Options:
    """The resource options a program passed (the mocks do not see them; recorded at construction)."""

    protect: bool
    ignore_changes: tuple[str, ...]


@dataclass
class Run:
    resources: list[Registered] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    options: dict[tuple[str, str], Options] = field(default_factory=dict)  # (resource name, class) -> options

    def of_type(self, type_: str) -> list[Registered]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str) -> Registered:
        found = self.of_type(type_)
        assert len(found) == 1, f"expected one {type_}, found {[r.name for r in found]}"
        return found[0]


def _fake_ip(name: str, base: str = "10.0") -> str:
    h = int(hashlib.sha256(name.encode()).hexdigest(), 16)
    return f"{base}.{h % 250 + 1}.{(h >> 8) % 250 + 1}"


# Computed outputs the programs read, per resource type (the provider would return them).
COMPUTED: dict[str, Any] = {
    "aws:ec2/instance:Instance": lambda a: {"privateIp": _fake_ip(a.name)},
    "aws:ec2/launchTemplate:LaunchTemplate": lambda a: {"latestVersion": 1},
    "aws:ec2/placementGroup:PlacementGroup": lambda a: {"name": a.name},
    "aws:ec2/keyPair:KeyPair": lambda a: {"keyName": a.name},
    # The block's zone is AWS's (the offering's), not the stack's configured zone.
    "aws:ec2/capacityBlockReservation:CapacityBlockReservation": lambda a: {"availabilityZone": "us-east-1d"},
    "gcp:compute/globalAddress:GlobalAddress": lambda a: {"address": "10.250.0.0"},
    "aws:fsx/lustreFileSystem:LustreFileSystem": lambda a: {
        "dnsName": f"{a.name}.fsx.example",
        "mountName": "abcdefgh",
    },
    "aws:efs/mountTarget:MountTarget": lambda a: {"ipAddress": _fake_ip(a.name)},
    "maas:index/instance:Instance": lambda a: {"ipAddresses": [_fake_ip(a.name)], "fqdn": f"{a.name}.maas"},
    "maas:index/fabric:Fabric": lambda a: {"name": a.inputs.get("name", a.name)},
    "gcp:compute/instance:Instance": lambda a: {
        "networkInterfaces": [
            {**nic, "networkIp": _fake_ip(f"{a.name}-{i}")}
            for i, nic in enumerate(a.inputs.get("networkInterfaces", []))
        ]
    },
    "gcp:compute/network:Network": lambda a: {
        "selfLink": f"projects/p/global/networks/{a.inputs.get('name', a.name)}"
    },
    "gcp:compute/subnetwork:Subnetwork": lambda a: {"selfLink": f"projects/p/regions/r/subnetworks/{a.name}"},
    "gcp:filestore/instance:Instance": lambda a: {"networks": [{"ipAddresses": [_fake_ip(a.name)]}]},
    "gcp:lustre/instance:Instance": lambda a: {
        "mountPoint": f"{_fake_ip(a.name)}@tcp:/{a.inputs.get('filesystem')}"
    },
    "azure-native:storagecache:AmlFilesystem": lambda a: {
        "clientInfo": {"mgsAddress": _fake_ip(a.name), "mountCommand": "mount -t lustre ..."}
    },
    "oci:FileStorage/mountTarget:MountTarget": lambda a: {
        "ipAddress": _fake_ip(a.name),
        "exportSetId": "ocid1.exportset.mock",
    },
    "gcp:compute/resourcePolicy:ResourcePolicy": lambda a: {
        "selfLink": f"projects/p/regions/r/resourcePolicies/{a.name}"
    },
    "oci:Lustre/fileStorageLustreFileSystem:FileStorageLustreFileSystem": lambda a: {
        "managementServiceAddress": _fake_ip(a.name),
        "lnet": "tcp",
    },
}


def _resource_id(args: pulumi.runtime.MockResourceArgs) -> str:
    """The id the provider would give: EC2 instance ids in AWS's syntax (Amazon EC2 User Guide, "Resource
    IDs": `i-` and 17 hex digits), which `blueprint inventory --from-stack` checks; `<name>-id` elsewhere."""
    if args.typ == "aws:ec2/instance:Instance":
        return "i-" + hashlib.sha256(args.name.encode()).hexdigest()[:17]
    return f"{args.name}-id"


class RecordingMocks(pulumi.runtime.Mocks):
    def __init__(self, run: Run, call_results: dict[str, Any], computed: dict[str, Any]) -> None:
        self.run = run
        self.call_results = call_results
        self.computed = {**COMPUTED, **computed}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.run.resources.append(Registered(args.typ, args.name, dict(args.inputs), args.custom))
        outputs = dict(args.inputs)
        outputs.setdefault("arn", f"arn:mock:{args.typ}:{args.name}")
        extra = self.computed.get(args.typ)
        if extra is not None:
            outputs.update(extra(args))
        return _resource_id(args), outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        self.run.calls.append((args.token, dict(args.args)))
        result = self.call_results.get(args.token)
        if result is None:
            raise AssertionError(f"the program invoked {args.token}, which the test does not mock")
        return result(args.args) if callable(result) else result


def stack_config(project_dir: Path, stack: str = "prod") -> dict[str, Any]:
    data = YAML(typ="safe", pure=True).load((project_dir / f"Pulumi.{stack}.yaml").read_text())
    return dict(data.get("config") or {})


def _config_string(value: Any) -> str:
    # The CLI hands the program every config value as a string; booleans as true/false.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def run_program(
    project_dir: Path,
    extra_config: dict[str, str],
    secret_keys: tuple[str, ...] = (),
    call_results: dict[str, Any] | None = None,
    computed: dict[str, Any] | None = None,
    stack: str = "prod",
) -> Run:
    """Run ``project_dir/__main__.py`` under mocks with the stack's config plus ``extra_config``."""
    project = YAML(typ="safe", pure=True).load((project_dir / "Pulumi.yaml").read_text())["name"]
    run = Run()
    mocks = RecordingMocks(run, call_results or {}, computed or {})
    settings.ROOT.set(None)  # a fresh root stack per program (set_mocks creates it)
    pulumi.runtime.set_mocks(mocks, project=project, stack=stack, preview=False)
    config = {k: _config_string(v) for k, v in stack_config(project_dir, stack).items()}
    config.update(extra_config)
    config = {k: v for k, v in config.items() if v != ""}  # an empty value removes a setting
    pulumi.runtime.set_all_config(config, list(secret_keys))

    original_init = pulumi.Resource.__init__

    def recording_init(self: pulumi.Resource, t: str, name: str, *args: Any, **kwargs: Any) -> None:
        opts = kwargs.get("opts") if "opts" in kwargs else (args[2] if len(args) > 2 else None)
        if opts is not None:
            run.options[(name, type(self).__name__)] = Options(
                bool(opts.protect), tuple(opts.ignore_changes or ())
            )
        original_init(self, t, name, *args, **kwargs)

    pulumi.Resource.__init__ = recording_init  # type: ignore[method-assign]

    @pulumi.runtime.test
    def program() -> pulumi.Output[Any]:
        runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")
        root = settings.get_root_resource()
        assert root is not None
        return pulumi.Output.from_input(dict(root.outputs)).apply(run.outputs.update)  # type: ignore[attr-defined]

    try:
        program()
    finally:
        pulumi.Resource.__init__ = original_init  # type: ignore[method-assign]
        settings.ROOT.set(None)
        pulumi.runtime.set_all_config({}, [])
    return run
