"""What one request asks of the engine: `SamplingParams` (vLLM's names) and its
`StructuredOutputs` (`roseinfer/structured/params.py`, importable from here too), every value
checked when they are built, so the Python API and the server refuse the same requests with the
same messages."""

from __future__ import annotations

import copy
import functools
from dataclasses import InitVar, dataclass, field
from typing import Any, ClassVar

from roseinfer.checks import SEED_MAX, SEED_MIN, check_bools, is_int, is_number
from roseinfer.dry_params import DryPenalty
from roseinfer.reasoning_params import ThinkingBudget
from roseinfer.structured.params import StructuredOutputs

# Temperatures below this sample as greedy: dividing logits by 1e-40 overflows to inf/NaN, and
# vLLM draws the same line (its _SAMPLING_EPS).
GREEDY_TEMPERATURE = 1e-5
# Most top logprobs a position may ask for (OpenAI's top_logprobs limit; vLLM's default).
MAX_LOGPROBS = 20
# Most tokens `logprob_token_ids` may list (vLLM's limit).
MAX_LOGPROB_TOKEN_IDS = 128
MAX_LOGIT_BIAS = 100.0  # a logit_bias value is in [-MAX_LOGIT_BIAS, MAX_LOGIT_BIAS] (OpenAI's)
# Largest top_k: the sampler holds it in a tensor (a Python int past int64 cannot even be
# stored), and any k at or above the vocabulary size already keeps every token; vLLM's int32.
TOP_K_MAX = (1 << 31) - 1
# Largest top_k before llama.cpp's infill sampler: it compares the text of each candidate with
# the others' in Python on the engine loop (1,000: 1.5 ms a row; the whole vocabulary: 0.3 s a
# step, every request's; llama.vim and llama.vscode send 40).
INFILL_TOP_K_MAX = 1000


# Stop strings a request may give: the output processor looks for each at every token, on the
# loop every running request waits on (10,000 took 5-8 ms a token). OpenAI takes 4, TGI 4 by
# default; vLLM and llama.cpp have no limit.
MAX_STOP_STRINGS = 64
# Their characters in all: each request's strings are prepared for matching in Python (once,
# on the event loop), and the text held back can be as long as the longest.
MAX_STOP_CHARS = 16 * 1024
# Bad words a request may give, and their length: each sequence's are indexed by their heads
# when it starts (Python, on the engine loop), and every step looks its last tokens up once per
# head length (400,000 words had taken 2 s to index; a word of 10,000 tokens is a 10,000-token
# lookup a step).
MAX_BAD_WORDS = 1024
MAX_BAD_WORD_CHARS = 100


