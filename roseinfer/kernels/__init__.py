"""C++ CPU kernels, compiled on first use with torch's JIT extension builder and cached.

The first build takes about a minute on 2 cores; later processes load the cached library from
`$TORCH_EXTENSIONS_DIR` (default `~/.cache/torch_extensions`) in well under a second. Where no
C++ compiler is found the build fails, `load_cpu_kernels` returns None and the engine keeps the
plain PyTorch path (reference attention, unfused layers, aten's int8 matmul).
"""

from __future__ import annotations

import functools
import logging
import platform
from types import ModuleType

from torch import nn

logger = logging.getLogger(__name__)


@functools.cache
def load_cpu_kernels() -> ModuleType | None:
    """The compiled extension, or None (logged once) where it cannot be built on this machine."""
    if platform.machine() not in ("x86_64", "AMD64"):
        logger.info("CPU kernels are built for x86-64 only; using the plain PyTorch path")
        return None
    try:
        from roseinfer.kernels.build import load_kernels

        return load_kernels()
    except Exception as exc:  # no compiler, no ninja, unsupported flags: fall back, loudly
        logger.warning(
            "could not build the C++ CPU kernels (%s); using the plain PyTorch path", exc
        )
        return None


def uses_cpu_kernels(device: str, enforce_eager: bool) -> bool:
    """Whether an engine on `device` runs the C++ kernels (not with `--enforce-eager`)."""
    return device == "cpu" and not enforce_eager


def cpu_kernels_for(device: str, enforce_eager: bool) -> ModuleType | None:
    """The kernels an engine on `device` runs, or None (off CPU, `--enforce-eager`, no build)."""
    return load_cpu_kernels() if uses_cpu_kernels(device, enforce_eager) else None


def attach_cpu_kernels(model: nn.Module) -> bool:
    """Route the model's fused-op layers (norms, rotary, activation) and its decode linears to
    the C++ kernels. Returns False, changing nothing, where the kernels cannot be built."""
    kernels = load_cpu_kernels()
    if kernels is None:
        return False
    # Children first: a model's `attach_kernels` builds on its layers' prepared weights.
    for module in reversed(list(model.modules())):
        if hasattr(module, "attach_kernels"):  # layers that prepare weights for their kernel
            module.attach_kernels(kernels)
        elif hasattr(module, "kernels"):
            module.kernels = kernels
    return True
