"""The offline Python API: `LLM(model=...).generate(prompts, SamplingParams(...))`."""

from __future__ import annotations

from collections.abc import Sequence as Seq
from dataclasses import dataclass

from tqdm import tqdm

from roseinfer.config import EngineConfig, SamplingParams
from roseinfer.detokenizer import IncrementalDetokenizer
from roseinfer.engine.inference import InferenceEngine
from roseinfer.engine.llm_engine import LLMEngine
from roseinfer.engine.sequence import Sequence
from roseinfer.stop import StopStringChecker


@dataclass(frozen=True)
class RequestMetrics:
    ttft: float  # seconds from submission to the first token
    e2e_latency: float  # seconds from submission to the last token
    num_cached_tokens: int  # prompt tokens served by the prefix cache


@dataclass(frozen=True)
class RequestOutput:
    index: int
    prompt_token_ids: list[int]
    text: str
    token_ids: list[int]
    finish_reason: str  # "stop" | "length"
    metrics: RequestMetrics


class _Tracked:
    """Per-request output state: incremental text and stop strings."""

    def __init__(self, index: int, seq: Sequence, engine: InferenceEngine) -> None:
        self.index, self.seq = index, seq
        self.detok = IncrementalDetokenizer(engine.tokenizer)
        self.detok.start_prompt(seq.prompt_token_ids)
        self.stop = StopStringChecker(seq.params.stop) if seq.params.stop else None
        self.text = ""
        self.stopped_by_string = False

    def feed(self, token_id: int, finished: bool) -> bool:
        """Add a token's text; True when a stop string ended the request."""
        piece = self.detok.on_token(token_id) + (self.detok.flush() if finished else "")
        if self.stop is None:
            self.text += piece
            return False
        emitted, matched = self.stop.feed(piece)
        self.text += emitted
        if matched:
            self.stopped_by_string = True
        elif finished:
            self.text += self.stop.flush()
        return matched


class LLM:
    """A model plus a batched engine for offline generation (continuous batching underneath)."""

    def __init__(self, model: str | None = None, **config: object) -> None:
        engine_config = EngineConfig(model=model, **config)  # type: ignore[arg-type]
        self.engine = InferenceEngine(engine_config)
        self.tokenizer = self.engine.tokenizer
        self.core: LLMEngine = self.engine.new_core()

    @property
    def config(self) -> EngineConfig:
        return self.engine.config

    def generate(
        self,
        prompts: str | Seq[str] | Seq[Seq[int]],
        sampling_params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        """Outputs in the order of `prompts` (strings, or lists of token ids)."""
        if isinstance(prompts, str):
            prompts = [prompts]
        ids = [list(p) if not isinstance(p, str) else self.engine.encode_prompt(p) for p in prompts]
        return self._run(ids, sampling_params, use_tqdm)

    def chat(
        self,
        messages: Seq[dict] | Seq[Seq[dict]],
        sampling_params: SamplingParams | Seq[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        """One conversation (a list of {"role", "content"}) or a list of them, via the chat template."""
        conversations = [messages] if messages and isinstance(messages[0], dict) else messages
        ids = [self.engine.encode_chat(list(conv)) for conv in conversations]
        return self._run(ids, sampling_params, use_tqdm)

    def _run(
        self, prompt_ids: list[list[int]], sampling_params, use_tqdm: bool
    ) -> list[RequestOutput]:
        params = sampling_params if sampling_params is not None else SamplingParams()
        if isinstance(params, SamplingParams):
            params = [params] * len(prompt_ids)
        if len(params) != len(prompt_ids):
            raise ValueError(f"{len(params)} sampling params for {len(prompt_ids)} prompts")
        # Validate every request before queuing any, so a bad one leaves nothing behind.
        for ids, p in zip(prompt_ids, params, strict=True):
            self.core.validate(ids, p)
        tracked = {}
        for i, (ids, p) in enumerate(zip(prompt_ids, params, strict=True)):
            seq = self.core.add_request(ids, p)
            tracked[seq.seq_id] = _Tracked(i, seq, self.engine)
        bar = tqdm(total=len(tracked), desc="Generating", unit="req", disable=not use_tqdm)
        try:
            while self.core.has_unfinished():
                for out in self.core.step():
                    t = tracked[out.seq.seq_id]
                    if t.feed(out.token_id, out.finished) and not out.finished:
                        self.core.abort(out.seq, "stop")
                    if out.seq.is_finished:
                        bar.update(1)
        finally:
            bar.close()
            for t in tracked.values():  # a KeyboardInterrupt must not leave blocks held
                self.core.abort(t.seq)
        return [self._output(t) for t in sorted(tracked.values(), key=lambda t: t.index)]

    @staticmethod
    def _output(t: _Tracked) -> RequestOutput:
        seq = t.seq
        reason = "stop" if t.stopped_by_string else seq.finish_reason
        metrics = RequestMetrics(
            ttft=(seq.first_token_time or seq.arrival_time) - seq.arrival_time,
            e2e_latency=(seq.finish_time or seq.arrival_time) - seq.arrival_time,
            num_cached_tokens=seq.num_cached_tokens,
        )
        return RequestOutput(
            t.index, seq.prompt_token_ids, t.text, seq.output_token_ids, reason, metrics
        )

    def reset_prefix_cache(self) -> None:
        self.core.block_manager.reset_prefix_cache()