@dataclass(frozen=True)
class SamplingParams:
    """How one request is sampled and when it stops (vLLM's names).

    `temperature` 0 (or below `GREEDY_TEMPERATURE`) is greedy. `n` choices per prompt; with a
    `seed`, choice i draws from `seed + i` (-1: no seed, as in vLLM and llama.cpp).
    `max_new_tokens` (the seeds' name) is accepted for `max_tokens` (given beside a
    `max_tokens` other than its default, the two must agree; `dataclasses.replace` copies it
    as the old `max_tokens`, so a copy with another `max_tokens` passes `max_new_tokens=None`
    too). An empty `stop` string, which would match
    anywhere, is dropped, as is a repeated one (at most MAX_STOP_STRINGS remain, of
    MAX_STOP_CHARS characters in all). Every value is checked here,
    so the Python API and the server refuse the same requests with the same messages (token
    ids against the vocabulary: `LLMEngine.validate`).

    `logprobs` N: each generated token's logprob and the N likeliest at its position (0: the
    token's only); `prompt_logprobs` N: the same for the prompt's tokens. Both are of the raw
    model distribution (before penalties, bias and temperature), as vLLM V1 reports them.
    `bad_words`: strings the output never contains, as tokenized at the start of text or after
    a space (vLLM's rule). `allowed_token_ids`: the only tokens that may be generated.

    `logprob_token_ids` (vLLM's): the tokens each position's logprobs list, in this order, in
    place of its likeliest (each with its logprob and rank; `logprobs` must be their count).
    `thinking_budget` (vLLM's `thinking_token_budget`): a thinking block that has run for its
    tokens is closed by force (`ThinkingBudget`).

    `logprobs_processed`: `logprobs` of the distribution the token was drawn from (after
    masks, bias, penalties, temperature, truncation; greedy: the token alone, at 0), llama.cpp's
    `post_sampling_probs`; tokens of probability 0 are not among the top N.

    llama.cpp's: `temperature_last` applies the temperature after top-k, top-p, min-p and XTC
    (its sampler order) instead of before them; `xtc_probability` and `xtc_threshold` its XTC
    sampler after min-p (layers/xtc.py); `infill` runs its infill sampler after them (before
    a late temperature); `min_indent` (its `n_indent`) ends the text at the first non-blank
    character of a line after the first that is indented by fewer spaces or tabs, cut there;
    `stop_at_newline_after_ms` (its `t_max_predict_ms`) ends the text after the first token
    holding a newline that comes this long after the first token. Both end it with "length".
    `penalty_last_n` (its `repeat_last_n`): the three penalties read the last n tokens of the
    prompt and the output, as llama.cpp's (-1: all of them; 0: the penalties off); None, vLLM's:
    the repetition penalty reads the prompt and the output, the frequency and presence
    penalties the output alone. `dry`: its DRY penalty, after the other penalties (`DryPenalty`).
    """

    n: int = 1
    max_tokens: int = 64
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # 0 (or -1) disables it
    min_tokens: int = 0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    ignore_eos: bool = False
    include_stop_str_in_output: bool = False  # the stop string that ended the text stays in it
    skip_special_tokens: bool = True  # False: special tokens' text in the output's text
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    min_p: float = 0.0
    logit_bias: dict[int, float] | None = field(default=None, hash=False, compare=True)
    logprobs: int | None = None
    prompt_logprobs: int | None = None
    bad_words: tuple[str, ...] = ()
    allowed_token_ids: tuple[int, ...] | None = None
    structured_outputs: StructuredOutputs | None = None
    logprobs_processed: bool = False  # `logprobs` of the distribution drawn from, not the model's
    temperature_last: bool = False  # after top-k/top-p/min-p (llama.cpp's order), not before
    infill: bool = False  # llama.cpp's infill filter after the truncation (layers/infill.py)
    min_indent: int = 0  # lines after the first end the text where indented less
    stop_at_newline_after_ms: float | None = None  # past this since the first token: a newline ends
    penalty_last_n: int | None = None  # llama.cpp's window of the penalties (None: vLLM's)
    logprob_token_ids: tuple[int, ...] | None = None  # vLLM's: listed instead of the top N
    thinking_budget: ThinkingBudget | None = None  # vLLM's thinking_token_budget
    xtc_probability: float = 0.0  # llama.cpp's XTC: a step's chance to drop the top choices
    xtc_threshold: float = 0.1  # the probability from which a token is a top choice
    dry: DryPenalty | None = None  # llama.cpp's DRY: repeats of earlier runs made unlikely
    max_new_tokens: InitVar[int | None] = None

    def __post_init__(self, max_new_tokens: int | None) -> None:
        if max_new_tokens is not None:
            default = SamplingParams.__dataclass_fields__["max_tokens"].default
            if self.max_tokens not in (default, max_new_tokens):  # one would silently win
                raise ValueError(
                    f"max_new_tokens={max_new_tokens!r} and max_tokens={self.max_tokens!r} "
                    "differ: give one (max_new_tokens is the seeds' name for max_tokens; "
                    "dataclasses.replace copies it: pass max_new_tokens=None with a new "
                    "max_tokens)"
                )
            object.__setattr__(self, "max_tokens", max_new_tokens)
        given = {
            "n": self.n,
            "max_new_tokens" if max_new_tokens is not None else "max_tokens": self.max_tokens,
        }
        for name, value in given.items():
            if not is_int(value) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not is_number(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature!r}")
        if not is_number(self.top_p) or not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if not is_int(self.top_k) or not -1 <= self.top_k <= TOP_K_MAX:
            raise ValueError(
                f"top_k must be an integer in [0, {TOP_K_MAX}] (0 or -1 disable it), "
                f"got {self.top_k!r}"
            )
        if self.top_k == -1:
            object.__setattr__(self, "top_k", 0)
        if not is_int(self.min_tokens) or not 0 <= self.min_tokens <= self.max_tokens:
            raise ValueError(
                f"min_tokens must be an integer in [0, max_tokens={self.max_tokens}], "
                f"got {self.min_tokens!r}"
            )
        if is_int(self.seed) and self.seed == -1:  # vLLM's and llama.cpp's "random"
            object.__setattr__(self, "seed", None)
        if self.seed is not None and (
            not is_int(self.seed) or not SEED_MIN <= self.seed <= SEED_MAX
        ):
            raise ValueError(
                f"seed must be an integer in [{SEED_MIN}, {SEED_MAX}], got {self.seed!r}"
            )
        for name in ("stop", "stop_token_ids", "bad_words"):  # None: vLLM's default, none
            if getattr(self, name) is None:
                object.__setattr__(self, name, ())
        stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
        if not all(isinstance(s, str) for s in stop):
            raise ValueError("stop must be a string or a list of strings")
        stop = tuple(dict.fromkeys(s for s in stop if s))  # once each, in their order
        if len(stop) > MAX_STOP_STRINGS:
            raise ValueError(
                f"stop takes at most {MAX_STOP_STRINGS} strings (each is looked for at every "
                f"token), got {len(stop)}"
            )
        if (chars := sum(map(len, stop))) > MAX_STOP_CHARS:
            raise ValueError(
                f"stop strings take at most {MAX_STOP_CHARS} characters in all, got {chars}"
            )
        object.__setattr__(self, "stop", stop)
        ids = tuple(self.stop_token_ids)
        if not all(is_int(t) and t >= 0 for t in ids):
            raise ValueError("stop_token_ids must be non-negative integers")
        object.__setattr__(self, "stop_token_ids", tuple(dict.fromkeys(ids)))  # once each
        check_bools(ignore_eos=self.ignore_eos,
                    include_stop_str_in_output=self.include_stop_str_in_output,
                    skip_special_tokens=self.skip_special_tokens)  # fmt: skip
        for name in ("presence_penalty", "frequency_penalty"):
            value = getattr(self, name)
            if not is_number(value) or not -2.0 <= value <= 2.0:
                raise ValueError(f"{name} must be in [-2, 2], got {value!r}")
        window = self.penalty_last_n
        if window is not None and not (is_int(window) and window >= -1):
            raise ValueError(f"penalty_last_n must be an integer >= -1 (-1: the whole context), "
                             f"got {window!r}")  # fmt: skip
        if not is_number(self.repetition_penalty) or self.repetition_penalty <= 0:
            raise ValueError(
                f"repetition_penalty must be a finite number > 0, got {self.repetition_penalty!r}"
            )
        if not is_number(self.min_p) or not 0.0 <= self.min_p <= 1.0:
            raise ValueError(f"min_p must be in [0, 1], got {self.min_p!r}")
        for name in ("xtc_probability", "xtc_threshold"):
            if not is_number(value := getattr(self, name)) or not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        if self.dry is not None and not isinstance(self.dry, DryPenalty):
            raise ValueError(f"dry must be a DryPenalty, got {type(self.dry).__name__}")
        object.__setattr__(self, "logit_bias", _logit_bias(self.logit_bias))
        if self.logprob_token_ids is not None:
            self._check_logprob_token_ids()
        for name in ("logprobs", "prompt_logprobs"):
            if name == "logprobs" and self.logprob_token_ids is not None:
                continue  # the list's count, checked with it (past MAX_LOGPROBS too)
            value = getattr(self, name)
            if value is not None and (not is_int(value) or not 0 <= value <= MAX_LOGPROBS):
                raise ValueError(f"{name} must be an integer in [0, {MAX_LOGPROBS}], got {value!r}")
        words = (self.bad_words,) if isinstance(self.bad_words, str) else tuple(self.bad_words)
        if not all(isinstance(w, str) and w.strip() for w in words):
            raise ValueError("bad_words must be a list of non-blank strings")
        if len(words) > MAX_BAD_WORDS or any(len(w) > MAX_BAD_WORD_CHARS for w in words):
            raise ValueError(
                f"bad_words takes at most {MAX_BAD_WORDS} words of at most "
                f"{MAX_BAD_WORD_CHARS} characters each"
            )
        object.__setattr__(self, "bad_words", tuple(dict.fromkeys(words)))  # once each
        if self.allowed_token_ids is not None:
            ids = tuple(self.allowed_token_ids)
            if not ids or not all(is_int(t) and t >= 0 for t in ids):
                raise ValueError(
                    "allowed_token_ids must be a non-empty list of token ids (integers >= 0)"
                )
            object.__setattr__(self, "allowed_token_ids", tuple(dict.fromkeys(ids)))
        check_bools(temperature_last=self.temperature_last, infill=self.infill,
                    logprobs_processed=self.logprobs_processed)  # fmt: skip
        if self.infill and self.ignore_eos:  # (llama.cpp masks the end tokens there instead)
            raise ValueError(
                "ignore_eos cannot be true beside llama.cpp's infill sampler (infill): where "
                "no text is likely its answer is the end token, which would not end the output"
            )
        # (that end token, the filter's answer, would pass over what these forbid)
        masks = {"min_tokens": self.min_tokens > 0, "allowed_token_ids":
                 self.allowed_token_ids is not None, "structured_outputs":
                 self.structured_outputs is not None}  # fmt: skip
        if self.infill and (mask := next((m for m, on in masks.items() if on), None)):
            raise ValueError(
                f"{mask} cannot be set beside llama.cpp's infill sampler (infill): where no "
                "text is likely its answer is the end token, which that would forbid"
            )
        if self.infill and not 0 < self.top_k <= INFILL_TOP_K_MAX:
            raise ValueError(
                f"top_k must be in [1, {INFILL_TOP_K_MAX}] before llama.cpp's infill sampler "
                f"(infill), which compares every candidate's text with the others', got "
                f"{self.top_k}"
            )
        if not is_int(self.min_indent) or self.min_indent < 0:
            raise ValueError(f"min_indent must be an integer >= 0, got {self.min_indent!r}")
        limit = self.stop_at_newline_after_ms
        if limit is not None and (not is_number(limit) or limit <= 0):
            raise ValueError(
                f"stop_at_newline_after_ms must be a number > 0 (None: no limit), got {limit!r}"
            )
        if self.structured_outputs is not None and not isinstance(
            self.structured_outputs, StructuredOutputs
        ):
            raise ValueError("structured_outputs must be a StructuredOutputs")
        if self.thinking_budget is not None and not isinstance(
            self.thinking_budget, ThinkingBudget
        ):
            raise ValueError("thinking_budget must be a ThinkingBudget")

    def _check_logprob_token_ids(self) -> None:
        ids = tuple(self.logprob_token_ids or ())
        if not 0 < len(ids) <= MAX_LOGPROB_TOKEN_IDS or not all(is_int(t) and t >= 0 for t in ids):
            raise ValueError(f"logprob_token_ids must be a list of 1 to {MAX_LOGPROB_TOKEN_IDS} "
                             "token ids (integers >= 0)")  # fmt: skip
        if len(set(ids)) < len(ids):
            raise ValueError("logprob_token_ids lists a token twice")
        if self.logprobs != len(ids):  # (vLLM's rule: the count is the list's)
            raise ValueError(f"logprob_token_ids lists {len(ids)} tokens: logprobs must be "
                             f"{len(ids)}, got {self.logprobs!r}")  # fmt: skip
        if self.logprobs_processed:  # (a token the samplers left out would have no logprob)
            raise ValueError("logprob_token_ids cannot be set beside logprobs_processed: they "
                             "are the model's logprobs")  # fmt: skip
        object.__setattr__(self, "logprob_token_ids", ids)

    @functools.cached_property
    def stop_token_id_set(self) -> frozenset[int]:
        """`stop_token_ids`, looked up at every token."""
        return frozenset(self.stop_token_ids)

    @property
    def greedy(self) -> bool:
        return self.temperature < GREEDY_TEMPERATURE

    @property
    def uses_xtc(self) -> bool:
        """XTC can act: a chance above 0, and a threshold two tokens can both reach."""
        return self.xtc_probability > 0.0 and self.xtc_threshold <= 0.5

    @property
    def uses_dry(self) -> bool:
        """DRY can lower a logit (`DryPenalty.active`)."""
        return self.dry is not None and self.dry.active

    @property
    def uses_penalties(self) -> bool:
        """Any of the penalties that read the sequence's tokens is on (a window of 0 tokens
        turns them off, as llama.cpp's)."""
        return self.penalty_last_n != 0 and (
            self.presence_penalty != 0.0
            or self.frequency_penalty != 0.0
            or self.repetition_penalty != 1.0
        )

    def choice_seed(self, index: int) -> int | None:
        """The seed of choice `index` of `n`, wrapped into what the generator takes."""
        return None if self.seed is None else (self.seed + index) % (1 << 64)

    def for_choice(self, index: int, prompt_logprobs: int | None) -> SamplingParams:
        """Choice `index`'s params: n = 1, its own seed, `prompt_logprobs` as given. A copy of
        these, checked once: `dataclasses.replace` would check every field again, for each of n
        choices (a 49,152-entry logit_bias, n = 32: 1.5 M checks on the engine loop)."""
        choice = copy.copy(self)
        object.__setattr__(choice, "n", 1)
        object.__setattr__(choice, "seed", self.choice_seed(index))
        object.__setattr__(choice, "prompt_logprobs", prompt_logprobs)
        return choice


