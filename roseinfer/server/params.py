"""From an OpenAI request body to its `SamplingParams` (`ParamsBuilder`), and the request's own
names of their fields, so that a 400 names the field the client sent: the output limit is
`max_tokens`, `max_completion_tokens` or llama.cpp's `n_predict` (`/generate`:
`max_new_tokens`), the prompt is a chat request's `messages`, and so on.

`SamplingParams` (roseinfer/sampling_params.py) words its refusals with its own field name first;
the engine's `InvalidRequestError` carries the field as `param`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import cast

from roseinfer.dry_params import DEFAULT_BREAKERS, DryPenalty
from roseinfer.dry_params import FIELDS as DRY_FIELDS
from roseinfer.engine.requests import InvalidRequestError
from roseinfer.engine.scheduler import no_room_message
from roseinfer.reasoning_params import ThinkingBudget
from roseinfer.sampling_params import (
    INFILL_TOP_K_MAX,
    MAX_LOGPROBS,
    SamplingDefaults,
    SamplingParams,
    StructuredOutputs,
)
from roseinfer.server import protocol as P
from roseinfer.server.errors import APIError
from roseinfer.server.sampler_chain import sampler_chain

# The seeds' max_new_tokens is an init-only alias of max_tokens: not among the dataclass fields.
SAMPLING_FIELDS = (
    frozenset(f.name for f in dataclasses.fields(SamplingParams))
    | {"max_new_tokens"}
    | set(DRY_FIELDS)  # DryPenalty's, under the request's names
)
_MAX_TOKENS_ALIASES = ("max_completion_tokens", "n_predict", "max_new_tokens")
MAX_N = 128  # a server limit: SamplingParams takes any n >= 1
# Choices of one request (prompts x n): each holds its output state from the start, and a
# request's choices are admitted together, so one body of many prompts could take the
# server's memory and every seat (a 4 MiB body holds a million one-letter prompts).
MAX_CHOICES = 2048


def truncate_prompt(
    ids: list[int], k: int | None, max_model_len: int, side: str = "left"
) -> list[int]:
    """vLLM's truncate_prompt_tokens: keep k of the prompt's tokens (-1: the context), its last
    ones (`side` "left": the first are dropped) or its first ("right")."""
    if k is None:
        return ids
    if k == -1:
        k = max_model_len
    if k < 1:
        raise APIError(400, f"truncate_prompt_tokens must be >= 1 or -1, got {k}",
                       param="truncate_prompt_tokens")  # fmt: skip
    return ids[:k] if side == "right" else ids[-k:]


def check_choices(body: P.SamplingRequest, num_prompts: int) -> None:
    """A 400 naming `prompt` where its prompts x n pass MAX_CHOICES."""
    n = num_choices(body)
    if n <= MAX_N and num_prompts * n > MAX_CHOICES:  # (past MAX_N: a 400 naming n, later)
        raise APIError(400, f"{num_prompts} prompts x n {n} = {num_prompts * n} choices: at most "
                            f"{MAX_CHOICES} in one request (send the rest in others)",
                       param="prompt")  # fmt: skip


@dataclass(frozen=True)
class ParamsBuilder:
    """A request body's `SamplingParams`, within the model's context and with its defaults."""

    max_total_tokens: int  # prompt + output: the longest sequence the engine can hold
    max_model_len: int
    defaults: SamplingDefaults  # of a field a request leaves out

    def params(
        self,
        body: P.SamplingRequest,
        prompt_len: int,
        default_max: int | None,
        opts: ResponseOptions,
        spec: StructuredOutputs | None,
        names: dict[str, str],
        thinking: ThinkingBudget | None = None,
    ) -> SamplingParams:
        """`names`: the request's own names of SamplingParams' fields (`client_names`);
        `thinking`: the request's thinking budget (chat's)."""
        room = self.max_total_tokens - prompt_len  # what the context leaves this prompt
        max_param, max_tokens = max_tokens_field(body)
        if max_param is None:
            max_tokens = default_max
            if max_tokens is not None and room >= 1:  # a default limit: at most what fits (vLLM)
                max_tokens = min(max_tokens, room)
        if opts.echo_only:
            if body.min_tokens is not None and body.min_tokens > 0:
                raise APIError(400, f"min_tokens ({body.min_tokens}) asks for tokens that "
                                    f"{max_param}: 0 does not generate", param="min_tokens")  # fmt: skip
            max_tokens = 1  # a request runs to one token: left out of the response
        if max_param is None and not opts.echo_only:  # min_tokens past a limit not asked for
            if body.min_tokens > room >= 1:
                raise APIError(400, f"min_tokens ({body.min_tokens}) asks for more tokens than "
                                    f"the context leaves this prompt ({room} of "
                                    f"{self.max_total_tokens} after its {prompt_len})",
                               param="min_tokens", code="context_length_exceeded")  # fmt: skip
            if max_tokens is not None and body.min_tokens > max_tokens:
                raise APIError(400, f"min_tokens ({body.min_tokens}) is more than the default "
                                    f"output limit, {max_tokens}: ask for an output limit of "
                                    f"at least {body.min_tokens}", param="min_tokens")  # fmt: skip
        if max_tokens is None:  # no limit asked for: whatever room the context leaves
            max_tokens = room
            if max_tokens < 1:
                raise APIError(400, no_room_message(prompt_len, self.max_total_tokens),
                               param=names["prompt"],
                               code="context_length_exceeded")  # fmt: skip
        repetition = body.repetition_penalty
        if body.repeat_penalty is not None:  # llama.cpp's name
            if repetition is not None and repetition != body.repeat_penalty:
                raise APIError(400, "repetition_penalty and repeat_penalty differ: give one",
                               param="repeat_penalty")  # fmt: skip
            repetition = body.repeat_penalty
        n = num_choices(body)
        if n > MAX_N:
            raise APIError(400, f"{names['n']} must be at most {MAX_N}, got {n}", param=names["n"])
        listed = tuple(body.logprob_token_ids) if body.logprob_token_ids else None
        prompt_logprobs = body.prompt_logprobs
        if opts.echo and opts.logprobs is not None:  # the echoed prompt's logprobs
            prompt_logprobs = max(opts.logprobs, prompt_logprobs or 0)
        d = self.defaults
        chain = Chain(
            d.temperature if body.temperature is None else body.temperature,
            d.top_k if body.top_k is None else body.top_k,
            d.top_p if body.top_p is None else body.top_p,
            d.min_p if body.min_p is None else body.min_p,
            d.repetition_penalty if repetition is None else repetition,
            body.presence_penalty or 0.0,
            body.frequency_penalty or 0.0,
            body.xtc_probability,
            body.xtc_threshold,
        )
        window = d.penalty_last_n if body.repeat_last_n is None else body.repeat_last_n
        # llama.cpp's milliseconds are an integer: a fraction is cut (0.5: no limit)
        time_limit = body.t_max_predict_ms
        if time_limit is not None:
            if not math.isfinite(time_limit):
                raise APIError(400, f"t_max_predict_ms must be a number of milliseconds, got "
                                    f"{time_limit}", param="t_max_predict_ms")  # fmt: skip
            time_limit = int(time_limit)
        try:
            if body.dry_multiplier != 0:  # (0: off, the other dry_* fields no-ops)
                breakers = body.dry_sequence_breakers
                chain = dataclasses.replace(chain, dry=DryPenalty(
                    body.dry_multiplier, body.dry_base, body.dry_allowed_length,
                    body.dry_penalty_last_n,
                    DEFAULT_BREAKERS if breakers is None else tuple(breakers),
                ))  # fmt: skip
            if body.samplers is not None:
                chain.check()  # (a sampler left out has its value checked all the same)
                chain = chain.of(body.samplers)
            return SamplingParams(
                n=n,
                max_tokens=max_tokens,
                temperature=chain.temperature,
                top_p=chain.top_p,
                top_k=chain.top_k,
                seed=body.seed,
                stop=tuple(body.stop_list),
                stop_token_ids=tuple(body.stop_token_ids or ()),
                ignore_eos=body.ignore_eos,
                include_stop_str_in_output=body.include_stop_str_in_output,
                skip_special_tokens=body.skip_special_tokens,
                min_tokens=body.min_tokens,
                presence_penalty=chain.presence_penalty,
                frequency_penalty=chain.frequency_penalty,
                repetition_penalty=chain.repetition_penalty,
                min_p=chain.min_p,
                logprobs_processed=body.post_sampling_probs,
                temperature_last=chain.temperature_last,
                infill=chain.infill,
                xtc_probability=chain.xtc_probability,
                xtc_threshold=chain.xtc_threshold,
                dry=chain.dry,
                min_indent=body.n_indent,
                stop_at_newline_after_ms=time_limit if time_limit and time_limit > 0 else None,
                penalty_last_n=window,
                # JSON's string keys: SamplingParams reads digit strings as token ids.
                logit_bias=cast("dict[int, float] | None", body.logit_bias),
                logprobs=len(listed) if listed else opts.logprobs,
                logprob_token_ids=listed,
                thinking_budget=thinking,
                prompt_logprobs=prompt_logprobs,
                bad_words=tuple(body.bad_words or ()),
                allowed_token_ids=None
                if body.allowed_token_ids is None
                else tuple(body.allowed_token_ids),
                structured_outputs=spec,
            )
        except ValueError as e:
            raise sampling_error(e, names) from None

    def truncate(self, body: P.SamplingRequest, ids: list[int]) -> list[int]:
        side = body.truncation_side or "left"
        return truncate_prompt(ids, body.truncate_prompt_tokens, self.max_model_len, side)


@dataclass(frozen=True)
class Chain:
    """A request's sampler settings, and where llama.cpp's `samplers` lists the chain, what
    it runs: a sampler left out at its neutral value (`sampler_chain.py`)."""

    temperature: float
    top_k: int
    top_p: float
    min_p: float
    repetition_penalty: float
    presence_penalty: float
    frequency_penalty: float
    xtc_probability: float = 0.0
    xtc_threshold: float = 0.1
    dry: DryPenalty | None = None
    temperature_last: bool = False
    infill: bool = False

    def check(self) -> None:
        """SamplingParams' checks of these values (a ValueError naming the field)."""
        SamplingParams(temperature=self.temperature, top_k=self.top_k, top_p=self.top_p,
                       min_p=self.min_p, repetition_penalty=self.repetition_penalty,
                       presence_penalty=self.presence_penalty,
                       frequency_penalty=self.frequency_penalty,
                       xtc_probability=self.xtc_probability,
                       xtc_threshold=self.xtc_threshold)  # fmt: skip

    def of(self, samplers: list[str] | str) -> Chain:
        active = {"top_k": self.top_k > 0, "top_p": self.top_p < 1.0, "min_p": self.min_p > 0.0,
                  "penalties": (self.repetition_penalty, self.presence_penalty,
                                self.frequency_penalty) != (1.0, 0.0, 0.0),
                  "shift": (self.presence_penalty, self.frequency_penalty) != (0.0, 0.0),
                  "xtc": self.xtc_probability > 0.0 and self.xtc_threshold <= 0.5,
                  "dry": self.dry is not None and self.dry.active,
                  "factor": self.repetition_penalty != 1.0}  # fmt: skip
        chain = sampler_chain(
            samplers, self.temperature, frozenset(n for n, a in active.items() if a)
        )
        runs = chain.names
        if chain.infill and "top_k" not in runs:  # (SamplingParams would say top_k 0)
            raise APIError(400, "samplers lists infill without top_k: llama.cpp's infill sampler "
                                "needs a top_k sampler before it (its top_k in [1, "
                                f"{INFILL_TOP_K_MAX}]; top_k is {self.top_k} here)",
                           param="samplers")  # fmt: skip
        return Chain(
            self.temperature if "temperature" in runs else 1.0,
            self.top_k if "top_k" in runs else 0,
            self.top_p if "top_p" in runs else 1.0,
            self.min_p if "min_p" in runs else 0.0,
            *((self.repetition_penalty, self.presence_penalty, self.frequency_penalty)
              if "penalties" in runs else (1.0, 0.0, 0.0)),
            self.xtc_probability if "xtc" in runs else 0.0,
            self.xtc_threshold,
            self.dry if "dry" in runs else None,
            temperature_last=chain.temperature_last,
            infill=chain.infill,
        )  # fmt: skip


