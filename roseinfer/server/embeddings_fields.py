"""The field table's rows of /v1/embeddings (`fields.py` holds them with the others): its
`input` form, OpenAI's, and vLLM's chat form (`messages`, whose messages chat's rows check)."""

from __future__ import annotations

from roseinfer.server.field_checks import FieldSpec, equals, is_str, never
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref

EMBEDDINGS = "embeddings"
_E = (EMBEDDINGS,)
_VL = "vLLM"


EMBEDDINGS_FIELDS: tuple[FieldSpec, ...] = (
    _h("model", _E, "must name the served model (404 otherwise); may be left out (or `\"\"`)"),
    _h("input", _E, "a string, a list of strings, a token-id list or a list of those (at most "
       "2,048): one embedding each, in order: the model's final hidden state at the input's "
       "last token (vLLM's pooling of decoder-only models); each input at most the context "
       "(`context_length_exceeded`) unless `truncate_prompt_tokens`"),
    _h("messages", _E, "vLLM's chat form, instead of `input`: a conversation rendered with the "
       "model's chat template, each message as chat's `messages[]` (its fields and checks); "
       "one embedding, at the rendered prompt's last token", _VL),
    _h("add_generation_prompt", _E, "with `messages`: end the prompt with the assistant's turn "
       "opening (default false, as vLLM's embeddings)", _VL),
    _h("continue_final_message", _E, "with `messages`: leave the last message open (default "
       "false)", _VL),
    _h("chat_template_kwargs", _E, "with `messages`: extra variables for the chat template, as "
       "chat's", _VL),
    _h("encoding_format", _E, "`float` (default): a list of numbers; `base64`: the float32 "
       "values' bytes in base64 (what the openai SDK asks for, and decodes)"),
    _h("dimensions", _E, "the vectors' length: only the model's hidden size, another is a 400 "
       "(a model not trained for shorter vectors gives poor ones cut short: vLLM refuses too)"),
    _h("normalize", _E, "true (default): each vector scaled to length 1 (L2), as vLLM's; "
       "false: the hidden state as it is", _VL),
    _h("use_activation", _E, "vLLM's newer name of `normalize` (if both are given they must "
       "agree)", _VL),
    _h("endianness", _E, "the byte order of `base64`'s values: `native` (default; little-endian "
       "on the hosts this runs on), `little` or `big`; beside `float` a no-op (JSON numbers "
       "have no byte order)", _VL),
    _h("truncate_prompt_tokens", _E, "keep k tokens of each input (-1: the context): its last "
       "ones, or its first with `truncation_side: \"right\"`", _VL),
    _h("truncation_side", _E, "`left` (default: the first tokens are dropped) or `right` (the "
       "last ones are); without `truncate_prompt_tokens` a no-op (nothing is cut)", _VL),
    _h("request_id", _E, "the response's `id` is `embd-` + this (not empty); without it, + the "
       "`X-Request-Id` header where sent", _VL),
    _noop("user", _E, is_str, "an end-user id for the caller's own records"),
    _noop("cache_salt", _E, is_str, "isolates prefix-cache entries; cached or not, the vector "
          "is the same", _VL),
    _h("add_special_tokens", _E, "the tokenizer's special tokens (a BOS) before a text "
       "input, or the rendered `messages`; default, as vLLM's: true with `input`, false with "
       "`messages` (whose template writes its own)", _VL),
    _ref("chat_template", _E, never, "null", "a request's own chat template", _VL),
    _ref("media_io_kwargs", _E, equals({}), "{}", "multimodal inputs' loading", _VL),
    _ref("padding", _E, equals("do_not_pad"), "`do_not_pad`", "inputs padded to a length "
         "(the last token pooled would be a pad)", _VL),
    _ref("embed_dtype", _E, equals("float32"), "`float32`", "the values' type in base64", _VL),
    _ref("priority", _E, equals(0), "0", "priority scheduling", _VL),
    _ref("mm_processor_kwargs", _E, equals({}), "{}", "multimodal processing", _VL),
)  # fmt: skip
