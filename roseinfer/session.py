"""The seeds' sampling arguments (`seed_params`, and their old engine-setting names) and their
one-sequence `InferenceSession`; re-exported by `roseinfer.compat`, which builds on them."""

from __future__ import annotations

import dataclasses
import operator
import warnings
from collections.abc import Iterator
from collections.abc import Sequence as Seq
from typing import Any, Protocol

import torch

from roseinfer.checks import check_bools
from roseinfer.engine.llm_engine import LLMEngine
from roseinfer.engine.requests import check_prompt_ids, refuse_unread
from roseinfer.engine.sequence import Sequence
from roseinfer.models.config import ModelConfig
from roseinfer.sampling_params import SamplingParams
from roseinfer.tokenizer import Tokenizer

# The seeds' names of `EngineConfig` fields.
SEED_NAMES = {"max_batch_size": "max_num_seqs", "use_prefix_cache": "enable_prefix_cache"}


def seed_names(overrides: dict[str, Any], **old: Any) -> None:
    """Put the seeds' names that were given (not None) into `overrides` under their
    `EngineConfig` names; an old name given with its new one is a ValueError naming both."""
    for name, value in old.items():
        if value is None:
            continue
        new = SEED_NAMES[name]
        if new in overrides:
            raise ValueError(f"give {name} (the seeds' name) or {new}, not both")
        overrides[new] = value


def seed_params(
    max_new_tokens: int = 64,
    temperature: float = 1.0,
    top_k: int = 0,
    top_p: float = 1.0,
    stop_on_eos: bool = True,
    do_sample: bool = False,
    seed: int | None = None,
    *,
    warn_unused: bool = True,
) -> SamplingParams:
    """The seeds' sampling arguments (in their order) as `SamplingParams`: greedy unless
    `do_sample` (transformers' rule), and then a UserWarning naming the sampling arguments
    given that act only with it, as transformers warns (`warn_unused`: the server's /generate
    documents the rule in its field table instead)."""
    check_bools(stop_on_eos=stop_on_eos, do_sample=do_sample)
    params = SamplingParams(
        max_new_tokens=max_new_tokens,
        temperature=temperature,  # checked even when greedy, as the seeds did
        top_k=top_k,
        top_p=top_p,
        ignore_eos=not stop_on_eos,
        seed=seed,
    )
    # (a temperature of 0 asks for the greedy decoding it gets)
    unused = {"temperature": params.temperature != 1.0 and not params.greedy,
              "top_k": params.top_k != 0, "top_p": params.top_p != 1.0,
              "seed": params.seed is not None}  # fmt: skip
    if warn_unused and not do_sample and any(unused.values()):
        names = ", ".join(name for name, given in unused.items() if given)
        warnings.warn(f"do_sample is False: {names} act only with do_sample=True (greedy "
                      "decoding here, as transformers' generate)", UserWarning, stacklevel=3)  # fmt: skip
    return params if do_sample else dataclasses.replace(params, temperature=0.0)


class SessionEngine(Protocol):
    """What a session needs of its engine (`roseinfer.compat.InferenceEngine` gives it)."""

    tokenizer: Tokenizer
    model_config: ModelConfig

    @property
    def core(self) -> LLMEngine: ...


class InferenceSession:
    """One sequence: `prefill`, then `step_once` until `finished` (the seeds' API). It runs on
    its engine's `LLMEngine` (blocks from its pool, its runner, its sampler and stop rule),
    outside the scheduler."""

    def __init__(self, engine: SessionEngine) -> None:
        self.engine = engine
        self.params = SamplingParams(temperature=0.0)
        self.input_ids: list[int] = []
        self.generated_ids: list[int] = []
        self.finished = False
        self.step_count = 0
        self._seq: Sequence | None = None

    def set_generation_config(
        self,
        max_new_tokens: int,
        temperature: float,
        top_k: int,
        top_p: float,
        do_sample: bool,
        stop_on_eos: bool,
        seed: int | None = None,
    ) -> None:
        self.params = seed_params(
            max_new_tokens, temperature, top_k, top_p, stop_on_eos, do_sample, seed
        )

    def all_token_ids(self) -> list[int]:
        return self.input_ids + self.generated_ids

    def decode_text(self) -> str:
        return self.engine.tokenizer.decode(self.all_token_ids())

    def prefill(self, input_ids: Seq[int] | torch.Tensor) -> torch.Tensor:
        """Run the prompt; returns the last position's logits [1, V]."""
        if isinstance(input_ids, torch.Tensor):
            if input_ids.dim() > 2 or (input_ids.dim() == 2 and input_ids.shape[0] != 1):
                raise ValueError(
                    f"prefill takes one prompt, [T] or [1, T], got {list(input_ids.shape)}"
                )
            input_ids = input_ids.reshape(-1).tolist()
        ids = list(input_ids)
        core = self.engine.core
        check_prompt_ids(ids, self.engine.model_config.vocab_size)
        # one sequence's token ids and logits: no choices, text or logprobs to give back
        refuse_unread(self.params, "a session", ("n", "stop", "logprobs", "prompt_logprobs"))
        core.validate(ids, self.params)
        self._release()
        self.input_ids, self.generated_ids = ids, []
        self.finished, self.step_count = False, 0
        self._seq = core.new_sequence(ids, self.params)
        return core.forward_alone(self._seq, len(ids))

    def decode_step(self, token_id: int) -> torch.Tensor:
        """Feed one token; returns the next logits [1, V]. Past the context window
        (`max_model_len`) is a ValueError, as `step_once` finishes there."""
        if self._seq is None:
            raise RuntimeError("call prefill first")
        vocab = self.engine.model_config.vocab_size
        try:  # an int, numpy's or a one-element integer tensor; not 3.7, "5" or True
            tid = -1 if isinstance(token_id, bool) else operator.index(token_id)
        except TypeError:
            tid = -1
        if not 0 <= tid < vocab:
            raise ValueError(
                f"decode_step: token_id must be an integer in [0, {vocab}), got {token_id!r}"
            )
        limit = self.engine.core.max_model_len
        if len(self._seq.token_ids) >= limit:
            raise ValueError(
                f"decode_step: the sequence already has {len(self._seq.token_ids)} tokens, "
                f"the context window (max_model_len {limit}) is full"
            )
        self._seq.token_ids.append(tid)
        return self.engine.core.forward_alone(self._seq, 1)

    def step_once(self) -> int | None:
        """Decode the last generated token and sample the next (None once finished)."""
        if self.finished:
            return None
        if self._seq is None or not self.generated_ids:
            raise RuntimeError("no generated ids, call prefill first")
        return self._accept(self.engine.core.forward_alone(self._seq, 1))

    def iter_tokens(self, prompt_ids: list[int]) -> Iterator[int]:
        try:
            yield self._accept(self.prefill(prompt_ids))
            while not self.finished:
                token = self.step_once()
                if token is not None:
                    yield token
        finally:
            self._release()

    def _accept(self, logits: torch.Tensor) -> int:
        core, seq = self.engine.core, self._seq
        assert seq is not None
        token = core.sample_alone(seq, logits)
        reason = core.append_token(seq, token)
        self.generated_ids.append(token)
        self.step_count += 1
        if reason is not None:
            self.finished = True
            self._release()
        return token

    def _release(self) -> None:
        if self._seq is not None and self._seq.block_table:
            self.engine.core.release(self._seq)

    def __del__(self) -> None:
        try:
            self._release()
        except Exception:  # interpreter shutdown: nothing left to free
            pass
