"""Configuration dataclasses, validated at the edge.

`EngineConfig` holds every engine setting; CLI flags map one-to-one onto its fields
(`add_engine_args` / `EngineConfig.from_args`). What a request asks for is
`roseinfer.sampling_params.SamplingParams`.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from roseinfer.checks import SEED_MAX, SEED_MIN, check_bools, is_int, is_number

DTYPES = ("auto", "float32", "bfloat16", "float16")
QUANTIZATIONS = ("none", "int8")
ATTENTION_BACKENDS = ("auto", "reference", "cpu")
KV_CACHE_DTYPES = ("auto", "int8")
GENERATION_CONFIGS = ("auto", "none")
# The `EngineConfig` fields that shape the loaded model (its source, tokenizer and chat template,
# device, dtype, and the layers its backend built: int8, or plain PyTorch under enforce_eager).
# Every engine over one `LoadedModel` has the model's values (`LoadedModel.engine_config`); the
# other fields (scheduler, KV cache, prefix cache, attention backend, seed) are per engine.
LOAD_FIELDS = (
    "model",
    "hf_model_id",
    "checkpoint_path",
    "tokenizer_name",
    "chat_template",
    "device",
    "dtype",
    "quantization",
    "enforce_eager",
)


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
    chat_template: str | None = field(
        default=None,
        metadata={
            "help": "a Jinja chat template file (or the template itself) used instead of the "
            "model's"
        },
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
    lone_prefill_tokens: int = field(
        default=2048,
        metadata={
            "help": "max tokens in a step whose first prompt chunk is longer than the budget "
            "left: that chunk grows to fill them and is the step's only one (fewer, larger "
            "chunks for a long prompt); 0, or at most --max-num-batched-tokens: that budget"
        },
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
            "help": "attention over the paged cache: cpu (C++ decode and prefill kernels), reference "
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
    generation_config: str = field(
        default="auto",
        metadata={
            "help": "auto: a request that leaves temperature, top_p, top_k, min_p, "
            "repetition_penalty or its output limit out gets the model's own from its "
            "generation_config.json, as vLLM does; none: OpenAI's (vLLM's 'vllm')"
        },
    )

    def __post_init__(self) -> None:
        for name in ("model", "hf_model_id", "checkpoint_path", "tokenizer_name", "chat_template"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        for name, choices in (
            ("dtype", DTYPES),
            ("quantization", QUANTIZATIONS),
            ("kv_cache_dtype", KV_CACHE_DTYPES),
            ("attention_backend", ATTENTION_BACKENDS),
            ("generation_config", GENERATION_CONFIGS),
        ):
            if not isinstance(getattr(self, name), str) or getattr(self, name) not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {getattr(self, name)!r}")
        if not isinstance(self.device, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", self.device):
            raise ValueError(f"device must be 'cpu' or 'cuda[:N]', got {self.device!r}")
        sources = [s for s in (self.model, self.hf_model_id, self.checkpoint_path) if s]
        if len(sources) > 1:
            raise ValueError("give only one of --model, --hf-model-id, --checkpoint-path")
        if self.checkpoint_path and not self.tokenizer_name:
            raise ValueError("--checkpoint-path needs --tokenizer-name")
        if self.tokenizer_name and not self.checkpoint_path:
            raise ValueError(
                "tokenizer_name is the tokenizer of checkpoint_path: give it only with "
                "checkpoint_path (other models bring their own tokenizer)"
            )
        for name in ("max_num_seqs", "max_num_batched_tokens", "block_size"):
            value = getattr(self, name)
            if not is_int(value) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not is_int(self.lone_prefill_tokens) or self.lone_prefill_tokens < 0:
            raise ValueError(
                f"lone_prefill_tokens must be an integer >= 0, got {self.lone_prefill_tokens!r}"
            )
        if self.max_model_len is not None and (
            not is_int(self.max_model_len) or self.max_model_len < 2
        ):
            raise ValueError(f"max_model_len must be an integer >= 2, got {self.max_model_len!r}")
        if not is_number(self.kv_cache_memory) or self.kv_cache_memory <= 0:
            raise ValueError(
                f"kv_cache_memory must be a finite number > 0 (GiB), got {self.kv_cache_memory!r}"
            )
        if self.num_kv_blocks is not None and (
            not is_int(self.num_kv_blocks) or self.num_kv_blocks < 1
        ):
            raise ValueError(f"num_kv_blocks must be an integer >= 1, got {self.num_kv_blocks!r}")
        check_bools(enable_prefix_cache=self.enable_prefix_cache, enforce_eager=self.enforce_eager)
        if not is_int(self.seed) or not SEED_MIN <= self.seed <= SEED_MAX:
            raise ValueError(
                f"seed must be an integer in [{SEED_MIN}, {SEED_MAX}], got {self.seed!r}"
            )
        # What no backend can do, refused before anything loads (`backend_for` says the same).
        if self.attention_backend == "cpu" and self.enforce_eager:
            raise ValueError(
                "attention_backend 'cpu' is the C++ kernel: not with enforce_eager (no C++)"
            )
        if self.device != "cpu":
            for name, value in (("quantization", "int8"), ("attention_backend", "cpu")):
                if getattr(self, name) == value:
                    raise ValueError(f"{name} {value!r} runs on CPU only, not on {self.device}")

    def given_fields(self) -> dict[str, Any]:
        """The fields not at their defaults: what a whole config passed over an engine already
        configured (`SchedulerManager(engine, config)`) changes; the others keep the engine's."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) != f.default
        }

    @classmethod
    def from_args(cls, args: argparse.Namespace, **overrides: Any) -> EngineConfig:
        kwargs = {
            f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)
        }
        kwargs.update(overrides)
        return cls(**kwargs)


# Fields only a front door whose requests leave sampling fields out reads (the server): the
# commands that build every field themselves (`generate`, `chat`, the benchmarks) offer no flag.
REQUEST_DEFAULT_FIELDS = ("generation_config",)


def add_engine_args(
    parser: argparse.ArgumentParser, *, request_defaults: bool = False, **defaults: Any
) -> argparse.ArgumentParser:
    """Add one flag per `EngineConfig` field (`--no-prefix-cache` for the prefix-cache switch);
    `request_defaults`: `REQUEST_DEFAULT_FIELDS`' too."""
    group = parser.add_argument_group("engine")
    if not request_defaults:  # such a command reads none of the model's defaults
        parser.set_defaults(generation_config="none")
    for f in dataclasses.fields(EngineConfig):
        if f.name in REQUEST_DEFAULT_FIELDS and not request_defaults:
            continue
        default = defaults.get(f.name, f.default)
        help_text = f.metadata.get("help", "")
        if default is not None and not isinstance(default, bool) and "default" not in help_text:
            help_text += f" (default {default})"
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
                "generation_config": GENERATION_CONFIGS,
            }.get(f.name)
            group.add_argument(flag, type=kind, default=default, choices=choices, help=help_text)
    return parser


_MOVED = ("SamplingParams", "StructuredOutputs", "GREEDY_TEMPERATURE", "MAX_LOGPROBS",
          "TOP_K_MAX", "MAX_STOP_STRINGS", "MAX_STOP_CHARS", "MAX_BAD_WORDS",
          "MAX_BAD_WORD_CHARS")  # fmt: skip


def __getattr__(name: str) -> Any:
    """`roseinfer.config.SamplingParams` (and the other names that moved to
    `roseinfer.sampling_params`), for the scripts and callers that import them from here."""
    import roseinfer.sampling_params as sampling_params

    if name in _MOVED:
        return getattr(sampling_params, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
