"""The seeds' classes, kept for their users, as thin wrappers over `LLM` / `LLMEngine`.

`InferenceEngine` (a loaded model: `generate`, `stream_generate`, `generate_batch`,
`generate_ids`), `InferenceSession` (one sequence step by step, logits exposed),
`OnlineScheduler` / `OfflineScheduler` (the seeds' request-id API), `SchedulerManager` (an
engine thread, over `EngineClient`; the server uses `EngineClient` itself). All of them run the
one engine (`LLMEngine`: one model runner and KV cache each, one stop rule) and read text
through the one output processor. `do_sample` exists only here: it maps to temperature 0.
"""

from __future__ import annotations

import dataclasses
import itertools
import queue
from collections.abc import Iterator
from collections.abc import Sequence as Seq
from typing import Any, get_args

from roseinfer.checks import check_bools
from roseinfer.config import EngineConfig
from roseinfer.engine.client import EngineClient, EngineObserver
from roseinfer.engine.llm_engine import EngineStats, LLMEngine
from roseinfer.engine.requests import InvalidRequestError, context_length, refuse_unread
from roseinfer.engine.sequence import Sequence
from roseinfer.llm import LLM, encode_prompt
from roseinfer.loader import LoadedModel, load_model
from roseinfer.output.processor import OutputProcessor, RequestState
from roseinfer.outputs import FinishReason, RequestFailed
from roseinfer.sampling_params import SamplingParams
from roseinfer.session import InferenceSession, seed_names, seed_params
from roseinfer.tokenizer import Tokenizer

__all__ = [
    "InferenceEngine",
    "InferenceSession",
    "OfflineScheduler",
    "OnlineScheduler",
    "SchedulerManager",
    "seed_params",
]


class InferenceEngine:
    """A loaded model and tokenizer. Sampling arguments of its methods are `seed_params`'."""

    def __init__(
        self,
        config: EngineConfig | None = None,
        loaded: LoadedModel | None = None,
        **overrides: Any,
    ) -> None:
        config = config or EngineConfig()
        if overrides:
            config = dataclasses.replace(config, **overrides)
        if loaded is not None:  # its load-time fields (LOAD_FIELDS) are the model's
            config = loaded.engine_config(config, {*config.given_fields(), *overrides})
        self.loaded = loaded or load_model(config)
        # max_model_len resolved (the model's when None), as every engine over it enforces
        max_model_len = context_length(config, self.loaded.model_config)
        self.config = dataclasses.replace(config, max_model_len=max_model_len)
        self.model = self.loaded.model
        self.model_config = self.loaded.model_config
        self.tokenizer = self.loaded.tokenizer
        self.eos_token_id = self.tokenizer.eos_token_id
        self.device = config.device
        self._llm: LLM | None = None

    @property
    def llm(self) -> LLM:
        """The `LLM` (one engine, one KV cache) that this object's methods run on."""
        if self._llm is None:
            self._llm = LLM(loaded=self.loaded, **dataclasses.asdict(self.config))
        return self._llm

    @property
    def core(self) -> LLMEngine:
        return self.llm.engine

    @property
    def max_model_len(self) -> int:
        return self.core.max_model_len

    def new_core(self, **overrides: Any) -> LLMEngine:
        """A batched engine of its own (KV cache included) over this model; `overrides` change
        its per-engine `EngineConfig` fields. The load-time ones (`LOAD_FIELDS`: model, dtype,
        quantization, enforce_eager, ...) are the loaded model's: one that differs is a
        ValueError naming it."""
        config = dataclasses.replace(self.config, **overrides) if overrides else self.config
        return LLMEngine(self.loaded, self.loaded.engine_config(config, overrides))

    def encode_prompt(self, prompt: str) -> list[int]:
        return encode_prompt(self.tokenizer, prompt)

    def encode_chat(self, messages: list[dict]) -> list[int]:
        return self.llm.encode_chat(messages)

    def _prompt_ids(self, prompt: str, chat: bool) -> list[int]:
        check_bools(chat=chat)
        if chat:
            return self.encode_chat([{"role": "user", "content": prompt}])
        return self.encode_prompt(prompt)

    # ---- generation ------------------------------------------------------------------------
    def new_session(self, params: SamplingParams) -> InferenceSession:
        session = InferenceSession(self)
        session.params = params
        return session

    def generate_ids(self, prompt_ids: list[int], params: SamplingParams) -> list[int]:
        """One request alone, its prompt in one forward: the reference the tests compare
        batched runs with."""
        session = self.new_session(params)
        for _ in session.iter_tokens(prompt_ids):
            pass
        return list(session.generated_ids)

    def stream_generate(
        self, prompt: str, *args: Any, chat: bool = False, **kwargs: Any
    ) -> Iterator[str]:
        """Text pieces as tokens are generated."""
        yield from self.llm.stream(self._prompt_ids(prompt, chat), seed_params(*args, **kwargs))

    def generate(self, prompt: str, *args: Any, chat: bool = False, **kwargs: Any) -> str:
        """The generated text (without the prompt)."""
        return "".join(self.stream_generate(prompt, *args, chat=chat, **kwargs))

    def generate_batch(self, prompts: Seq[str], *args: Any, **kwargs: Any) -> list[str]:
        """Generated texts of many prompts, batched over the paged cache."""
        if isinstance(prompts, str):  # list() would make each character a prompt
            raise TypeError("generate_batch takes a list of prompts, not a string (use generate)")
        outs = self.llm.generate(list(prompts), seed_params(*args, **kwargs), use_tqdm=False)
        return [o.text for o in outs]


