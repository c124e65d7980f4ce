"""The field table's rows of vLLM's score and rerank endpoints (`/score`, `/rerank` and their
other names; `fields.py` holds them with the others): each score is the cosine similarity of
two texts' embeddings, as vLLM's with an embedding model (`scores.py`)."""

from __future__ import annotations

from roseinfer.server.field_checks import FieldSpec, equals, is_bool, is_str
from roseinfer.server.field_checks import honoured_field as _h
from roseinfer.server.field_checks import noop_field as _noop
from roseinfer.server.field_checks import refused_field as _ref

SCORE, RERANK = "score", "rerank"
_S, _RR, _BOTH = (SCORE,), (RERANK,), (SCORE, RERANK)
_VL, _CO, _LC = "vLLM", "Cohere / Jina", "llama.cpp"
_SIDE = ("a string or a list of strings (at most 2,048 texts in a request, both sides), each "
         "embedded as `/v1/embeddings` embeds an input")  # fmt: skip

SCORES_FIELDS: tuple[FieldSpec, ...] = (
    _h("model", _BOTH, "must name the served model (404 otherwise); may be left out (or `\"\"`)", _VL),
    _h("text_1", _S, f"the first texts: {_SIDE}; one, scored against each of `text_2`'s, or as "
       "many as `text_2`'s, scored pair by pair (1:1, 1:N or N:N, as vLLM's)", _VL),
    _h("text_2", _S, "the second texts: one score each, in order (`data[i].score`: the cosine "
       "similarity of the two embeddings, -1 to 1)", _VL),
    _h("queries", _S, "vLLM's newer name of `text_1` (with `documents` or `items`)", _VL),
    _h("documents", _S, "vLLM's newer name of `text_2` (with `queries`)", _VL),
    _h("items", _S, "vLLM's other newer name of `text_2` (with `queries`)", _VL),
    _h("data_1", _S, "vLLM's other name of `text_1` (with `data_2`)", _VL),
    _h("data_2", _S, "vLLM's other name of `text_2` (with `data_1`)", _VL),
    _h("query", _RR, "the text every document is scored against", _VL),
    _h("documents", _RR, f"the documents: {_SIDE}; the results are sorted by score, highest "
       "first (`relevance_score`: the cosine similarity of the query's and the document's "
       "embeddings, -1 to 1), each with its `index` in this list", _VL),
    _h("texts", _RR, "TEI's name of `documents` (llama.cpp takes it too): the answer is then "
       "TEI's, a list of `{index, score}` (`text` too with `return_text`)", _LC),
    _h("top_n", _RR, "return the n best (0 or left out: all, as vLLM's)", _VL),
    _h("return_documents", _RR, "true (default, as vLLM's): each result holds `document: "
       "{text}`; false: index and score only", _CO),
    _h("return_text", _RR, "with `texts`: each result holds its `text` (default false)", _LC),
    _h("max_tokens_per_doc", _RR, "each document cut to its first n tokens (n >= 1), as "
       "Cohere's (not beside `truncate_prompt_tokens`)", _CO),
    _h("truncate_prompt_tokens", _BOTH, "keep k tokens of each text (-1: the context): its "
       "last ones, or its first with `truncation_side: \"right\"`", _VL),
    _h("truncation_side", _BOTH, "`left` (default: the first tokens are dropped) or `right`; "
       "without `truncate_prompt_tokens` a no-op (nothing is cut)", _VL),
    _h("request_id", _BOTH, "the response's `id` is `score-` / `rerank-` + this (not empty); "
       "without it, + the `X-Request-Id` header where sent", _VL),
    _noop("use_activation", _BOTH, is_bool, "whether the embeddings are normalized: a cosine "
          "similarity is the same either way", _VL),
    _noop("user", _BOTH, is_str, "an end-user id for the caller's own records", _VL),
    _noop("cache_salt", _BOTH, is_str, "isolates prefix-cache entries; cached or not, the "
          "score is the same", _VL),
    _ref("priority", _BOTH, equals(0), "0", "priority scheduling", _VL),
    _ref("mm_processor_kwargs", _BOTH, equals({}), "{}", "multimodal processing", _VL),
)  # fmt: skip