def _logit_bias(bias: Any) -> dict[int, float] | None:
    """{token id: bias in [-100, 100]}; ids may be strings of digits (JSON object keys). Ids are
    checked against the vocabulary by the engine (`LLMEngine.validate`). Empty is None."""
    if bias is None:
        return None
    if not isinstance(bias, dict):
        raise ValueError(f"logit_bias must be an object of token id -> bias, got {bias!r}")
    out: dict[int, float] = {}
    for key, value in bias.items():
        tid = key
        # ASCII digits only: int() also reads other scripts' digits ("٢٨" is 28).
        if isinstance(key, str) and key.strip().isascii() and key.strip().isdigit():
            try:
                tid = int(key)
            except ValueError:  # over CPython's 4300 digits: no token id; refused by name below
                pass
        if not is_int(tid) or tid < 0:
            long = isinstance(key, str) and len(key) > 40
            shown = f"{key[:20]!r}... ({len(key)} characters)" if long else repr(key)
            raise ValueError(f"logit_bias keys must be token ids (integers >= 0), got {shown}")
        if not is_number(value) or not -MAX_LOGIT_BIAS <= value <= MAX_LOGIT_BIAS:
            raise ValueError(f"logit_bias values must be in [-100, 100], got {value!r} for {key!r}")
        if tid in out:  # "28" and "028" (or 28 and "28"): one would silently replace the other
            raise ValueError(f"logit_bias names token {tid} twice (key {key!r})")
        out[tid] = float(value)
    return out or None


