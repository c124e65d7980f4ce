"""The field table's rows of llama.cpp's native POST /completion that /v1/completions does not
share, and of its /embedding; `fields.py` adds the fields /completion and /v1/completions read
alike (the sampling fields llama.cpp's server takes, and each of its own: `n_predict`,
`repeat_penalty`, `grammar`, its refused samplers, its no-ops) to /completion, and
`llamacpp.py` turns a checked body into a completions request."""

from __future__ import annotations

from typing import Any

from roseinfer.server.field_checks import (
    FieldSpec,
    at_most_zero,
    equals,
    is_int,
    is_num,
    is_str,
)
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref

LLAMACPP_COMPLETION = "llamacpp_completion"
LLAMACPP_EMBEDDING = "llamacpp_embedding"
LLAMACPP_INFILL = "llamacpp_infill"  # /infill: /completion's rows but `prompt`, and its own
_N, _EM, _IN = (LLAMACPP_COMPLETION,), (LLAMACPP_EMBEDDING,), (LLAMACPP_INFILL,)
_LC = "llama.cpp"
_ST = "SillyTavern"  # other servers' names its "llama.cpp" type sends (llamacpp_forms.py)


def _alias(name: str, twin: str, whose: str) -> FieldSpec:
    return _h(
        name,
        _N,
        f"{whose} name for `{twin}` (SillyTavern sends it beside llama.cpp's; "
        "both given, they must agree)",
        _ST,
    )


def _theirs(name: str, neutral: Any, doc: str) -> FieldSpec:
    return _ref(name, _N, equals(neutral), repr(neutral).lower(), doc, _ST)


