"""The field table's rows of /v1/embeddings (`fields.py` holds them with the others)."""

from __future__ import annotations

from roseinfer.server.field_checks import FieldSpec, equals, is_str
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref

EMBEDDINGS = "embeddings"
_E = (EMBEDDINGS,)
_VL = "vLLM"

EMBEDDINGS_FIELDS: tuple[FieldSpec, ...] = (
    _h("model", _E, "must name the served model (404 otherwise); may be left out"),
    _h("input", _E, "a string, a list of strings, a token-id list or a list of those (at most "
       "2,048): one embedding each, in order: the model's final hidden state at the input's "
       "last token (vLLM's pooling of decoder-only models); each input at most the context "
       "(`context_length_exceeded`) unless `truncate_prompt_tokens`"),
    _h("encoding_format", _E, "`float` (default): a list of numbers; `base64`: the float32 "
       "values' bytes in base64 (what the openai SDK asks for, and decodes)"),
    _h("dimensions", _E, "the vectors' length: only the model's hidden size, another is a 400 "
       "(a model not trained for shorter vectors gives poor ones cut short: vLLM refuses too)"),
    _h("normalize", _E, "true (default): each vector scaled to length 1 (L2), as vLLM's; "
       "false: the hidden state as it is", _VL),
    _h("use_activation", _E, "vLLM's newer name of `normalize` (if both are given they must "
       "agree)", _VL),
    _h("endianness", _E, "the byte order of `base64`'s values: `native` (default; little-endian "
       "on the hosts this runs on), `little` or `big`", _VL),
    _h("truncate_prompt_tokens", _E, "keep each input's last k tokens (-1: the context)", _VL),
    _h("request_id", _E, "the response's `id` is `embd-` + this (not empty); without it, + the "
       "`X-Request-Id` header where sent", _VL),
    _noop("user", _E, is_str, "an end-user id for the caller's own records"),
    _noop("cache_salt", _E, is_str, "isolates prefix-cache entries; cached or not, the vector "
          "is the same", _VL),
    _ref("add_special_tokens", _E, equals(True), "true", "the tokenizer's special tokens "
         "(BOS) are added to text inputs, as vLLM's default", _VL),
    _ref("truncation_side", _E, equals("left"), '"left" (what `truncate_prompt_tokens` does: '
         "the last tokens kept)", "the input's first tokens kept", _VL),
    _ref("embed_dtype", _E, equals("float32"), "`float32`", "the values' type in base64", _VL),
    _ref("priority", _E, equals(0), "0", "priority scheduling", _VL),
    _ref("mm_processor_kwargs", _E, equals({}), "{}", "multimodal processing", _VL),
)  # fmt: skip
