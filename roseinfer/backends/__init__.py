"""Backends: how a model computes on a device (`base.Backend`), chosen once per engine.

- `torch` (`torch_ref.py`): plain PyTorch, on CPU or CUDA; `--enforce-eager` everywhere.
- `cpu` (`cpu.py`): the C++ kernels, on x86-64 CPUs where they build.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import torch

from roseinfer.backends.base import (
    AttentionChoice,
    Backend,
    BackendOptions,
    DecoderStackSpec,
    Quantization,
    StackLayer,
)
from roseinfer.backends.cpu import CpuBackend
from roseinfer.backends.torch_ref import TorchBackend
from roseinfer.config import EngineConfig
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.linear import can_pack

if TYPE_CHECKING:
    from roseinfer.kernels._ext import CppKernels

__all__ = [
    "AttentionChoice",
    "Backend",
    "BackendOptions",
    "CpuBackend",
    "DecoderStackSpec",
    "Quantization",
    "StackLayer",
    "TorchBackend",
    "backend_for",
    "select_backend",
]


def select_backend(config: EngineConfig, device: torch.device) -> Backend:
    """The backend an engine with `config` runs on `device`: `cpu` on CPU unless
    `--enforce-eager` (or the C++ kernels do not build here), else `torch`."""
    return backend_for(BackendOptions.from_config(config, device))


def backend_for(options: BackendOptions) -> Backend:
    """`select_backend` on flags already resolved."""
    if options.quantization is Quantization.INT8 and options.device.type != "cpu":
        raise ValueError("--quantization int8 is implemented for CPU only")
    if options.attention is AttentionChoice.KERNEL and options.device.type != "cpu":
        raise ValueError("--attention-backend cpu runs on CPU only")
    if options.device.type != "cpu":
        return TorchBackend(options)
    if options.enforce_eager:  # plain PyTorch: no C++ loaded, not even for attention
        if options.attention is AttentionChoice.KERNEL:
            raise ValueError(
                "--attention-backend cpu needs the C++ kernels: not with --enforce-eager"
            )
        return TorchBackend(options)
    kernels = cast("CppKernels | None", load_cpu_kernels())  # typed by kernels/_ext.pyi
    if kernels is not None:
        return CpuBackend(options, kernels)
    if options.attention is AttentionChoice.KERNEL:
        raise RuntimeError("--attention-backend cpu: the C++ kernel could not be built (see log)")
    # No compiler here: PyTorch, with bf16 weights still prepacked for oneDNN.
    return TorchBackend(options, pack_bf16_linears=can_pack(torch.bfloat16, options.device))