@dataclass(frozen=True)
class ResponseOptions:
    """How an OpenAI response writes its choices, resolved from the request body once."""

    chat: bool
    logprobs: int | None = None  # top N per output token (None: no logprobs)
    echo: bool = False  # completions: the prompt before the text (and its logprobs)
    # completions: `echo` with max_tokens 0, the prompt alone (OpenAI's old scoring form, as
    # vLLM): the one token generated to run the request is left out, finish reason "length"
    echo_only: bool = False
    prompt_logprobs: int | None = None  # vLLM's prompt_logprobs in the response: top N
    # The request's constraint field (its name as given: `response_format`, `guided_regex`,
    # ...): a grammar that fails only while it runs is a 400 naming it.
    constraint_param: str | None = None
    # chat: the reasoning read apart (`GenerationGroup.reasoning`) is written in the answer
    # (`reasoning` and `reasoning_content`); False: left out, or none read apart
    show_reasoning: bool = False
    # vLLM's `return_token_ids`: the prompt's ids (chat: the response's `prompt_token_ids`,
    # completions: each choice's) and each choice's output ids (`token_ids`), a stream's in
    # its chunks as they come (the prompt's in a choice's first)
    token_ids: bool = False
    continuous_usage: bool = False  # a stream's chunks carry each choice's usage so far
    tokens_as_ids: bool = False  # vLLM's return_tokens_as_token_ids: logprobs' `token_id:N`
    # chat: vLLM's `echo`, the last message's text before each choice's content ("": none)
    echoed_message: str = ""
    # vLLM's logprob_token_ids: each position's logprobs list its token, then those
    listed_logprobs: bool = False
    # llama.cpp's timings_per_token: each streamed chunk of a choice carries its `timings`
    timings: bool = False
    # llama.cpp's return_progress: a stream's `prompt_progress` chunks while a prompt computes
    progress: bool = False


