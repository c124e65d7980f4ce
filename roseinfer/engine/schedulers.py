"""The seeds' scheduler API over the batched engine loop.

`OnlineScheduler`: requests come and go while `step()` runs; each step advances every running
request by one token (or one prefill chunk). `OfflineScheduler`: add everything, then `run()`.
Per-step work is O(batch): the engine only touches running sequences, finished ids are
reported as events, and lookups are by request id.
"""

from __future__ import annotations

from roseinfer.config import SamplingParams
from roseinfer.engine.inference import InferenceEngine
from roseinfer.engine.llm_engine import InvalidRequestError, LLMEngine
from roseinfer.engine.sequence import Sequence


class OnlineScheduler:
    def __init__(
        self,
        engine: InferenceEngine,
        max_batch_size: int | None = None,
        use_prefix_cache: bool | None = None,
        **config_overrides,
    ) -> None:
        if max_batch_size is not None:
            config_overrides["max_num_seqs"] = max_batch_size
        if use_prefix_cache is not None:
            config_overrides["enable_prefix_cache"] = use_prefix_cache
        self.engine = engine
        self.core: LLMEngine = engine.new_core(**config_overrides)
        self._seqs: dict[int, Sequence] = {}
        self._finished_ids: list[int] = []

    def add_request(
        self,
        prompt: str | None = None,
        max_new_tokens: int = 64,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        stop_on_eos: bool = True,
        do_sample: bool = False,
        seed: int | None = None,
        *,
        prompt_token_ids: list[int] | None = None,
        params: SamplingParams | None = None,
    ) -> int:
        """Queue a request; returns its id. Bad input raises ValueError and changes nothing."""
        if params is None:
            params = SamplingParams(
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                top_k=top_k,
                top_p=top_p,
                stop_on_eos=stop_on_eos,
                do_sample=do_sample,
                seed=seed,
            )
        if prompt_token_ids is None:
            if prompt is None:
                raise InvalidRequestError("give a prompt or prompt_token_ids")
            prompt_token_ids = self.engine.encode_prompt(prompt)
        seq = self.core.add_request(prompt_token_ids, params)
        self._seqs[seq.seq_id] = seq
        return seq.seq_id

    def step(self) -> dict[int, int]:
        """One engine step: {request id: new token} for requests that produced one."""
        step_tokens: dict[int, int] = {}
        for out in self.core.step():
            rid = out.seq.seq_id
            step_tokens[rid] = out.token_id
            if out.finished:
                self._finished_ids.append(rid)
        return step_tokens

    def has_unfinished(self) -> bool:
        return self.core.has_unfinished()

    def is_finished(self, request_id: int) -> bool:
        seq = self._seqs.get(request_id)
        return seq is None or seq.is_finished

    def pop_finished_ids(self) -> list[int]:
        ids, self._finished_ids = self._finished_ids, []
        return ids

    def pop_response(self, request_id: int) -> str:
        """Prompt plus generated text (as the seeds return it); forgets the request."""
        seq = self._seqs.pop(request_id)
        self.core.abort(seq)
        return self.engine.tokenizer.decode(seq.token_ids)

    def discard_request(self, request_id: int) -> None:
        """Forget a request, finished or not; its KV blocks are freed now."""
        seq = self._seqs.pop(request_id, None)
        if seq is not None:
            self.core.abort(seq)

    def abort_request(self, request_id: int, reason: str = "abort") -> None:
        """Finish a request now but keep it readable (e.g. a stop string was seen)."""
        seq = self._seqs.get(request_id)
        if seq is not None and not seq.is_finished:
            self.core.abort(seq, reason)
            self._finished_ids.append(request_id)

    def get_generated_ids(self, request_id: int) -> list[int]:
        seq = self._seqs.get(request_id)
        return list(seq.output_token_ids) if seq is not None else []

    def get_step_count(self, request_id: int) -> int:
        seq = self._seqs.get(request_id)
        return seq.num_output_tokens if seq is not None else 0

    def get_sequence(self, request_id: int) -> Sequence | None:
        """Read-only view of a request (prompt ids, finish reason, timings)."""
        return self._seqs.get(request_id)


class OfflineScheduler:
    """Add all requests, then `run()` them to completion in batches."""

    def __init__(self, engine: InferenceEngine, **config_overrides) -> None:
        self._online = OnlineScheduler(engine, **config_overrides)
        self._rids: list[int] = []

    def add_request(
        self,
        prompt: str | None = None,
        max_new_tokens: int = 64,
        temperature: float = 1.0,
        top_k: int = 0,
        top_p: float = 1.0,
        stop_on_eos: bool = True,
        do_sample: bool = False,
        seed: int | None = None,
        **kwargs,
    ) -> int:
        rid = self._online.add_request(
            prompt,
            max_new_tokens,
            temperature,
            top_k,
            top_p,
            stop_on_eos,
            do_sample,
            seed,
            **kwargs,
        )
        self._rids.append(rid)
        return rid

    def run(self) -> dict[int, str]:
        """{request id: prompt + generated text} once every request has finished."""
        while self._online.has_unfinished():
            self._online.step()
        self._online.pop_finished_ids()
        decode = self._online.engine.tokenizer.decode
        return {rid: decode(self._online.get_sequence(rid).token_ids) for rid in self._rids}

    def get_generated_ids(self, request_id: int) -> list[int]:
        return self._online.get_generated_ids(request_id)

    @property
    def core(self) -> LLMEngine:
        return self._online.core