class OnlineScheduler:
    """Requests come and go while `step()` runs; each step advances every running request by
    one token (or one prefill chunk). An engine of its own (`InferenceEngine.new_core`)."""

    def __init__(
        self,
        engine: InferenceEngine,
        max_batch_size: int | None = None,
        use_prefix_cache: bool | None = None,
        **config_overrides: Any,
    ) -> None:
        seed_names(
            config_overrides, max_batch_size=max_batch_size, use_prefix_cache=use_prefix_cache
        )
        self.engine = engine
        self.core: LLMEngine = engine.new_core(**config_overrides)
        self.processor = OutputProcessor(self.core)
        self._ids = itertools.count()
        self._finished_ids: list[int] = []
        self._views: dict[int, Sequence] = {}  # for get_sequence: read-only

    def add_request(
        self,
        prompt: str | None = None,
        *args: Any,
        prompt_token_ids: list[int] | None = None,
        params: SamplingParams | None = None,
        **kwargs: Any,
    ) -> int:
        """Queue a request; returns its id. Sampling arguments: `seed_params`', or `params`
        (not both); a `prompt` or `prompt_token_ids` (not both). Bad input raises ValueError
        and changes nothing."""
        if params is None:
            params = seed_params(*args, **kwargs)
        elif args or kwargs:
            given = [*(["positional sampling arguments"] if args else []), *kwargs]
            raise InvalidRequestError(
                f"give params or the seeds' sampling arguments, not both (got params and "
                f"{', '.join(given)})"
            )
        else:  # what the seeds' readers (one text per request id) could not give back
            refuse_unread(params, "the schedulers", ("n", "logprobs", "prompt_logprobs"))
        if prompt is not None and prompt_token_ids is not None:
            raise InvalidRequestError("give a prompt or prompt_token_ids, not both", "prompt")
        if prompt_token_ids is None:
            if prompt is None:
                raise InvalidRequestError("give a prompt or prompt_token_ids")
            prompt_token_ids = self.engine.encode_prompt(prompt)
        rid = next(self._ids)
        self.processor.add_request(str(rid), prompt_token_ids, params)
        (self._views[rid], *_) = self.core.sequences(str(rid))
        return rid

    def step(self) -> dict[int, int]:
        """One engine step: {request id: new token} for requests that produced one."""
        step_tokens: dict[int, int] = {}
        for delta in self.processor.step():
            rid = int(delta.state.request_id)
            if delta.token_id is not None:  # else the engine failed it: finished, no token
                step_tokens[rid] = delta.token_id
            if delta.finished:
                self._finished_ids.append(rid)
        return step_tokens

    def has_unfinished(self) -> bool:
        return self.core.has_unfinished()

    def is_finished(self, request_id: int) -> bool:
        state = self.processor.states.get(str(request_id))
        return state is None or state.finished

    def pop_finished_ids(self) -> list[int]:
        ids, self._finished_ids = self._finished_ids, []
        return ids

    def pop_response(self, request_id: int) -> str:
        """Prompt plus generated text (as the seeds return it; cut at a stop string, as `LLM`'s
        text); forgets the request. One the engine failed raises `RequestFailed`."""
        state = self.processor.states[str(request_id)]
        self.discard_request(request_id)
        return seed_text(self.engine.tokenizer, state)

    def discard_request(self, request_id: int) -> None:
        """Forget a request, finished or not; its KV blocks are freed now."""
        self.processor.abort(str(request_id))
        self._views.pop(request_id, None)

    def abort_request(self, request_id: int, reason: FinishReason = "abort") -> None:
        """Finish a request now but keep it readable."""
        if reason not in get_args(FinishReason):
            raise ValueError(
                f"reason must be one of {', '.join(get_args(FinishReason))}, got {reason!r}"
            )
        state = self.processor.states.get(str(request_id))
        if state is not None and not state.finished:
            self.core.abort_request(str(request_id), reason)
            for choice in state.choices:
                choice.feed_or_fail((), reason)
            self._finished_ids.append(request_id)

    def get_generated_ids(self, request_id: int) -> list[int]:
        state = self.processor.states.get(str(request_id))
        return list(state.choices[0].token_ids) if state is not None else []

    def get_step_count(self, request_id: int) -> int:
        return len(self.get_generated_ids(request_id))

    def get_sequence(self, request_id: int) -> Sequence | None:
        """Read-only view of a request's engine state (prefix-cache hits, preemptions, finish
        reason, timings), until it is discarded."""
        return self._views.get(request_id)


