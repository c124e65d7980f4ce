"""Llama-family decoder (Llama 2/3, SmolLM2, Mistral, Qwen2, Qwen3) over the paged KV cache.

Weights use HF names except two fused projections: `qkv_proj` (q, k, v stacked on the output
dim) and `gate_up_proj` (gate, up). `load_weights` does the stacking. The backend given at
construction computes the norms, rotary and activation, and swaps the linears after loading;
`decoder_stack_spec` describes the layers to a backend that can fuse them.
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from roseinfer.backends.base import Backend, DecoderStackSpec, StackLayer
from roseinfer.layers.activation import SiluAndMul
from roseinfer.layers.attention import ForwardContext
from roseinfer.layers.norm import RMSNorm
from roseinfer.layers.rotary import RotaryEmbedding, RotaryTables
from roseinfer.models.config import ModelConfig


class LlamaAttention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int, backend: Backend) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.ops = backend
        self.num_heads, self.num_kv_heads, self.head_dim = (
            cfg.num_heads,
            cfg.num_kv_heads,
            cfg.head_dim,
        )
        self.q_size = cfg.num_heads * cfg.head_dim
        self.kv_size = cfg.num_kv_heads * cfg.head_dim
        self.qkv_proj = nn.Linear(
            cfg.hidden_size, self.q_size + 2 * self.kv_size, bias=cfg.qkv_bias
        )
        self.o_proj = nn.Linear(self.q_size, cfg.hidden_size, bias=False)
        self.q_norm = RMSNorm(cfg.head_dim, cfg.norm_eps, backend) if cfg.qk_norm else None
        self.k_norm = RMSNorm(cfg.head_dim, cfg.norm_eps, backend) if cfg.qk_norm else None
        self.scale = cfg.head_dim**-0.5

    def forward(
        self,
        x: torch.Tensor,
        rope: RotaryTables,
        ctx: ForwardContext,
        rows: torch.Tensor | None = None,  # the rows whose output is read; None: every row
    ) -> torch.Tensor:  # [N or len(rows), hidden]
        qkv = self.qkv_proj(x)  # [N, q + 2 kv]
        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(-1, self.num_heads, self.head_dim)  # [N, H, D]
        k = k.view(-1, self.num_kv_heads, self.head_dim)  # [N, KVH, D]
        v = v.view(-1, self.num_kv_heads, self.head_dim)
        if self.q_norm is not None and self.k_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = self.ops.rotary(q, k, rope.cos, rope.sin)
        out = ctx.attend(self.layer_idx, q, k, v, self.scale, rows)  # [N or len(rows), H, D]
        if out.shape[0] == 0:  # no row read: the keys and values were all this step needed
            return x[:0]
        return self.o_proj(out.reshape(-1, self.q_size))


class LlamaMLP(nn.Module):
    def __init__(self, cfg: ModelConfig, backend: Backend) -> None:
        super().__init__()
        self.intermediate_size = cfg.intermediate_size
        self.gate_up_proj = nn.Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)
        self.act = SiluAndMul(backend)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.act(self.gate_up_proj, x))


class LlamaDecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int, backend: Backend) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.norm_eps, backend)
        self.self_attn = LlamaAttention(cfg, layer_idx, backend)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.norm_eps, backend)
        self.mlp = LlamaMLP(cfg, backend)

    def forward(
        self,
        x: torch.Tensor,  # [N, hidden]: the previous layer's MLP output
        residual: torch.Tensor | None,  # [N, hidden]: the residual stream before adding x
        rope: RotaryTables,
        ctx: ForwardContext,
        rows: torch.Tensor | None = None,  # the rows whose output is read; None: every row
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if residual is None:
            residual, x = x, self.input_layernorm(x)
        else:
            x, residual = self.input_layernorm(x, residual)
        x = self.self_attn(x, rope, ctx, rows)
        if rows is not None:
            residual = residual[rows]
            if x.shape[0] == 0:
                return x, residual
        x, residual = self.post_attention_layernorm(x, residual)
        return self.mlp(x), residual


class LlamaModel(nn.Module):
    def __init__(self, cfg: ModelConfig, backend: Backend) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(
            LlamaDecoderLayer(cfg, i, backend) for i in range(cfg.num_layers)
        )
        self.norm = RMSNorm(cfg.hidden_size, cfg.norm_eps, backend)

    def decoder_layers(self) -> list[LlamaDecoderLayer]:
        """`layers` as their own class (a ModuleList's items are typed as any Module)."""
        return cast(list[LlamaDecoderLayer], list(self.layers))


class LlamaForCausalLM(nn.Module):
    def __init__(self, cfg: ModelConfig, backend: Backend) -> None:
        super().__init__()
        self.config = cfg
        self.model = LlamaModel(cfg, backend)
        self.rotary = RotaryEmbedding(
            cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta, cfg.rope_scaling
        )
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.tie_weights()

    def tie_weights(self) -> None:
        """Share the embedding with the LM head (again after `to_empty`, which unties them)."""
        if self.config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        ctx: ForwardContext,
        output_rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        # input_ids, positions: [N] -> hidden [N, hidden], or the `output_rows`' (CausalLM)
        if ctx.decoder_stack is not None:  # the backend runs this step in one call
            cos, sin = self.rotary.tables(self.model.embed_tokens.weight.dtype)
            hidden = ctx.decoder_stack(input_ids, positions, cos, sin)
            return hidden if output_rows is None else hidden[output_rows]
        x = self.model.embed_tokens(input_ids)
        rope = self.rotary(positions, x.dtype)
        residual = None
        *layers, last = self.model.layers
        for layer in layers:
            x, residual = layer(x, residual, rope, ctx)
        x, residual = last(x, residual, rope, ctx, output_rows)
        if x.shape[0] == 0:
            return x
        x, _ = self.model.norm(x, residual)
        return x

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden)  # [B, vocab]

    def decoder_stack_spec(self) -> DecoderStackSpec:
        """The layers' weights and linears, in the order a fused decoder stack runs them."""
        layers = []
        decoder_layers = self.model.decoder_layers()
        for layer in decoder_layers:
            attn, mlp = layer.self_attn, layer.mlp
            layers.append(
                StackLayer(
                    input_norm=layer.input_layernorm.weight,
                    post_norm=layer.post_attention_layernorm.weight,
                    qkv_proj=attn.qkv_proj,
                    o_proj=attn.o_proj,
                    gate_up_proj=mlp.gate_up_proj,
                    down_proj=mlp.down_proj,
                    q_norm=None if attn.q_norm is None else attn.q_norm.weight,
                    k_norm=None if attn.k_norm is None else attn.k_norm.weight,
                )
            )
        cfg = self.config
        return DecoderStackSpec(
            embedding=self.model.embed_tokens.weight,
            layers=tuple(layers),
            final_norm=self.model.norm.weight,
            eps=cfg.norm_eps,
            num_heads=cfg.num_heads,
            num_kv_heads=cfg.num_kv_heads,
            head_dim=cfg.head_dim,
            scale=decoder_layers[0].self_attn.scale,
        )

    def load_weights(self, weights: dict[str, torch.Tensor]) -> None:
        """Load HF-named tensors, stacking q/k/v and gate/up into the fused projections."""
        weights = dict(weights)
        for i in range(self.config.num_layers):
            attn, mlp = f"model.layers.{i}.self_attn.", f"model.layers.{i}.mlp."
            for suffix in ("weight", "bias"):
                qkv = [weights.pop(f"{attn}{p}_proj.{suffix}", None) for p in "qkv"]
                found = [t for t in qkv if t is not None]
                if len(found) == len(qkv):
                    weights[f"{attn}qkv_proj.{suffix}"] = torch.cat(found, dim=0)
            gate_up = [weights.pop(f"{mlp}{p}_proj.weight", None) for p in ("gate", "up")]
            found = [t for t in gate_up if t is not None]
            if len(found) == len(gate_up):
                weights[f"{mlp}gate_up_proj.weight"] = torch.cat(found, dim=0)
        if self.config.tie_word_embeddings:
            weights.pop("lm_head.weight", None)
        load_state(self, weights)


def load_state(model: nn.Module, weights: dict[str, torch.Tensor]) -> None:
    """Copy `weights` into `model`'s parameters, naming what is missing or unexpected."""
    params = dict(model.named_parameters())
    missing = sorted(set(params) - set(weights))
    if missing:
        raise ValueError(
            f"checkpoint is missing weights: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}"
        )
    unexpected = sorted(
        k for k in set(weights) - set(params) if not k.endswith("rotary_emb.inv_freq")
    )
    if unexpected:
        raise ValueError(f"checkpoint has unexpected weights: {', '.join(unexpected[:5])}")
    with torch.no_grad():
        for name, param in params.items():
            tensor = weights[name]
            if tuple(tensor.shape) != tuple(param.shape):
                raise ValueError(
                    f"weight {name} has shape {tuple(tensor.shape)}, expected {tuple(param.shape)}"
                )
            param.copy_(tensor.to(param.dtype))
