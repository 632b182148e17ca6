"""The `pulumi/` output: a Pulumi Python project that `pulumi up` runs for the blueprint's deployment target.

Files: Pulumi.yaml, Pulumi.<stack>.yaml (non-secret settings the blueprint decided), requirements.txt
(pinned SDKs), README.md (how to run, which credentials and secrets), __main__.py (the target's program,
shipped as plain Python under templates/pulumi/<target>/) and cluster.json (the resolved cluster it reads).
The target's record (title, components, ...) is generator/deploy/targets/<target>.py; its program's data
is generator/emit/pulumi_targets/<target>.py.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from ruamel.yaml import YAML

from generator.deploy.targets import CloudTarget, cloud_target
from generator.emit._registry import BuildContext, Emitter
from generator.fsutil import atomic_write_text
from generator.resources import templates_dir
from generator.yamltext import scalar as yaml_scalar

if TYPE_CHECKING:
    from generator.emit.pulumi_targets.common import Project
    from generator.plan.model import Plan
    from generator.resolve import ResolvedCluster

NAME = "pulumi"
STACK = "prod"


def applies(cluster: ResolvedCluster) -> bool:
    return cloud_target(cluster.target) is not None


def _target(cluster: ResolvedCluster) -> CloudTarget:
    target = cloud_target(cluster.target)
    if target is None:
        raise ValueError(f"target {cluster.target} has no Pulumi program")
    return target


def target_project(cluster: ResolvedCluster, plan: Plan | None) -> Project:
    module = importlib.import_module(f"generator.emit.pulumi_targets.{cluster.target}")
    return module.project(cluster, plan)


def pinned_versions() -> dict[str, str]:
    data = YAML(typ="safe", pure=True).load(
        (templates_dir() / "pulumi" / "versions.yaml").read_text(encoding="utf-8")
    )
    return {str(k): str(v) for k, v in data.items()}


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir() / "pulumi")),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["yaml"] = yaml_scalar  # quoted by the one YAML writer when a reader would not read a string
    return env


def qualified(project: str, key: str) -> str:
    """Stack config keys are `namespace:key`; the program's own keys live in the project namespace."""
    return key if ":" in key else f"{project}:{key}"


def render(cluster: ResolvedCluster, plan: Plan | None) -> dict[str, str]:
    """File name → content of the generated project (deterministic)."""
    proj = target_project(cluster, plan)
    target = _target(cluster)
    env = _env()
    name = cluster.name
    versions = pinned_versions()
    packages = [("pulumi", versions["pulumi"]), *((p, versions[p]) for p in sorted(proj.packages))]
    config = sorted((qualified(name, k), v) for k, v in proj.config.items() if v is not None)
    description = f"{target.title}: {cluster.gpu_count} GPUs on {cluster.node_count} nodes ({name})"
    ctx: dict[str, Any] = {
        "project": name,
        "stack": STACK,
        "target": cluster.target,
        "target_title": target.title,
        "description": description,
        "summary": description[0].upper() + description[1:] + ".",
        "sha": cluster.sha256 or "n/a",
        "components": target.components,
        "config": config,
        "packages": packages,
        "user_config": list(proj.user_config),
        "credentials": proj.credentials,
        "notes": proj.notes,
        "out_hint": "build/pulumi",
    }
    files = {
        "Pulumi.yaml": env.get_template("Pulumi.yaml.j2").render(ctx),
        f"Pulumi.{STACK}.yaml": env.get_template("Pulumi.stack.yaml.j2").render(ctx),
        "requirements.txt": env.get_template("requirements.txt.j2").render(ctx),
        "README.md": env.get_template("README.md.j2").render(ctx),
        "__main__.py": (templates_dir() / "pulumi" / cluster.target / "__main__.py").read_text(
            encoding="utf-8"
        ),
        "cluster.json": json.dumps(proj.data, indent=2, sort_keys=True) + "\n",
        ".gitignore": "venv/\n__pycache__/\n",
    }
    return files


def emit(cluster: ResolvedCluster, plan: Plan, out: Path) -> None:
    for rel, text in sorted(render(cluster, plan).items()):
        atomic_write_text(out / rel, text)


class PulumiEmitter(Emitter):
    name = NAME
    order = 40

    def applies(self, cluster: ResolvedCluster) -> bool:
        return applies(cluster)

    def emit(self, ctx: BuildContext) -> None:
        emit(ctx.cluster, ctx.plan, ctx.out)
