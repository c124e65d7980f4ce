"""The field table's rows of llama.cpp's native POST /completion that /v1/completions does not
share, and of its /embedding; `fields.py` adds the fields /completion and /v1/completions read
alike (the sampling fields llama.cpp's server takes, and each of its own: `n_predict`,
`repeat_penalty`, `grammar`, its refused samplers, its no-ops) to /completion, and
`llamacpp.py` turns a checked body into a completions request."""

from __future__ import annotations

from roseinfer.server.field_checks import FieldSpec, equals, is_int, is_num
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref

LLAMACPP_COMPLETION = "llamacpp_completion"
LLAMACPP_EMBEDDING = "llamacpp_embedding"
LLAMACPP_INFILL = "llamacpp_infill"  # /infill: /completion's rows but `prompt`, and its own
_N, _EM, _IN = (LLAMACPP_COMPLETION,), (LLAMACPP_EMBEDDING,), (LLAMACPP_INFILL,)
_LC = "llama.cpp"

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
    _h("model", _EM, "must name the served model (404 otherwise); may be left out"),
)  # fmt: skip

# /v1/completions' fields llama.cpp's /completion reads alike (`fields.py` adds it to their
# rows): the sampling fields of both, and llama.cpp's own, but those this endpoint answers in
# its own way (`LLAMACPP_FIELDS`).
_SAMPLING = frozenset({
    "model", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "presence_penalty",
    "frequency_penalty", "ignore_eos", "n", "stream",
})  # fmt: skip
_OWN = frozenset(s.name for s in LLAMACPP_FIELDS if LLAMACPP_COMPLETION in s.endpoints)


def shared_with_llamacpp(spec: FieldSpec) -> bool:
    return spec.name not in _OWN and (spec.name in _SAMPLING or spec.origin == _LC)


def shared_with_infill(spec: FieldSpec) -> bool:
    """/completion's rows /infill reads alike: all but its `prompt`."""
    return spec.name != "prompt"