# The seeds' `max_new_tokens`, readable too (it is an init-only alias of `max_tokens`). Set
# after the class is built, so that the dataclass still takes it as an `InitVar`; setattr, as
# a type checker has no name for a property that replaces an `InitVar`.
setattr(SamplingParams, "max_new_tokens", property(lambda self: self.max_tokens))  # noqa: B010


@dataclass(frozen=True)
class SamplingDefaults:
    """What a request that leaves a sampling field out gets: OpenAI's values, or a model's own
    from its generation_config.json (a GGUF's `general.sampling.*` metadata, read into that
    file's names), which vLLM applies by default (`--generation-config auto`): `temperature`,
    `top_p`, `top_k`, `min_p`, `repetition_penalty`, and `max_new_tokens` as the output limit
    of a request that sets none; a GGUF's `penalty_last_n` too (llama.cpp's window of the
    penalties). Checked as SamplingParams checks them. `given`: the fields
    the model's file sets (llama.cpp's endpoints take its own defaults for the others);
    `origin`: where they were read, as messages name it."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    max_tokens: int | None = None  # None: the front door's own default
    penalty_last_n: int | None = None  # a GGUF's window of the penalties (llama.cpp's)
    given: frozenset[str] = frozenset()
    origin: str = "generation_config.json"

    SAMPLING: ClassVar[tuple[str, ...]] = (
        "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "penalty_last_n"
    )  # fmt: skip

    def __post_init__(self) -> None:
        self.params()  # SamplingParams' checks and messages

    @classmethod
    def from_generation_config(
        cls, config: dict, origin: str = "generation_config.json"
    ) -> SamplingDefaults:
        """The fields `config` (generation_config.json's names) sets, as vLLM reads them
        (whatever its `do_sample` says: the model's authors wrote these values for sampling)."""
        given: dict[str, Any] = {k: config[k] for k in cls.SAMPLING if config.get(k) is not None}
        if config.get("max_new_tokens") is not None:
            given["max_tokens"] = config["max_new_tokens"]
        for name in ("top_k", "max_tokens", "penalty_last_n"):  # 50.0 as JSON may give it: 50
            if isinstance(given.get(name), float) and given[name].is_integer():
                given[name] = int(given[name])
        if given.get("top_k") == -1:  # off, as 0
            given["top_k"] = 0
        try:
            return cls(**given, given=frozenset(given), origin=origin)
        except ValueError as e:  # SamplingParams names max_tokens: say the file's name
            raise ValueError(str(e).replace("max_tokens", "max_new_tokens")) from None

    @classmethod
    def of_model(
        cls, generation_config: dict, mode: str, origin: str = "generation_config.json"
    ) -> SamplingDefaults:
        """Under `mode` "auto" the model's file's (a ValueError naming it, and the way out: one
        line at start, not a failure in every request), under "none" OpenAI's."""
        if mode != "auto":
            return cls()
        try:
            return cls.from_generation_config(generation_config, origin)
        except ValueError as e:
            raise ValueError(f"the model's {origin}: {e} (--generation-config none: OpenAI's "
                             "defaults instead)") from None  # fmt: skip

    def changed(self) -> dict[str, float | int]:
        """The values that differ from OpenAI's, by the file's names (the start-up line's)."""
        plain = SamplingDefaults()
        changed = {f: v for f in (*self.SAMPLING, "max_tokens")
                   if (v := getattr(self, f)) != getattr(plain, f)}  # fmt: skip
        if "max_tokens" in changed:
            changed["max_new_tokens"] = changed.pop("max_tokens")
        return changed

    def params(self) -> SamplingParams:
        """`SamplingParams()` under these defaults (the offline front door's default)."""
        return SamplingParams(
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            min_p=self.min_p,
            repetition_penalty=self.repetition_penalty,
            penalty_last_n=self.penalty_last_n,
            max_tokens=SamplingParams.max_tokens if self.max_tokens is None else self.max_tokens,
        )
