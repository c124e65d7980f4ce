"""The `cpu` backend: the C++ kernels (`roseinfer/kernels/`) on x86-64 CPUs.

Every choice between kernels is made here and in `cpu_linear.py` / `cpu_attention.py`, once,
from what this CPU has (AMX, AVX512-BF16, AVX512-VNNI) and the layer's shapes: models and layers
only call the backend's ops and the layers it made. `--attention-backend reference` keeps the
plain PyTorch attention (and so no decoder stack) with the other kernels.
"""

from __future__ import annotations

import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn

from roseinfer.backends.base import AttentionChoice, BackendOptions, CausalLM, Quantization
from roseinfer.backends.cpu_attention import KernelPagedAttention, KernelStep
from roseinfer.backends.cpu_linear import (
    KernelDenseLinear,
    KernelDpbf16Linear,
    KernelInt8Linear,
    KernelPackedLinear,
    dense_kernel_rows,
)
from roseinfer.layers.activation import silu_and_mul
from roseinfer.layers.attention import ReferenceAttention, StackStep
from roseinfer.layers.draw import sample_candidates
from roseinfer.layers.huge_pages import HugePageArena
from roseinfer.layers.linear import can_pack, replace_linears
from roseinfer.layers.logprobs import count_greater_rows, logsumexp_rows
from roseinfer.layers.norm import add_rms_norm, rms_norm
from roseinfer.layers.sampler import greedy_argmax
from roseinfer.layers.truncation import likeliest
from roseinfer.structured.grammar import apply_bitmask

if TYPE_CHECKING:
    from roseinfer.kernels._ext import CppKernels, DecodeLinear, DecodeStack
    from roseinfer.layers.kv_cache import KVCache


@dataclass(frozen=True)
class CpuDecoderStack:
    """A Llama-style model's layers as one C++ call per step (`roseinfer/kernels/
    decode_stack.cpp`): the same kernels in the same order as the layers, so the same logits,
    without Python between them. It runs the steps that attend through the decode kernel only
    (decodes; small prefill steps, token by token) of up to `max_rows` tokens."""

    stack: DecodeStack
    max_rows: int  # its linears' row limit (`AMX_ROWS`, `SMALL_BATCH_ROWS`, or any)

    def for_step(self, step: KernelStep, kv_cache: KVCache) -> StackStep | None:
        if not step.kernel_only or step.num_tokens > self.max_rows:
            return None
        stack, caches, d = self.stack, kv_cache.stack_args, step.decode
        indices = (d.slot_mapping, d.block_tables, d.context_lens)
        return lambda ids, positions, cos, sin: stack.forward(
            ids, positions, cos, sin, *caches, *indices
        )


# Built once per model (runners of one model share it: it holds no per-engine state).
_STACKS: weakref.WeakKeyDictionary[CausalLM, CpuDecoderStack | None] = weakref.WeakKeyDictionary()


