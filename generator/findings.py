"""Findings (rule results and load problems) with severities and source locations."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]

    def __str__(self) -> str:
        return self.name.lower()


Path = tuple[str | int, ...]


def dotted(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass(frozen=True, order=True)
class Location:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    path: Path = ()
    hint: str | None = None
    location: Location | None = None

    def located(self, location: Location | None) -> Finding:
        return replace(self, location=location)

    def sort_key(self) -> tuple[Any, ...]:
        loc = self.location or Location("", 0, 0)
        return (loc.file, loc.line, loc.column, -int(self.severity), self.rule, self.message)

    def as_dict(self) -> dict[str, Any]:
        loc = self.location
        return {
            "rule": self.rule,
            "severity": str(self.severity),
            "file": loc.file if loc else None,
            "line": loc.line if loc else None,
            "column": loc.column if loc else None,
            "path": dotted(self.path),
            "message": self.message,
            "hint": self.hint,
        }


class BlueprintError(Exception):
    """The input cannot be used (unreadable, not YAML, schema errors). Carries located findings."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__("; ".join(f.message for f in findings))
        self.findings = sorted(findings, key=Finding.sort_key)
