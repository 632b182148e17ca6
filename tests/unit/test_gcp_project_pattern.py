"""One GCP project-id pattern: the stack-output reader (generator/deploy/stack_outputs.py) and the blueprint's
GCP image check (blueprints/models/deployment.py) read the same compiled pattern, defined in the lower layer."""

from __future__ import annotations


def test_one_project_id_pattern() -> None:
    from blueprints.models import deployment
    from generator.deploy import stack_outputs

    assert stack_outputs.GCP_PROJECT is deployment.GCP_PROJECT
    assert deployment.GCP_PROJECT.fullmatch("ubuntu-os-accelerator-images")
    assert not deployment.GCP_PROJECT.fullmatch("proj")  # 6-30 characters
