"""llama.cpp's native result objects (POST /completion, GET /props), from the output
processor's `ChoiceState`s: the same generation the OpenAI endpoints write, in llama.cpp's
shape (its server's README and `to_json_non_oaicompat`).

A result: `{index, content, tokens, id_slot, stop, model, tokens_predicted, tokens_evaluated,
generation_settings, prompt, has_new_line, truncated, stop_type, stopping_word, tokens_cached,
timings}` and, with `n_probs`, `completion_probabilities`. `stop_type` is `eos` (an
end-of-sequence or stop token), `word` (a stop string: `stopping_word`) or `limit` (the output
limit, or the context's end: `truncated`); a streamed chunk before the result has none.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from roseinfer.dry_params import DryPenalty
from roseinfer.output.processor import ChoiceState, RequestState
from roseinfer.outputs import PositionLogprobs, PromptProgress
from roseinfer.sampling_params import SamplingParams
from roseinfer.server import sampler_chain
from roseinfer.tokenizer import Tokenizer

NO_SLOT = -1  # `id_slot`: no slots here (llama.cpp's "any slot")


@dataclass(frozen=True)
class NativeOptions:
    """What a /completion request asks of its result beyond the generation."""

    n_ctx: int  # a prompt and its output, at most: an output that reached it is `truncated`
    n_probs: int = 0  # likeliest tokens per position in `completion_probabilities` (0: none)
    post_sampling_probs: bool = False  # their probabilities after the sampler chain, as `prob`
    return_tokens: bool = False  # the generated ids in a non-streamed result's `tokens`
    timings_per_token: bool = False  # `timings` in every streamed chunk
    response_fields: tuple[str, ...] = ()  # only these keys of the result ("a/b": nested)
    # n_predict 0 (llama.cpp: the prompt evaluated, into the cache): it runs to one token, as
    # /v1's echo-only request does, and the result leaves that token out
    prompt_only: bool = False


def generation_settings(params: SamplingParams, stream: bool) -> dict[str, Any]:
    """What the request ran with, under llama.cpp's names: its own samplers this server has
    not at their neutral values (it refuses them otherwise); without a window of the penalties (vLLM's),
    `repeat_last_n` -1."""
    bias = sorted((params.logit_bias or {}).items())
    return {
        "seed": -1 if params.seed is None else params.seed,
        "temperature": params.temperature,
        "dynatemp_range": 0.0,
        "dynatemp_exponent": 1.0,
        "top_k": params.top_k,
        "top_p": params.top_p,
        "min_p": params.min_p,
        "top_n_sigma": -1.0,
        "xtc_probability": params.xtc_probability,
        "xtc_threshold": params.xtc_threshold,
        "typical_p": 1.0,
        "repeat_last_n": -1 if params.penalty_last_n is None else params.penalty_last_n,
        "repeat_penalty": params.repetition_penalty,
        "presence_penalty": params.presence_penalty,
        "frequency_penalty": params.frequency_penalty,
        **dry_settings(params),
        "mirostat": 0,
        "stop": list(params.stop),
        "max_tokens": params.max_tokens,
        "n_predict": params.max_tokens,
        "n_keep": 0,
        "ignore_eos": params.ignore_eos,
        "stream": stream,
        "logit_bias": [{"bias": b, "token": t} for t, b in bias],
        "n_probs": params.logprobs or 0,
        "min_keep": 0,
        "post_sampling_probs": params.logprobs_processed,
        "samplers": sampler_chain.ran(
            params.temperature_last, params.infill, params.uses_xtc, params.uses_dry
        ),
    }


_NO_DRY = DryPenalty(0.0)  # llama.cpp's defaults, off


def dry_settings(params: SamplingParams) -> dict[str, Any]:
    """`generation_settings`' DRY fields: the request's, or llama.cpp's defaults with the
    multiplier 0 (off)."""
    dry = params.dry if params.dry is not None else _NO_DRY
    return {
        "dry_multiplier": dry.multiplier,
        "dry_base": dry.base,
        "dry_allowed_length": dry.allowed_length,
        "dry_penalty_last_n": dry.last_n,
        "dry_sequence_breakers": list(dry.sequence_breakers),
    }


def stop_type(choice: ChoiceState) -> tuple[str, str]:
    """(`stop_type`, `stopping_word`) of a finished choice."""
    if choice.finish_reason == "length":
        return "limit", ""
    if isinstance(choice.stop_reason, str):
        return "word", choice.stop_reason
    return "eos", ""


def timings(state: RequestState, choice: ChoiceState, predicted_n: int) -> dict[str, Any]:
    """llama.cpp's `timings`: `prompt_ms` from the request's arrival to its first token (its
    wait in the queue included), `predicted_ms` from there to its last (or to now), over the
    `predicted_n` tokens the answer reports."""
    first = choice.first_token_time
    end = choice.finish_time or time.perf_counter()
    cached = state.num_cached_tokens
    prompt_n = len(state.prompt_token_ids) - cached
    prompt_ms = 0.0 if first is None else (first - state.arrival_time) * 1e3
    predicted_ms = 0.0 if first is None else (end - first) * 1e3
    return {
        "cache_n": cached,
        "prompt_n": prompt_n,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / prompt_n if prompt_n else 0.0,
        "prompt_per_second": prompt_n * 1e3 / prompt_ms if prompt_ms else 0.0,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / predicted_n if predicted_n else 0.0,
        "predicted_per_second": predicted_n * 1e3 / predicted_ms if predicted_ms else 0.0,
    }


def probabilities(
    tokenizer: Tokenizer,
    token_ids: Sequence[int],
    positions: Sequence[PositionLogprobs],
    opts: NativeOptions,
) -> list[dict[str, Any]]:
    """`completion_probabilities`: per token `{id, token, bytes, logprob, top_logprobs}`, the
    `n_probs` likeliest of its position in `top_logprobs`, likeliest first; with
    `post_sampling_probs`, `prob` and `top_probs` (of the distribution drawn from: the engine
    computed them so, and leaves out its tokens of probability 0), as llama.cpp's."""
    post, n = opts.post_sampling_probs, opts.n_probs
    value, top_key = ("prob", "top_probs") if post else ("logprob", "top_logprobs")

    def entry(token_id: int, logprob: float) -> dict[str, Any]:
        return {"id": token_id, "token": tokenizer.token_text(token_id),
                "bytes": list(tokenizer.token_bytes(token_id)),
                value: math.exp(logprob) if post else logprob}  # fmt: skip

    out = []
    for token_id, position in zip(token_ids, positions, strict=True):
        ranked = sorted(position.items(), key=lambda item: item[1].rank)
        top = [entry(t, p.logprob) for t, p in ranked if p.rank <= n][:n]
        out.append({**entry(token_id, position[token_id].logprob), top_key: top})
    return out


def result(
    state: RequestState,
    choice: ChoiceState,
    index: int,
    model: str,
    opts: NativeOptions,
    prompt_text: str,
    *,
    stream: bool,
) -> dict[str, Any]:
    """A finished choice's result (`prompt_text`: its prompt's, special tokens written out;
    decoded once for the prompt's choices); streamed (the last chunk), its text and tokens are
    empty and it has no probabilities: the chunks before it carried them, as llama.cpp's."""
    kind, word = ("limit", "") if opts.prompt_only else stop_type(choice)
    ids = [] if opts.prompt_only else list(choice.token_ids)
    text = "" if opts.prompt_only else choice.text
    in_context = len(state.prompt_token_ids) + len(ids)
    settings = generation_settings(state.params, stream)
    if opts.prompt_only:
        settings["n_predict"] = settings["max_tokens"] = 0
    out: dict[str, Any] = {
        "index": index,
        "content": "" if stream else text,
        "tokens": ids if opts.return_tokens and not stream else [],
        "id_slot": NO_SLOT,
        "stop": True,
        "model": model,
        "tokens_predicted": len(ids),
        "tokens_evaluated": len(state.prompt_token_ids),
        "generation_settings": settings,
        "prompt": prompt_text,
        "has_new_line": "\n" in text,
        # the context is never shifted (a prompt past it is a 400): an output that fills it
        # stops there, as llama.cpp's without context shift
        "truncated": kind == "limit" and in_context >= opts.n_ctx,
        "stop_type": kind,
        "stopping_word": word,
        "tokens_cached": in_context,  # llama.cpp's: the prompt's and the output's tokens
        "timings": timings(state, choice, len(ids)),
    }
    if opts.n_probs and not stream:
        # the tokens `content` holds whole (as llama.cpp's, not those of the stop word)
        n = len(ids) if kind != "word" else _tokens_of(state, choice)
        positions = (choice.logprobs or [])[:n]
        out["completion_probabilities"] = probabilities(
            state.tokenizer, choice.token_ids[:n], positions, opts
        )
    return select_fields(out, opts.response_fields)


def _tokens_of(state: RequestState, choice: ChoiceState) -> int:
    """How many of a choice's first tokens its text holds whole (a stop string cut the rest):
    the largest n whose decoded text is no longer than it, found by bisection (a stop string
    may be thousands of tokens; each decode reads the prefix)."""
    ids, size = choice.token_ids, len(choice.text)
    low, high = 0, len(ids)
    while low < high:
        mid = (low + high + 1) // 2
        if len(state.tokenizer.decode(ids[:mid])) <= size:
            low = mid
        else:
            high = mid - 1
    return low


def select_fields(obj: dict[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """Only `fields` of `obj` (none given: all): `"a/b"` is `obj["a"]["b"]`, under the key
    `"a/b"` (llama.cpp's `response_fields`); a field `obj` lacks is left out."""
    if not fields:
        return obj
    out = {}
    for name in fields:
        value: Any = obj
        for key in name.split("/"):
            if not isinstance(value, dict) or key not in value:
                break
            value = value[key]
        else:
            out[name] = value
    return out


def chunk(
    state: RequestState,
    choice: ChoiceState,
    index: int,
    text: str,
    token_ids: list[int],
    positions: list[PositionLogprobs],
    opts: NativeOptions,
) -> dict[str, Any]:
    """A streamed chunk of new text (`stop: false`): its tokens, and with `n_probs` their
    probabilities, with `timings_per_token` the timings so far."""
    out: dict[str, Any] = {
        "index": index,
        "content": text,
        "tokens": token_ids,
        "stop": False,
        "id_slot": NO_SLOT,
        "tokens_predicted": len(choice.token_ids),
        "tokens_evaluated": len(state.prompt_token_ids),
    }
    if opts.n_probs:
        out["completion_probabilities"] = probabilities(state.tokenizer, token_ids, positions, opts)
    if opts.timings_per_token:
        out["timings"] = timings(state, choice, len(choice.token_ids))
    return out


class PromptTexts:
    """Each request's prompt as text (special tokens written out), decoded once for its
    choices."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def __call__(self, state: RequestState) -> str:
        text = self._texts.get(state.request_id)
        if text is None:
            text = state.tokenizer.decode(state.prompt_token_ids, skip_special_tokens=False)
            self._texts[state.request_id] = text
        return text


def progress_json(progress: PromptProgress) -> dict:
    """llama.cpp's `prompt_progress` object."""
    return {"total": progress.total, "cache": progress.cached, "processed": progress.computed,
            "time_ms": progress.time_ms}  # fmt: skip
