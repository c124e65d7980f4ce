"""The `torch` backend: plain PyTorch everywhere, on CPU or CUDA. The reference the `cpu`
backend is tested against, and `--enforce-eager`: it loads no C++."""

from __future__ import annotations

import torch
from torch import nn

from roseinfer.backends.base import BackendOptions, CausalLM, DecoderStack, Quantization
from roseinfer.layers.activation import silu_and_mul
from roseinfer.layers.attention import ReferenceAttention
from roseinfer.layers.draw import sample_candidates
from roseinfer.layers.linear import Int8Linear, PackedLinear, can_pack, replace_linears
from roseinfer.layers.logprobs import count_greater_rows, logsumexp_rows
from roseinfer.layers.norm import add_rms_norm, rms_norm
from roseinfer.layers.rotary import rotate
from roseinfer.layers.sampler import greedy_argmax
from roseinfer.layers.truncation import likeliest
from roseinfer.structured.grammar import apply_bitmask


class TorchBackend:
    """F.linear (or aten's weight-only int8 matmul), unfused norms, rotary and activation,
    SDPA over the gathered cache blocks, `torch.max` for greedy tokens; no decoder stack."""

    # The ops are the layers' own PyTorch functions: no call in between.
    rms_norm = staticmethod(rms_norm)
    add_rms_norm = staticmethod(add_rms_norm)
    rotary = staticmethod(rotate)
    silu_mul = staticmethod(silu_and_mul)
    argmax = staticmethod(greedy_argmax)
    apply_bitmask = staticmethod(apply_bitmask)
    logsumexp = staticmethod(logsumexp_rows)
    count_greater = staticmethod(count_greater_rows)
    top_candidates = staticmethod(likeliest)
    sample_candidates = staticmethod(sample_candidates)

    def gate_up_silu_mul(self, gate_up: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return silu_and_mul(gate_up(x))

    def __init__(self, options: BackendOptions, pack_bf16_linears: bool = False) -> None:
        """`pack_bf16_linears`: bf16 linears in oneDNN's blocked layout (still plain PyTorch),
        as on a CPU where the C++ kernels do not build; not with `--enforce-eager`."""
        self.options = options
        self.pack_bf16_linears = pack_bf16_linears
        self.attention = ReferenceAttention()

    def make_linear(self, linear: nn.Linear, quantization: Quantization) -> nn.Module:
        if quantization is Quantization.INT8:
            return Int8Linear(linear)
        if self.pack_bf16_linears and can_pack(linear.weight.dtype, linear.weight.device):
            return PackedLinear(linear)
        return linear

    def prepare_model(self, model: nn.Module) -> None:
        quantization = self.options.quantization
        replace_linears(model, lambda linear: self.make_linear(linear, quantization))

    def decoder_stack(self, model: CausalLM) -> DecoderStack[object] | None:
        return None
