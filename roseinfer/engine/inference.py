"""`InferenceEngine` (a loaded model plus single-request generation) and `InferenceSession`.

These keep the seeds' names. A session is one sequence with a KV cache of its own, sized for
its prompt plus `max_new_tokens`, run through the same model runner and attention path as the
batched schedulers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from collections.abc import Sequence as Seq

import torch

from roseinfer.backends import select_backend
from roseinfer.config import EngineConfig, SamplingParams
from roseinfer.detokenizer import IncrementalDetokenizer
from roseinfer.engine.block_manager import BlockManager
from roseinfer.engine.llm_engine import InvalidRequestError, LLMEngine, check_prompt_ids
from roseinfer.engine.model_runner import ModelRunner
from roseinfer.engine.scheduler import ScheduledSequence
from roseinfer.engine.sequence import Sequence
from roseinfer.layers.sampler import Sampler
from roseinfer.loader import LoadedModel, load_model


class InferenceEngine:
    """A loaded model and tokenizer; `generate` runs one request, `new_core` a batched engine."""

    def __init__(
        self, config: EngineConfig | None = None, loaded: LoadedModel | None = None, **overrides
    ) -> None:
        config = config or EngineConfig()
        if overrides:
            config = dataclasses.replace(config, **overrides)
        self.config = config
        self.loaded = loaded or load_model(config)
        self.model = self.loaded.model
        self.model_config = self.loaded.model_config
        self.tokenizer = self.loaded.tokenizer
        self.eos_token_id = self.tokenizer.eos_token_id
        self.device = config.device
        self.max_model_len = min(
            config.max_model_len or self.model_config.max_position_embeddings,
            self.model_config.max_position_embeddings,
        )
        backend = self.loaded.backend or select_backend(config, torch.device(config.device))
        self._sampler = Sampler(
            config.device, config.seed, self.tokenizer.stop_token_ids, backend.argmax
        )

    def new_core(self, **overrides) -> LLMEngine:
        """A batched engine (its own KV cache) over this model; overrides change EngineConfig fields."""
        config = dataclasses.replace(self.config, **overrides) if overrides else self.config
        return LLMEngine(self.loaded, config)

    # ---- prompts -------------------------------------------------------------------------
    def encode_prompt(self, prompt: str) -> list[int]:
        if not isinstance(prompt, str) or not prompt:
            raise InvalidRequestError("prompt must be a non-empty string")
        ids = self.tokenizer.encode(prompt)
        if not ids:
            raise InvalidRequestError("prompt encodes to no tokens")
        return ids

    def encode_chat(self, messages: list[dict]) -> list[int]:
        return self.tokenizer.encode_chat(messages)

    # ---- single-request generation -------------------------------------------------------
    def new_session(self, params: SamplingParams) -> InferenceSession:
        session = InferenceSession(self)
        session.params = params
        return session

    def generate_ids(self, prompt_ids: list[int], params: SamplingParams) -> list[int]:
        session = self.new_session(params)
        for _ in session.iter_tokens(prompt_ids):
            pass
        return list(session.generated_ids)

    def stream_generate(
        self,
        prompt: str,
        max_new_tokens: int = 64,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        stop_on_eos: bool = True,
        do_sample: bool = False,
        seed: int | None = None,
        chat: bool = False,
    ) -> Iterator[str]:
        """Yield text pieces as tokens are generated."""
        params = SamplingParams(
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            stop_on_eos=stop_on_eos,
            do_sample=do_sample,
            seed=seed,
        )
        ids = (
            self.encode_chat([{"role": "user", "content": prompt}])
            if chat
            else self.encode_prompt(prompt)
        )
        detok = IncrementalDetokenizer(self.tokenizer)
        detok.start_prompt(ids)
        for token in self.new_session(params).iter_tokens(ids):
            piece = detok.on_token(token)
            if piece:
                yield piece
        tail = detok.flush()
        if tail:
            yield tail

    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 64,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        stop_on_eos: bool = True,
        do_sample: bool = False,
        seed: int | None = None,
        chat: bool = False,
    ) -> str:
        """The generated text (without the prompt)."""
        return "".join(
            self.stream_generate(
                prompt,
                max_new_tokens,
                temperature,
                top_k,
                top_p,
                stop_on_eos,
                do_sample,
                seed,
                chat,
            )
        )

    def generate_batch(
        self,
        prompts: Seq[str],
        max_new_tokens: int = 64,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        stop_on_eos: bool = True,
        do_sample: bool = False,
    ) -> list[str]:
        """Generated texts of many prompts, batched over the paged cache."""
        from roseinfer.engine.schedulers import OfflineScheduler

        scheduler = OfflineScheduler(self)
        rids = [
            scheduler.add_request(
                p, max_new_tokens, temperature, top_k, top_p, stop_on_eos, do_sample
            )
            for p in prompts
        ]
        scheduler.run()
        return [self.tokenizer.decode(scheduler.get_generated_ids(r)) for r in rids]

    def _sample_next_token(
        self,
        logits: torch.Tensor,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        do_sample: bool = False,
        generator: torch.Generator | None = None,
    ) -> int:
        """Sample one token from logits [V] or [1, V]."""
        params = SamplingParams(
            temperature=temperature, top_k=top_k, top_p=top_p, do_sample=do_sample
        )
        return int(
            self._sampler(logits.reshape(1, -1), [params], [generator], [params.min_tokens])[0]
        )


class InferenceSession:
    """One sequence: `prefill`, then `step_once` until `finished` (the seeds' API)."""

    def __init__(self, engine: InferenceEngine) -> None:
        self.engine = engine
        self.params = SamplingParams(do_sample=False)
        self.input_ids: list[int] = []
        self.generated_ids: list[int] = []
        self.finished = False
        self.step_count = 0
        self._seq: Sequence | None = None
        self._runner: ModelRunner | None = None
        self._blocks: BlockManager | None = None
        self._generator: torch.Generator | None = None

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
        self.params = SamplingParams(
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            do_sample=do_sample,
            stop_on_eos=stop_on_eos,
            seed=seed,
        )

    def all_token_ids(self) -> list[int]:
        return self.input_ids + self.generated_ids

    def decode_text(self) -> str:
        return self.engine.tokenizer.decode(self.all_token_ids())

    def prefill(self, input_ids: Seq[int] | torch.Tensor) -> torch.Tensor:
        """Run the prompt; returns the last position's logits [1, V]."""
        if isinstance(input_ids, torch.Tensor):
            input_ids = input_ids.reshape(-1).tolist()
        ids = list(input_ids)
        eng = self.engine
        check_prompt_ids(ids, eng.model_config.vocab_size)
        total = len(ids) + self.params.max_new_tokens
        if total > eng.max_model_len:
            raise InvalidRequestError(
                f"prompt ({len(ids)} tokens) plus max_new_tokens ({self.params.max_new_tokens}) is {total} "
                f"tokens, more than the context window of {eng.max_model_len}"
            )
        block_size = eng.config.block_size
        self._blocks = BlockManager(-(-total // block_size), block_size, enable_prefix_cache=False)
        self._runner = ModelRunner(eng.loaded, eng.config, self._blocks.num_blocks)
        self._generator = eng._sampler.new_request_state(self.params)
        self.input_ids = ids
        self._seq = Sequence(0, list(ids), len(ids), self.params)
        return self._forward(len(ids))

    def decode_step(self, token_id: int) -> torch.Tensor:
        """Feed one token; returns the next logits [1, V]."""
        assert self._seq is not None, "call prefill first"
        self._seq.token_ids.append(int(token_id))
        return self._forward(1)

    def step_once(self) -> int | None:
        """Decode the last generated token and sample the next (None once finished)."""
        if self.finished:
            return None
        if not self.generated_ids:
            raise RuntimeError("no generated ids, call prefill first")
        return self._accept(self.decode_step(self.generated_ids[-1]))

    def iter_tokens(self, prompt_ids: list[int]) -> Iterator[int]:
        token = self._accept(self.prefill(prompt_ids))
        yield token
        while not self.finished:
            token = self.step_once()
            if token is not None:
                yield token

    def _forward(self, num_new_tokens: int) -> torch.Tensor:
        seq = self._seq
        self._blocks.allocate(seq, num_new_tokens)
        logits = self._runner.compute_logits([ScheduledSequence(seq, num_new_tokens)])
        seq.num_computed_tokens += num_new_tokens
        return logits  # [1, V]

    def _accept(self, logits: torch.Tensor) -> int:
        sampler = self.engine._sampler
        token = int(sampler(logits, [self.params], [self._generator], [len(self.generated_ids)])[0])
        self.generated_ids.append(token)
        self.step_count += 1
        p = self.params
        stop_ids = self.engine.tokenizer.stop_token_ids
        if self.step_count >= p.min_tokens and (
            (p.stop_on_eos and token in stop_ids) or token in p.stop_token_ids
        ):
            self.finished = True
        if self.step_count >= p.max_new_tokens:
            self.finished = True
        return token