LLAMACPP_FIELDS: tuple[FieldSpec, ...] = (
    _h("prompt", _N, "a string, a token-id list, a list mixing both (one prompt: its strings "
       "tokenized in place, a BOS only before a leading string), or a list of strings and "
       "id lists (several prompts: the answer is a list of results, `index` in order); "
       "llama.cpp's `{prompt_string, multimodal_data}` objects are refused", _LC),
    _h("max_tokens", _N, "llama.cpp's alias of `n_predict` (if several are given they must "
       "agree; 0 as `n_predict`'s); left out: what the context leaves, at most the model's "
       "`max_new_tokens`", _LC),
    _h("max_completion_tokens", _N, "llama.cpp's alias of `n_predict` (0 as its)", _LC),
    _h("n_probs", _N, "0 to 20: each generated token's logprob and the N likeliest (of the "
       "model's distribution, before sampling; with `post_sampling_probs`, the probabilities "
       "of the distribution drawn from) in `completion_probabilities`", _LC),
    _h("logprobs", _N, "llama.cpp's alias of `n_probs` (if both are given they must agree)",
       _LC),
    _h("logit_bias", _N, "llama.cpp's forms: `[[token, bias], ...]`, a token an id or a string "
       "(each token of its text gets the bias, a special token's text read as text; one with "
       "no tokens is a 400), or `{token: bias}`, a key of ASCII digits an id; a bias in [-100, 100], `false` (-100, OpenAI's floor, not llama.cpp's -inf, "
       "which could leave no token: drawn only where every other token is masked or 100 "
       "below it) or `true` (nothing)", _LC),
    _h("return_tokens", _N, "the generated token ids in `tokens` (streamed chunks always carry "
       "their own)", _LC),
    _h("timings_per_token", _N, "`timings` in every streamed chunk, not only the last", _LC),
    _h("response_fields", _N, "only these keys of the result (`\"a/b\"`: the nested `b` of "
       "`a`, under the key `\"a/b\"`, as llama.cpp); a streamed answer's last chunk too", _LC),
    _noop("sse_ping_interval", _N, is_int, "keep-alive comments on an idle stream (never data, "
          "which is the same either way); none are sent", _LC),
    _noop("slot_id", _N, is_int, "older llama.cpp's name of `id_slot`: no slots here", _LC),
    _ref("penalize_nl", _N, equals(False), "false", "older llama.cpp's penalty on newlines "
         "(its web UI sends it)", _LC),
    # -- other servers' fields in SillyTavern's body (its "llama.cpp" type forwards them all)
    _alias("max_new_tokens", "n_predict", "text-generation-webui's and TGI's"),
    _alias("num_predict", "n_predict", "Ollama's"),
    _alias("stopping_strings", "stop", "text-generation-webui's"),
    _alias("repetition_penalty", "repeat_penalty", "text-generation-webui's (here under "
           "`repeat_last_n`'s window, as llama.cpp's)"),
    _alias("rep_pen", "repeat_penalty", "KoboldCpp's"),
    _alias("rep_pen_range", "repeat_last_n", "KoboldCpp's (read as llama.cpp's: 0 turns the "
           "penalties off)"),
    _alias("repetition_penalty_range", "repeat_last_n", "text-generation-webui's (read as "
           "llama.cpp's)"),
    _alias("ban_eos_token", "ignore_eos", "text-generation-webui's"),
    _alias("sampler_seed", "seed", "KoboldCpp's"),
    _alias("num_ctx", "truncation_length", "Ollama's"),
    _h("truncation_length", _N, "text-generation-webui's: a prompt longer than this less the "
       "tokens asked for keeps its last tokens (a 400 where nothing is left for it)", _ST),
    _h("add_bos_token", _N, "text-generation-webui's: false, no BOS before a leading string "
       "(true: the tokenizer's, the default)", _ST),
    _h("custom_token_bans", _N, "text-generation-webui's: token ids separated by commas, each "
       "given `logit_bias` false (-100); \"\" none", _ST),
    _ref("include_reasoning", _N, equals(True), "true", "a completion's thinking left out "
         "(its text is never read apart)", _ST),
    _theirs("typical", 1, "text-generation-webui's name of `typical_p`"),
    _theirs("tfs", 1, "tail-free sampling (`tfs_z`'s other name)"),
    _ref("nsigma", _N, at_most_zero, "<= 0", "top-n-sigma sampling (`top_n_sigma`'s other "
         "name)", _ST),
    _theirs("mirostat_mode", 0, "mirostat sampling (`mirostat`'s other name)"),
    _theirs("top_a", 0, "top-a sampling"),
    _theirs("smoothing_factor", 0, "quadratic sampling"),
    _noop("smoothing_curve", _N, is_num, "only read by `smoothing_factor`, which is refused "
          "unless 0", _ST),
    _theirs("skew", 0, "skew sampling"),
    _theirs("guidance_scale", 1, "classifier-free guidance"),
    _noop("negative_prompt", _N, is_str, "only read by `guidance_scale`, which is refused "
          "unless 1", _ST),
    _theirs("banned_strings", [], "phrases undone by backtracking (`bad_words` is this "
            "server's own, on /v1)"),
    _theirs("max_tokens_second", 0, "a stream paced to n tokens a second"),
    _theirs("rep_pen_slope", 1, "a repetition penalty sloped over its window"),
    _noop("api_type", _N, is_str, "SillyTavern's own connection setting, sent with every "
          "request: never a generation setting", _ST),
    _noop("api_server", _N, is_str, "SillyTavern's own connection setting (the server's URL), "
          "sent with every request", _ST),
    # -- llama.cpp's /infill (its other fields are /completion's)
    _h("input_prefix", _IN, "the text before the cursor (required): its last tokens, up to 3/4 "
       "of a 2,048-token batch, after the prefix token; special tokens' text read as text", _LC),
    _h("input_suffix", _IN, "the text after the cursor (required): its first tokens, up to a "
       "quarter of the batch less the prompt's, after the suffix token", _LC),
    _h("input_extra", _IN, "`[{\"filename\", \"text\"}]`: other files of the project, before "
       "the fill (each after a file-separator token and its name, where the model has one), "
       "their last tokens kept to what the batch and the output leave; llama.vim's `time` of "
       "a chunk is taken and read by none (a no-op)", _LC),
    _noop("t_max_prompt_ms", _N, is_num, "a time limit on the prompt: llama.cpp takes it and "
          "does nothing with it either (the prompt is computed whole)", _LC),
    _h("prompt", _IN, "text typed after the prefix (llama.vim's: the cursor's line up to the "
       "cursor), right after it; a string", _LC),
    # -- llama.cpp's /embedding
    _h("content", _EM, "the prompt forms of /completion's `prompt` (several: a vector each): "
       "the model's final hidden state at the prompt's last token (llama.cpp's `--pooling "
       "last`), each prompt at most the context", _LC),
    _h("input", _EM, "llama.cpp's alias of `content`", _LC),
    _h("embd_normalize", _EM, "-1: none; 0: scaled so the largest magnitude is 32,760 (int16's "
       "range); 1: taxicab; 2 (default): Euclidean (length 1); above 2: that p-norm", _LC),
    _h("model", _EM, "must name the served model (404 otherwise); may be left out (or `\"\"`)"),
)  # fmt: skip

# /v1/completions' fields llama.cpp's /completion reads alike (`fields.py` adds it to their
# rows): the sampling fields of both, and llama.cpp's own, but those this endpoint answers in
# its own way (`LLAMACPP_FIELDS`).
_SAMPLING = frozenset({
    "model", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "presence_penalty",
    "frequency_penalty", "ignore_eos", "n", "stream", "min_tokens", "skip_special_tokens",
})  # fmt: skip
_OWN = frozenset(s.name for s in LLAMACPP_FIELDS if LLAMACPP_COMPLETION in s.endpoints)


def shared_with_llamacpp(spec: FieldSpec) -> bool:
    return spec.name not in _OWN and (spec.name in _SAMPLING or spec.origin == _LC)


def shared_with_infill(spec: FieldSpec) -> bool:
    """/completion's rows /infill reads alike: all but its `prompt`."""
    return spec.name != "prompt"