def seed_text(tokenizer: Tokenizer, state: RequestState) -> str:
    """A finished request's prompt and generated text, as the seeds' schedulers return it (cut
    at a stop string, as `LLM`'s text); `RequestFailed` for one the engine failed."""
    choice = state.choices[0]
    if choice.finish_reason == "error":
        raise RequestFailed(f"request {state.request_id}: {choice.error or 'failed'}")
    if choice.ended_early:  # the text may end inside a token: the processor's cut
        return tokenizer.decode(state.prompt_token_ids) + choice.text
    # one decode: a prompt that ends inside a character is completed by the first tokens
    return tokenizer.decode(state.prompt_token_ids + choice.token_ids)


class OfflineScheduler:
    """Add all requests, then `run()` them to completion in batches."""

    def __init__(self, engine: InferenceEngine, **config_overrides: Any) -> None:
        self._online = OnlineScheduler(engine, **config_overrides)
        self._rids: list[int] = []
        # After `run()`: why each request the engine failed failed (those are not in its dict).
        self.errors: dict[int, str] = {}

    def add_request(self, prompt: str | None = None, *args: Any, **kwargs: Any) -> int:
        rid = self._online.add_request(prompt, *args, **kwargs)
        self._rids.append(rid)
        return rid

    def run(self) -> dict[int, str]:
        """{request id: prompt + generated text} once every request has finished. A request
        the engine failed is left out (the others are not held back by it), its reason in
        `errors`: reading its text is a KeyError, never an empty completion."""
        while self._online.has_unfinished():
            self._online.step()
        self._online.pop_finished_ids()
        states = self._online.processor.states
        texts: dict[int, str] = {}
        for rid in self._rids:
            try:
                texts[rid] = seed_text(self._online.engine.tokenizer, states[str(rid)])
            except RequestFailed as e:
                self.errors[rid] = str(e)
        return texts

    def get_generated_ids(self, request_id: int) -> list[int]:
        return self._online.get_generated_ids(request_id)

    @property
    def core(self) -> LLMEngine:
        return self._online.core


