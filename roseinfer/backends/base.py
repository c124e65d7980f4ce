"""The seam between the models and the hardware: what a backend gives layers and the runner.

A backend is chosen once per engine (`roseinfer.backends.select_backend`), from the engine's
flags resolved here into `BackendOptions`. Models get it at construction and hand it to their
layers, which call its ops (`LayerOps`); the loader lets it swap the model's linears
(`prepare_model`); the runner asks it for the paged attention, the sampler's argmax and
logprobs' passes and, for the steps it takes, a fused decoder stack. The interfaces the layers
call (`LayerOps`, `PagedAttention`, `StackStep`) are the layers' own. Nothing outside a backend
asks which one it is, so a CUDA backend slots in by implementing `Backend`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import torch
from torch import nn

from roseinfer.layers.attention import ForwardContext, PagedAttention, StackStep
from roseinfer.layers.kv_cache import KVCacheDtype
from roseinfer.layers.ops import LayerOps

if TYPE_CHECKING:
    from roseinfer.config import EngineConfig
    from roseinfer.layers.kv_cache import KVCache

StepT_contra = TypeVar("StepT_contra", contravariant=True)


class Quantization(Enum):
    """`--quantization`."""

    NONE = "none"
    INT8 = "int8"  # int8 linear weights, a scale per output channel


class AttentionChoice(Enum):
    """`--attention-backend`: which paged attention the `cpu` backend runs."""

    AUTO = "auto"  # the C++ attention kernels where the C++ kernels build, else the reference
    REFERENCE = "reference"  # plain PyTorch (SDPA over gathered blocks)
    KERNEL = "cpu"  # the C++ attention kernels, or an error where they cannot be built


@dataclass(frozen=True)
class BackendOptions:
    """The backend-facing `EngineConfig` flags, turned into enums once (`from_config`)."""

    device: torch.device
    enforce_eager: bool = False
    quantization: Quantization = Quantization.NONE
    attention: AttentionChoice = AttentionChoice.AUTO
    kv_cache_dtype: KVCacheDtype = KVCacheDtype.MODEL

    @classmethod
    def from_config(cls, config: EngineConfig, device: torch.device) -> BackendOptions:
        return cls(
            device=device,
            enforce_eager=config.enforce_eager,
            quantization=Quantization(config.quantization),
            attention=AttentionChoice(config.attention_backend),
            kv_cache_dtype=KVCacheDtype(config.kv_cache_dtype),
        )


class DecoderStack(Protocol[StepT_contra]):
    """A model's whole decoder stack fused into one call, for the steps it can run."""

    def for_step(self, step: StepT_contra, kv_cache: KVCache) -> StackStep | None:
        """The stack bound to this step and cache, or None where the step is not one it runs
        (then the model runs its layers one by one)."""
        ...


@dataclass(frozen=True)
class StackLayer:
    """One Llama-style decoder layer as a fused stack sees it."""

    input_norm: torch.Tensor  # [hidden] RMSNorm weight
    post_norm: torch.Tensor  # [hidden]
    qkv_proj: nn.Module  # the linears as the backend made them (`Backend.make_linear`)
    o_proj: nn.Module
    gate_up_proj: nn.Module  # [gate; up] stacked: down_proj takes SiLU(gate) * up
    down_proj: nn.Module
    q_norm: torch.Tensor | None  # [D] per-head RMSNorm weights (Qwen3), or None
    k_norm: torch.Tensor | None


@dataclass(frozen=True)
class DecoderStackSpec:
    """What a model tells a backend so that it can fuse its layers (`decoder_stack_spec`)."""

    embedding: torch.Tensor  # [vocab, hidden]: the stack looks up a step's rows itself
    layers: tuple[StackLayer, ...]
    final_norm: torch.Tensor  # [hidden]
    eps: float
    num_heads: int
    num_kv_heads: int
    head_dim: int
    scale: float  # attention's softmax scale


class CausalLM(Protocol):
    """What the runner and the backends need of a model (the model classes)."""

    def __call__(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        ctx: ForwardContext[Any],
        output_rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """[N], [N] -> hidden [N, hidden]; with `output_rows` (int64, ascending), those rows'
        alone, [len(output_rows), hidden]: the last layer computes every row's keys and values,
        and its attention output, MLP and the final norm for those rows only (a fused decoder
        stack computes every row, and gives those)."""
        ...

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:  # [B, hidden] -> [B, V]
        ...

    def decoder_stack_spec(self) -> DecoderStackSpec | None:
        """Its layers as a fused stack takes them, or None: no stack runs this model."""
        ...


class Backend(LayerOps, Protocol):
    """How a model computes on one device: its layers' ops, linears, attention and sampling."""

    options: BackendOptions

    @property
    def attention(self) -> PagedAttention[Any]:
        """The paged attention the runner hands the layers (read-only here: a backend keeps
        its own, of its own type)."""
        ...

    def make_linear(self, linear: nn.Linear, quantization: Quantization) -> nn.Module:
        """The layer that computes `linear` here ([..., in] -> [..., out]): packed bf16,
        int8, or the nn.Linear itself."""
        ...

    def prepare_model(self, model: nn.Module) -> None:
        """After its weights are loaded: swap every nn.Linear for `make_linear`'s (in place)."""
        ...

    def argmax(self, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Greedy tokens: logits [B, V] -> (each row's first maximal index [B] int64, that
        maximum [B] fp32), a row's first NaN where it holds one (as torch.max)."""
        ...

    def apply_bitmask(
        self, logits: torch.Tensor, bitmask: torch.Tensor, rows: torch.Tensor
    ) -> None:
        """Grammars' masks, in place: -inf in logits [B, V] row rows[i] where bitmask int32
        [R, ceil(V / 32)] row i forbids the token (`structured.grammar.apply_bitmask`)."""
        ...

    def logsumexp(self, rows: torch.Tensor) -> torch.Tensor:
        """Logprobs' normaliser: rows of logits [R, V] (fp32 or the model's dtype) -> each
        row's log(sum(exp(row))) [R] fp32 (`layers.logprobs.logsumexp_rows`)."""
        ...

    def count_greater(self, rows: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Logprobs' ranks: how many of row r's logits [R, V] exceed values[r] (fp32 [R]) ->
        [R] int64 (`layers.logprobs.count_greater_rows`)."""
        ...

    def top_candidates(self, logits: torch.Tensor, m: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The truncation's candidates: logits [B, V] -> each row's m likeliest logits (fp32
        [B, m]) and ids (int64 [B, m]), likeliest first, equal logits in token order
        (`layers.truncation.likeliest`)."""
        ...

    def sample_candidates(
        self, weights: torch.Tensor, ids: torch.Tensor, u: torch.Tensor
    ) -> torch.Tensor:
        """The draw among each row's candidates: weights fp32 [C, m] >= 0, ids int64 [C, m], u
        float64 [C] -> each row's token [C] int64 (`layers.draw.sample_candidates`)."""
        ...

    def decoder_stack(self, model: CausalLM) -> DecoderStack[Any] | None:
        """The model's layers fused into one call for the steps that can take it, or None."""
        ...
