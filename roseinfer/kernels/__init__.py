"""C++ CPU kernels, compiled on first use with torch's JIT extension builder and cached.

The first build takes about a minute on 2 cores; later processes load the cached library from
`$TORCH_EXTENSIONS_DIR` (default `~/.cache/torch_extensions`) in well under a second. Where no
C++ compiler is found the build fails, `load_cpu_kernels` returns None and the engine keeps the
plain PyTorch path (reference attention, unfused layers, aten's int8 matmul). Which kernel runs
where is decided in one place, the `cpu` backend (`roseinfer/backends/cpu.py`); `_ext.pyi` types
the extension's functions and classes.
"""

from __future__ import annotations

import functools
import logging
import platform
from types import ModuleType

logger = logging.getLogger(__name__)


@functools.cache
def load_cpu_kernels() -> ModuleType | None:
    """The compiled extension, or None (logged once) where it cannot be built on this machine."""
    # First: a $ROSEINFER_KERNEL_ISA it does not know stops the start, naming it, on any CPU.
    from roseinfer.kernels.build import load_kernels

    if platform.machine() not in ("x86_64", "AMD64"):
        logger.info("CPU kernels are built for x86-64 only; using the plain PyTorch path")
        return None
    try:
        return load_kernels()
    except Exception as exc:  # no compiler, no ninja, unsupported flags: fall back, loudly
        logger.warning(
            "could not build the C++ CPU kernels (%s); using the plain PyTorch path", exc
        )
        return None
