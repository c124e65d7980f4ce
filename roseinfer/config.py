"""Configuration dataclasses, validated at the edge.

`EngineConfig` holds every engine setting; CLI flags map one-to-one onto its fields
(`add_engine_args` / `EngineConfig.from_args`). `SamplingParams` is per request.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from typing import Any

DTYPES = ("auto", "float32", "bfloat16", "float16")
QUANTIZATIONS = ("none", "int8")
ATTENTION_BACKENDS = ("auto", "reference", "cpu")
KV_CACHE_DTYPES = ("auto", "int8")


@dataclass(frozen=True)
class SamplingParams:
    """How one request is sampled and when it stops.

    Greedy decoding when `do_sample` is False or `temperature` is 0.
    """

    max_new_tokens: int = 64
    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    do_sample: bool = True
    stop_on_eos: bool = True
    min_tokens: int = 0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.max_new_tokens, bool) or not isinstance(self.max_new_tokens, int):
            raise ValueError(f"max_new_tokens must be an integer, got {self.max_new_tokens!r}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be at least 1, got {self.max_new_tokens}")
        if not isinstance(self.temperature, int | float) or self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature!r}")
        if not isinstance(self.top_p, int | float) or not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0:
            raise ValueError(f"top_k must be an integer >= 0 (0 disables it), got {self.top_k!r}")
        if self.min_tokens < 0 or self.min_tokens > self.max_new_tokens:
            raise ValueError(
                f"min_tokens must be in [0, max_new_tokens={self.max_new_tokens}], got {self.min_tokens}"
            )
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(s for s in self.stop if s))
        object.__setattr__(self, "stop_token_ids", tuple(int(t) for t in self.stop_token_ids))

    @property
    def greedy(self) -> bool:
        return not self.do_sample or self.temperature == 0.0


@dataclass(frozen=True)
class EngineConfig:
    """Every engine setting. Each field is one CLI flag (`--max-num-seqs`, ...)."""

    model: str | None = field(
        default=None,
        metadata={"help": "model: 'smollm2' (default), a HF model directory, or a .gguf file"},
    )
    hf_model_id: str | None = field(
        default=None, metadata={"help": "a model id resolved from the local HF cache only"}
    )
    checkpoint_path: str | None = field(
        default=None, metadata={"help": "a trainer checkpoint (.pt, GPT-2 state dict)"}
    )
    tokenizer_name: str | None = field(
        default=None,
        metadata={"help": "tokenizer for --checkpoint-path: a directory or a cached HF id"},
    )
    device: str = field(default="cpu", metadata={"help": "cpu or cuda"})
    dtype: str = field(
        default="auto",
        metadata={"help": "auto|float32|bfloat16|float16 (auto: bf16 where fast, else fp32)"},
    )
    quantization: str = field(
        default="none",
        metadata={
            "help": "none|int8 (int8 linear layers; on CPUs with VNNI and no AMX the activations too)"
        },
    )
    max_num_seqs: int = field(default=64, metadata={"help": "max requests running at once"})
    max_num_batched_tokens: int = field(
        default=512, metadata={"help": "max tokens (prefill + decode) in one step"}
    )
    max_model_len: int | None = field(
        default=None, metadata={"help": "context window (default: the model's)"}
    )
    block_size: int = field(default=16, metadata={"help": "tokens per KV-cache block"})
    kv_cache_memory: float = field(default=1.0, metadata={"help": "KV-cache memory budget in GiB"})
    num_kv_blocks: int | None = field(
        default=None, metadata={"help": "exact number of KV blocks (overrides --kv-cache-memory)"}
    )
    kv_cache_dtype: str = field(
        default="auto",
        metadata={
            "help": "auto (the model's dtype) | int8 (8-bit K/V, a scale per token and head: "
            "half the bytes of bf16 to store and to read)"
        },
    )
    enable_prefix_cache: bool = field(
        default=True, metadata={"help": "reuse KV blocks of shared prompt prefixes"}
    )
    attention_backend: str = field(
        default="auto",
        metadata={
            "help": "attention over the paged cache: cpu (C++ decode kernel), reference "
            "(plain PyTorch), auto (cpu on CPU where it builds, else reference)"
        },
    )
    enforce_eager: bool = field(
        default=False,
        metadata={
            "help": "plain PyTorch layers: F.linear and unfused norm/rotary/activation "
            "(no prepacked weights, no C++ kernels)"
        },
    )
    seed: int = field(default=0, metadata={"help": "seed for requests that set none"})

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.quantization not in QUANTIZATIONS:
            raise ValueError(
                f"quantization must be one of {QUANTIZATIONS}, got {self.quantization!r}"
            )
        if not (self.device == "cpu" or self.device.startswith("cuda")):
            raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got {self.device!r}")
        sources = [s for s in (self.model, self.hf_model_id, self.checkpoint_path) if s]
        if len(sources) > 1:
            raise ValueError("give only one of --model, --hf-model-id, --checkpoint-path")
        if self.checkpoint_path and not self.tokenizer_name:
            raise ValueError("--checkpoint-path needs --tokenizer-name")
        for name in ("max_num_seqs", "max_num_batched_tokens", "block_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_model_len is not None and self.max_model_len < 2:
            raise ValueError(f"max_model_len must be >= 2, got {self.max_model_len}")
        if self.kv_cache_memory <= 0:
            raise ValueError(f"kv_cache_memory must be > 0 GiB, got {self.kv_cache_memory}")
        if self.num_kv_blocks is not None and self.num_kv_blocks < 1:
            raise ValueError(f"num_kv_blocks must be >= 1, got {self.num_kv_blocks}")
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise ValueError(
                f"kv_cache_dtype must be one of {KV_CACHE_DTYPES}, got {self.kv_cache_dtype!r}"
            )
        if self.attention_backend not in ATTENTION_BACKENDS:
            raise ValueError(
                f"attention_backend must be one of {ATTENTION_BACKENDS}, "
                f"got {self.attention_backend!r}"
            )

    @classmethod
    def from_args(cls, args: argparse.Namespace, **overrides: Any) -> EngineConfig:
        kwargs = {
            f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)
        }
        kwargs.update(overrides)
        return cls(**kwargs)


def add_engine_args(parser: argparse.ArgumentParser, **defaults: Any) -> argparse.ArgumentParser:
    """Add one flag per `EngineConfig` field (`--no-prefix-cache` for the prefix-cache switch)."""
    group = parser.add_argument_group("engine")
    for f in dataclasses.fields(EngineConfig):
        default = defaults.get(f.name, f.default)
        help_text = f.metadata.get("help", "")
        flag = "--" + f.name.replace("_", "-")
        if f.name == "enable_prefix_cache":
            group.add_argument(
                "--no-prefix-cache",
                dest=f.name,
                action="store_false",
                default=default,
                help="disable prefix caching",
            )
        elif f.type in ("bool",):
            group.add_argument(flag, action="store_true", default=default, help=help_text)
        else:
            kind = {"int": int, "float": float, "int | None": int}.get(str(f.type), str)
            if str(f.type) == "float | None":
                kind = float
            choices = {
                "dtype": DTYPES,
                "quantization": QUANTIZATIONS,
                "attention_backend": ATTENTION_BACKENDS,
                "kv_cache_dtype": KV_CACHE_DTYPES,
            }.get(f.name)
            group.add_argument(flag, type=kind, default=default, choices=choices, help=help_text)
    return parser