def response_options(body: P.SamplingRequest) -> ResponseOptions:
    """How the response writes its choices (logprobs, echo), and what the stream cannot give."""
    if body.stream and body.prompt_logprobs is not None:
        raise APIError(400, "prompt_logprobs are not available with stream=true (as vLLM)",
                       param="prompt_logprobs")  # fmt: skip
    prompt_logprobs = body.prompt_logprobs
    so = body.stream_options
    continuous = so is not None and so.continuous_usage_stats
    if continuous and not body.include_usage:  # (vLLM gives none then, saying nothing)
        raise APIError(400, "stream_options.continuous_usage_stats needs "
                       "stream_options.include_usage: true",
                       param="stream_options.continuous_usage_stats")  # fmt: skip
    if isinstance(body, P.ChatCompletionRequest):
        if body.top_logprobs and not body.logprobs:  # 0 asks for nothing (vLLM's default)
            raise APIError(400, "top_logprobs needs logprobs: true", param="top_logprobs")
        top = (body.top_logprobs or 0) if body.logprobs else None
        if body.logprob_token_ids and not body.logprobs:
            raise APIError(400, "logprob_token_ids needs logprobs: true",
                           param="logprob_token_ids")  # fmt: skip
        _check_unread_count(body, "top_logprobs", body.top_logprobs)
        return ResponseOptions(
            chat=True,
            logprobs=top,
            prompt_logprobs=prompt_logprobs,
            token_ids=body.return_token_ids,
            continuous_usage=continuous,
            tokens_as_ids=body.return_tokens_as_token_ids,
            echoed_message=echoed_message(body),
            listed_logprobs=bool(body.logprob_token_ids),
            timings=body.timings_per_token,
            progress=body.return_progress and body.stream,
        )
    assert isinstance(body, P.CompletionRequest)
    echo_only = body.echo and max_tokens_field(body)[1] == 0
    _check_unread_count(body, "logprobs", body.logprobs)
    if body.logprob_token_ids and (body.logprobs is None or echo_only):
        raise APIError(400, "logprob_token_ids needs logprobs (any N: the list is the tokens "
                       "shown) and tokens to generate (not echo with max_tokens 0)",
                       param="logprob_token_ids")  # fmt: skip
    return ResponseOptions(chat=False, logprobs=body.logprobs, echo=body.echo,
                           echo_only=echo_only, prompt_logprobs=prompt_logprobs,
                           token_ids=body.return_token_ids, continuous_usage=continuous,
                           tokens_as_ids=body.return_tokens_as_token_ids,
                           listed_logprobs=bool(body.logprob_token_ids),
                           timings=body.timings_per_token,
                           progress=body.return_progress and body.stream)  # fmt: skip


