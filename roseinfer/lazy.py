"""Lazy package attributes (PEP 562): a package names what it exports, and each name's module
is imported on first use, so importing the package (or a torch-free module inside it) costs
nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` serving `exports` ({name: module that defines it})."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    return __getattr__