class CpuBackend:
    """The C++ kernels for norms, rotary, activation, argmax, linears and paged attention."""

    def __init__(self, options: BackendOptions, kernels: CppKernels) -> None:
        self.options = options
        self.kernels = kernels
        self.attention: KernelPagedAttention | ReferenceAttention = (
            ReferenceAttention()
            if options.attention is AttentionChoice.REFERENCE
            else KernelPagedAttention(kernels)
        )
        # The weights the linears pack, in 2 MB pages (layers/huge_pages.py).
        self.weights = HugePageArena()

    # ---- layer ops: the kernels take the shapes the models pass; anything else, PyTorch ----
    def rms_norm(self, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        if x.dim() in (2, 3):
            return self.kernels.rms_norm(x, weight, eps)
        return rms_norm(x, weight, eps)

    def add_rms_norm(
        self, x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if x.dim() == 2:  # the kernel adds x into `residual` in place
            return self.kernels.add_rms_norm(x, residual, weight, eps), residual
        return add_rms_norm(x, residual, weight, eps)

    def rotary(
        self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        self.kernels.rotary_embedding(q, k, cos, sin)  # in place
        return q, k

    def silu_mul(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 2:
            return self.kernels.silu_and_mul(x)
        return silu_and_mul(x)

    def gate_up_silu_mul(self, gate_up: nn.Module, x: torch.Tensor) -> torch.Tensor:
        # The kernel layers run SiLU·mul in a gated projection's epilogue (`gated_layout`).
        if isinstance(gate_up, KernelDpbf16Linear | KernelInt8Linear | KernelPackedLinear):
            return gate_up.silu_mul(x)
        return self.silu_mul(gate_up(x))

    def argmax(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # Several times faster than torch.max on bf16 rows (BENCHMARKS.md, session 4).
        if _rows_in_place(logits):
            return self.kernels.argmax_rows(logits)
        return greedy_argmax(logits)

    def apply_bitmask(
        self, logits: torch.Tensor, bitmask: torch.Tensor, rows: torch.Tensor
    ) -> None:
        # The kernel writes only the forbidden logits; the torch version expands every bit.
        if _rows_in_place(logits):
            self.kernels.apply_token_bitmask(logits, bitmask, rows)
        else:
            apply_bitmask(logits, bitmask, rows)

    # torch's passes take 20-90x longer over 800 rows of 49,152 bf16 logits (a long prompt's
    # prompt_logprobs): a float copy, then (x - max).exp().sum() and (x > v).sum() in passes of
    # their own (BENCHMARKS.md, session 49).
    def logsumexp(self, rows: torch.Tensor) -> torch.Tensor:
        if _rows_in_place(rows):
            return self.kernels.logsumexp_rows(rows)
        return logsumexp_rows(rows)

    def count_greater(self, rows: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        if _rows_in_place(rows):
            return self.kernels.count_greater_rows(rows, values.contiguous())
        return count_greater_rows(rows, values)

    # A selection of each row's likeliest in one pass, ~5x torch.topk on 49,152 logits
    # (BENCHMARKS.md session 57).
    def top_candidates(self, logits: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
        if _rows_in_place(logits):
            return self.kernels.top_candidates_rows(logits, m)
        return likeliest(logits, m)

    def sample_candidates(
        self, weights: torch.Tensor, ids: torch.Tensor, u: torch.Tensor
    ) -> torch.Tensor:
        if weights.device.type == "cpu":
            return self.kernels.sample_candidates_rows(
                weights.contiguous(), ids.contiguous(), u.contiguous()
            )
        return sample_candidates(weights, ids, u)

    # ---- linears ---------------------------------------------------------------------------
    def make_linear(
        self,
        linear: nn.Linear,
        quantization: Quantization,
        lm_head: bool = False,
        gated: bool = False,  # a gated projection [gate; up] (a stack layer's gate_up_proj)
    ) -> nn.Module:
        if quantization is Quantization.INT8:
            return KernelInt8Linear(linear, self.kernels, self.weights, gated)
        if KernelDpbf16Linear.fits(linear, self.kernels):
            return KernelDpbf16Linear(linear, self.kernels, self.weights, gated)
        if can_pack(linear.weight.dtype, linear.weight.device):
            return KernelPackedLinear(linear, self.kernels, self.weights, gated)
        rows = dense_kernel_rows(self.kernels.vector_lanes())
        if rows == 0:
            return linear  # F.linear (the decoder stack runs it as "dense")
        return KernelDenseLinear(linear, self.kernels, rows, pack_many_rows=not lm_head)

    def prepare_model(self, model: nn.Module) -> None:
        quantization = self.options.quantization
        lm_head = getattr(model, "lm_head", None)
        # The linears a stack's layers name as gate_up_proj (still nn.Linear here): packed so
        # that SiLU·mul runs in their epilogue (`gate_up_silu_mul`, the stack's MLP).
        stack_spec = getattr(model, "decoder_stack_spec", None)
        spec = stack_spec() if stack_spec is not None else None
        gated = {id(layer.gate_up_proj) for layer in spec.layers} if spec is not None else set()
        replace_linears(
            model,
            lambda linear: self.make_linear(
                linear, quantization, linear is lm_head, id(linear) in gated
            ),
        )

    # ---- the decoder stack -------------------------------------------------------------------
    def decoder_stack(self, model: CausalLM) -> CpuDecoderStack | None:
        """Where the decode kernel attends and every layer of the model has a C++ decode
        kernel: its stack (built on first use, then shared), else None."""
        if not isinstance(self.attention, KernelPagedAttention):
            return None  # the stack attends through the decode kernel only
        if model not in _STACKS:
            _STACKS[model] = self._build_stack(model)
        return _STACKS[model]

    def _build_stack(self, model: CausalLM) -> CpuDecoderStack | None:
        spec = model.decoder_stack_spec()
        if spec is None:
            return None
        layers, max_rows = [], sys.maxsize
        for layer in spec.layers:
            linears: list[DecodeLinear] = []
            for module in (layer.qkv_proj, layer.o_proj, layer.gate_up_proj, layer.down_proj):
                prepared = self._decode_linear(module)
                if prepared is None:
                    return None
                linears.append(prepared[0])
                max_rows = min(max_rows, prepared[1])
            qkv, o_proj, gate_up_proj, down_proj = linears
            layers.append(
                self.kernels.DecodeLayer(
                    layer.input_norm,
                    layer.post_norm,
                    qkv,
                    o_proj,
                    gate_up_proj,
                    down_proj,
                    layer.q_norm,
                    layer.k_norm,
                )
            )
        stack = self.kernels.DecodeStack(
            spec.embedding,
            layers,
            spec.final_norm,
            spec.eps,
            spec.num_heads,
            spec.num_kv_heads,
            spec.head_dim,
            spec.scale,
        )
        return CpuDecoderStack(stack, max_rows)

    def _decode_linear(self, module: nn.Module) -> tuple[DecodeLinear, int] | None:
        """(the C++ kernel of a linear this backend made, rows up to which it runs), or None."""
        if isinstance(
            module, KernelPackedLinear | KernelDpbf16Linear | KernelInt8Linear | KernelDenseLinear
        ):
            return module.decode_linear()
        if type(module) is nn.Linear:  # fp32/fp16 weights: aten's linear, as F.linear
            dense = self.kernels.DecodeLinear("dense", module.weight, None, module.bias)
            return dense, sys.maxsize
        return None


def _rows_in_place(logits: torch.Tensor) -> bool:
    """Whether the row kernels (argmax, bitmask, logprobs' passes) read `logits` [B, V] in
    place: on the CPU, each row contiguous."""
    return logits.device.type == "cpu" and logits.stride(-1) == 1