def _check_unread_count(body: P.SamplingRequest, name: str, value: int | None) -> None:
    """Beside `logprob_token_ids` the top N goes unread, but a value no request may hold is
    still a 400 (the engine's check would never see it)."""
    if body.logprob_token_ids and value is not None and not 0 <= value <= MAX_LOGPROBS:
        raise APIError(400, f"{name} must be an integer in [0, {MAX_LOGPROBS}], got {value}",
                       param=name)  # fmt: skip


def echoed_message(body: P.ChatCompletionRequest) -> str:
    """vLLM's chat `echo`: the last message's text, where it is the answer's own role's (an
    assistant's, or any with `add_generation_prompt: false`, where vLLM's answer takes the last
    message's role); so `continue_final_message` answers with the whole message."""
    last = body.messages[-1]
    if not body.echo or (body.add_generation_prompt and last.role != "assistant"):
        return ""
    return last.text()


def max_tokens_field(body: P.SamplingRequest) -> tuple[str | None, int | None]:
    """(the field that sets the output limit, its value: None for no limit); max_completion_tokens,
    max_tokens and llama.cpp's n_predict (-1, and max_tokens -1 as llama.cpp reads it: no limit)
    are one setting, so given twice they must agree."""
    given = [(name, getattr(body, name)) for name in ("max_completion_tokens", "max_tokens",
             "n_predict") if getattr(body, name) is not None]  # fmt: skip
    if not given:
        return None, None
    (first, value), *others = given
    for name, other in others:
        if other != value:
            raise APIError(400, f"{name} ({other}) and {first} ({value}) set the same limit "
                                "differently: give one", param=name)  # fmt: skip
    # llama.cpp reads max_tokens as n_predict (its web page sends -1 on every chat request)
    if first in ("n_predict", "max_tokens") and value == -1:
        return first, None
    if first in ("n_predict", "max_tokens") and value < -1:  # (SamplingParams' says >= 1)
        raise APIError(400, f"{first} must be -1 (what the context leaves) or >= 1, got "
                            f"{value}", param=first)  # fmt: skip
    return first, value


