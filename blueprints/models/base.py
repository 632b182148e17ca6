"""Shared building blocks of the blueprint models."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

# Names reach hostnames, file paths, Jinja, YAML, shell and Pulumi resource names: one safe pattern.
SAFE_NAME_RE = r"^[a-z][a-z0-9-]{0,39}$"
SafeName = Annotated[str, StringConstraints(pattern=SAFE_NAME_RE)]
# Free text (descriptions, reasons) may hold anything printable but no template delimiters.
SafeText = Annotated[str, StringConstraints(max_length=2000, pattern=r"^[^{}%\x00-\x08\x0b-\x1f]*$")]
# Versions and OS ids: letters, digits and . _ - + only.
VersionStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}$")]
PathStr = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._/-]{0,200}$")]
HostStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")]
RuleId = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}\d{3}$")]

SAFE_NAME = re.compile(SAFE_NAME_RE)


class Model(BaseModel):
    """Every blueprint model rejects unknown keys and is immutable once loaded."""

    # use_attribute_docstrings: the docstring under a field is its schema description (editors show it)
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, use_attribute_docstrings=True
    )
