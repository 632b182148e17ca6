"""The error of a blueprint that cannot be turned into a physical plan."""

from __future__ import annotations


class PlanError(ValueError):
    """The blueprint cannot be turned into a physical plan; ``path`` says which part of it."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path