def num_choices(body: P.SamplingRequest) -> int:
    """`n`, or llama.cpp's `n_cmpl` for it (given both, they must agree)."""
    if body.n_cmpl is None:
        return body.n
    if "n" in body.model_fields_set and body.n != body.n_cmpl:
        raise APIError(400, f"n_cmpl ({body.n_cmpl}) and n ({body.n}) set the same count "
                            "differently: give one", param="n_cmpl")  # fmt: skip
    return body.n_cmpl


def client_names(body: P.SamplingRequest, chat: bool, so_param: str | None) -> dict[str, str]:
    """SamplingParams' field names (and the engine's "prompt") -> the fields this request set
    them with; `so_param`: the field that asked for structured output."""
    prompt = "messages" if chat else "prompt"
    max_param, _ = max_tokens_field(body)
    names = {
        "prompt": prompt,
        # no limit asked for: the default only fails when the prompt leaves too little room
        "max_tokens": max_param or prompt,
        "n": "n" if body.n_cmpl is None else "n_cmpl",
        "repetition_penalty": "repeat_penalty" if body.repeat_penalty is not None
        else "repetition_penalty",
        "min_indent": "n_indent",
        "stop_at_newline_after_ms": "t_max_predict_ms",
        "penalty_last_n": "repeat_last_n",
    }  # fmt: skip
    if chat:
        names["logprobs"] = "top_logprobs"
    if so_param is not None:
        names["structured_outputs"] = so_param
    return names


def sampling_error(error: ValueError, names: dict[str, str]) -> APIError:
    """A 400 for SamplingParams' refusal, naming the field as the request sent it."""
    param = _param_of(error)
    if param is None:
        return APIError(400, str(error))
    sent = names.get(param, param)  # the message says the name the request used too
    return APIError(400, sent + str(error)[len(param) :], param=sent)


def engine_error(error: InvalidRequestError, names: dict[str, str]) -> APIError:
    """A 400 for the engine's refusal (`LLMEngine.validate`), naming the field as the request
    sent it, in the message too where the engine says max_tokens."""
    param = names.get(error.param, error.param) if error.param else None
    message = str(error)
    if error.param == "max_tokens" and param in _MAX_TOKENS_ALIASES:
        message = message.replace("max_tokens", param)
    return APIError(400, message, param=param, code=error.code)


def _param_of(error: ValueError) -> str | None:
    """The SamplingParams field a validation message starts with ("seed must be ...")."""
    name = str(error).split(" ", 1)[0]
    return name if name in SAMPLING_FIELDS else None