class SchedulerManager:
    """The seeds' threaded manager: an `EngineClient` (engine thread) over an engine of its own,
    with the seeds' synchronous `add_request` / `stream_text`.

    `config`: the fields it sets away from their defaults change the engine's (as
    `engine.new_core(**fields)`: a load-time one that differs from the loaded model's is a
    ValueError); the fields at their defaults keep the engine's settings (a dataclass cannot
    tell a default given from one left out): `config_overrides` (`EngineConfig`'s names, as
    `OnlineScheduler` takes them) set any field, its default value too."""

    def __init__(
        self,
        engine: InferenceEngine,
        config: EngineConfig | None = None,
        *,
        max_batch_size: int | None = None,
        metrics: EngineObserver | None = None,
        start_thread: bool = True,
        stream_interval: int = 1,
        **config_overrides: Any,
    ) -> None:
        # `config`'s fields at their defaults are not read as given: they keep the engine's.
        overrides = {} if config is None else config.given_fields()
        overrides.update(config_overrides)
        seed_names(overrides, max_batch_size=max_batch_size)
        self.engine = engine
        self.client = EngineClient(
            engine.new_core(**overrides),
            observer=metrics,
            start_thread=start_thread,
            stream_interval=stream_interval,
        )
        self._ids = itertools.count()
        self._sync: dict[int, tuple[queue.Queue, RequestState]] = {}

    @property
    def core(self) -> LLMEngine:
        return self.client.engine

    @property
    def metrics(self) -> EngineObserver | None:
        return self.client.observer

    @property
    def stats(self) -> EngineStats:
        return self.client.stats

    def is_alive(self) -> bool:
        return self.client.is_alive()

    def run_forever(self) -> None:
        self.client.run_forever()

    def shutdown(self, timeout: float = 5.0) -> None:
        self.client.shutdown(timeout)

    def add_request(self, prompt: str, *args: Any, **kwargs: Any) -> int:
        """Queue a prompt (sampling arguments: `seed_params`'); read its text with
        `stream_text(rid)`. Bad input raises ValueError."""
        params = seed_params(*args, **kwargs)
        ids = self.engine.encode_prompt(prompt)
        self.client.validate(ids, params)
        rid = next(self._ids)
        out: queue.Queue = queue.Queue()
        self.client.submit_sync(str(rid), ids, params, out)
        core = self.core
        state = RequestState(str(rid), ids, params, core.tokenizer, core.stop_token_ids)
        self._sync[rid] = (out, state)
        return rid

    def stream_text(self, rid: int, timeout: float | None = None) -> Iterator[str]:
        """Text pieces of a request from `add_request`, detokenized in the caller's thread.

        `timeout`: longest wait for the next token (TimeoutError; the request is aborted)."""
        entry = self._sync.pop(rid, None)
        if entry is None:  # never added, or read already: nothing would ever come
            raise KeyError(f"no request {rid} to read (each is read once, by its add_request id)")
        out, state = entry
        try:
            while not state.finished:
                try:
                    _, event = out.get(timeout=timeout)
                except queue.Empty:
                    raise TimeoutError(f"no output from request {rid} in {timeout} s") from None
                read = self.client.apply_event(state, event)  # RequestFailed on an error
                if read is not None and read[1]:
                    yield read[1]
        finally:
            if not state.finished:
                self.client.abort(str(rid))
