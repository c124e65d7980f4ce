"""GPT-2 over the paged KV cache. Weight names follow HF's `GPT2LMHeadModel` (Conv1D weights
are stored [in, out] there and transposed on load). Its LayerNorm and GELU are PyTorch's on every
backend; the backend swaps the linears after loading and attends through `ctx`."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from roseinfer.backends.base import Backend, DecoderStackSpec
from roseinfer.layers.attention import ForwardContext
from roseinfer.models.config import ModelConfig
from roseinfer.models.llama import load_state

_CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


class GPT2Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        self.layer_idx, self.num_heads, self.head_dim = layer_idx, cfg.num_heads, cfg.head_dim
        self.c_attn = nn.Linear(cfg.hidden_size, 3 * cfg.hidden_size)
        self.c_proj = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.scale = cfg.head_dim**-0.5

    def forward(
        self,
        x: torch.Tensor,
        ctx: ForwardContext,
        rows: torch.Tensor | None = None,  # the rows whose output is read; None: every row
    ) -> torch.Tensor:  # [N or len(rows), hidden]
        q, k, v = (
            self.c_attn(x).view(-1, 3, self.num_heads, self.head_dim).unbind(1)
        )  # 3 x [N, H, D]
        out = ctx.attend(self.layer_idx, q, k, v, self.scale, rows)  # [N or len(rows), H, D]
        if out.shape[0] == 0:  # no row read: the keys and values were all this step needed
            return x[:0]
        return self.c_proj(out.reshape(out.shape[0], -1))


class GPT2Block(nn.Module):
    def __init__(self, cfg: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.hidden_size, eps=cfg.norm_eps)
        self.attn = GPT2Attention(cfg, layer_idx)
        self.ln_2 = nn.LayerNorm(cfg.hidden_size, eps=cfg.norm_eps)
        self.mlp = nn.ModuleDict(
            {
                "c_fc": nn.Linear(cfg.hidden_size, cfg.intermediate_size),
                "c_proj": nn.Linear(cfg.intermediate_size, cfg.hidden_size),
            }
        )

    def forward(
        self, x: torch.Tensor, ctx: ForwardContext, rows: torch.Tensor | None = None
    ) -> torch.Tensor:
        a = self.attn(self.ln_1(x), ctx, rows)
        if rows is not None:
            x = x[rows]
            if x.shape[0] == 0:
                return x
        x = x + a
        h = F.gelu(self.mlp["c_fc"](self.ln_2(x)), approximate="tanh")
        return x + self.mlp["c_proj"](h)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, cfg: ModelConfig, backend: Backend) -> None:
        """`backend`: taken for a uniform `build_model`; GPT-2 has no layer it computes."""
        super().__init__()
        self.config = cfg
        self.transformer = nn.ModuleDict(
            {
                "wte": nn.Embedding(cfg.vocab_size, cfg.hidden_size),
                "wpe": nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size),
                "h": nn.ModuleList(GPT2Block(cfg, i) for i in range(cfg.num_layers)),
                "ln_f": nn.LayerNorm(cfg.hidden_size, eps=cfg.norm_eps),
            }
        )
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        self.tie_weights()

    def tie_weights(self) -> None:
        wte = self.transformer["wte"]
        assert isinstance(wte, nn.Embedding)
        self.lm_head.weight = wte.weight

    def forward(
        self,
        input_ids: torch.Tensor,
        positions: torch.Tensor,
        ctx: ForwardContext,
        output_rows: torch.Tensor | None = None,
    ) -> torch.Tensor:
        # input_ids, positions: [N] -> hidden [N, hidden], or the `output_rows`' (CausalLM)
        t = self.transformer
        x = t["wte"](input_ids) + t["wpe"](positions)  # [N, hidden]
        h = t["h"]
        assert isinstance(h, nn.ModuleList)
        *blocks, last = h
        for block in blocks:
            x = block(x, ctx)
        x = last(x, ctx, output_rows)
        return x if x.shape[0] == 0 else t["ln_f"](x)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.lm_head(hidden)

    def decoder_stack_spec(self) -> DecoderStackSpec | None:
        return None  # the fused stacks are Llama-shaped (RMSNorm, gated MLP, rotary)

    def load_weights(self, weights: dict[str, torch.Tensor]) -> None:
        out: dict[str, torch.Tensor] = {}
        for name, tensor in weights.items():
            if name.endswith((".attn.bias", ".attn.masked_bias")) or name == "lm_head.weight":
                continue  # causal-mask buffers of old checkpoints; the head is tied
            if not name.startswith("transformer."):
                name = "transformer." + name
            if name.endswith(_CONV1D):
                tensor = tensor.t()
            out[name] = tensor
        load_state(self, out)
