"""What one soak client sends next, and what its answer must hold (`soak_cases.py`,
`soak_llamacpp.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    """What one client sends next, and what a 200 must hold (`check` returns a fault or None)."""

    kind: str
    path: str
    body: dict | bytes
    status: int = 200
    check: Callable[[dict], str | None] | None = None
    repeat: bool = False  # sent twice in a row: both answers must be the same text
