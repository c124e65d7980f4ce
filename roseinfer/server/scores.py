"""vLLM's Score and Rerank APIs over the served model's embeddings (vLLM's bi-encoder scoring):
POST /score (and /v1/score) and POST /rerank (and /v1/rerank, Jina's; /v2/rerank, Cohere's
`ClientV2`; /reranking and /v1/reranking, llama.cpp's names).

Every text is embedded as `/v1/embeddings` embeds an input (one pooling request each, batched
with whatever runs, the model's final hidden state at its last token; a query scored against
many documents is embedded once), and a score is the cosine similarity of two embeddings, -1 to
1, as vLLM's with an embedding model. The model is one trained to continue text, not to rank:
the scores say how alike it reads two texts, a weak signal of relevance beside a model trained
for it (llama.cpp's `--reranking` needs such a model; this server has none to load).

/score pairs its two sides 1:1, 1:N (one first text against each second) or N:N, under any of
vLLM's names (`text_1`/`text_2`, `queries`/`documents` or `items`, `data_1`/`data_2`); /rerank
scores a `query` against `documents` and answers the results sorted, best first (Cohere's and
Jina's shape, with vLLM's `id` and `usage`); with TEI's `texts` instead (llama.cpp takes it too)
the answer is TEI's list of `{index, score}`. `usage.prompt_tokens` counts the tokens embedded.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import torch
import torch.nn.functional as F
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from roseinfer.pooling_params import PoolingParams
from roseinfer.server import protocol as P
from roseinfer.server.chat_prompt import prompt_lists
from roseinfer.server.context import ServingContext
from roseinfer.server.embeddings import MAX_INPUTS, pooled
from roseinfer.server.errors import APIError
from roseinfer.server.params import truncate_prompt
from roseinfer.server.request_io import given_request_id
from roseinfer.server.scores_fields import RERANK, SCORE

Texts = str | list[str]
# vLLM's names of the two sides, first with second
_PAIRS = (("text_1", "text_2"), ("queries", "documents"), ("queries", "items"),
          ("data_1", "data_2"))  # fmt: skip


class _Scored(P.RequestBase):
    """What both endpoints take beside their texts."""

    model: str | None = None
    truncate_prompt_tokens: int | None = None
    truncation_side: Literal["left", "right"] = "left"
    request_id: str | None = Field(default=None, min_length=1)


class ScoreRequest(_Scored):
    text_1: Texts | None = None
    text_2: Texts | None = None
    queries: Texts | None = None
    documents: Texts | None = None
    items: Texts | None = None
    data_1: Texts | None = None
    data_2: Texts | None = None

    def sides(self) -> tuple[tuple[str, list[str]], tuple[str, list[str]]]:
        """(name, texts) of the first side and of the second, as sent: one pair of names."""
        given = [name for name in type(self).model_fields if name in _SIDE_NAMES
                 and getattr(self, name) is not None]  # fmt: skip
        pairs = [pair for pair in _PAIRS if set(pair) == set(given)]
        if not pairs:
            # (one side alone: its partner is what is missing)
            param = given[-1] if len(given) > 1 else "text_1"
            if len(given) == 1:
                param = next(b if a == given[0] else a for a, b in _PAIRS if given[0] in (a, b))
            raise APIError(400, "give one pair of texts: text_1 and text_2 (or vLLM's queries and "
                                f"documents, queries and items, data_1 and data_2), got "
                                f"{', '.join(given) or 'none'}", param=param)  # fmt: skip
        first, second = pairs[0]
        return _side(first, getattr(self, first)), _side(second, getattr(self, second))


_SIDE_NAMES = {name for pair in _PAIRS for name in pair}


class RerankRequest(_Scored):
    query: str
    documents: Texts | None = None
    texts: list[str] | None = None  # TEI's name (llama.cpp's too): TEI's answer
    top_n: int | None = None
    return_documents: bool = True
    return_text: bool = False
    max_tokens_per_doc: int | None = None

    def documents_given(self) -> tuple[str, list[str]]:
        if (self.documents is None) == (self.texts is None):
            raise APIError(400, "give documents (or TEI's texts), one of the two",
                           param="documents")  # fmt: skip
        if self.texts is not None:
            if "return_documents" in self.model_fields_set:
                raise APIError(400, "return_documents acts on documents; with texts (TEI's "
                                    "form) give return_text", param="return_documents")  # fmt: skip
            return _side("texts", self.texts)
        if self.return_text:
            raise APIError(400, "return_text acts on texts (TEI's form); with documents give "
                                "return_documents", param="return_text")  # fmt: skip
        assert self.documents is not None
        return _side("documents", self.documents)


def _side(name: str, texts: Texts) -> tuple[str, list[str]]:
    texts = [texts] if isinstance(texts, str) else texts
    if not texts:
        raise APIError(400, f"{name} must not be empty", param=name)
    return name, texts


async def _embedded(ctx: ServingContext, request: Request, body: _Scored, request_id: str,
                    sides: list[tuple[str, list[str]]],
                    cut: int | None = None) -> tuple[list[torch.Tensor], int] | None:  # fmt: skip
    """Each side's embeddings ([texts, hidden], L2-normalized) and the tokens embedded; None
    where the client leaves first. `cut`: the last side's texts cut to their first `cut`
    tokens (Cohere's max_tokens_per_doc)."""
    engine = ctx.client.engine
    # what refuses the request cheaply, before any text is tokenized
    num_texts = sum(len(texts) for _, texts in sides)
    if num_texts > MAX_INPUTS:
        raise APIError(400, f"{num_texts} texts in all: at most {MAX_INPUTS} in one request",
                       param=sides[-1][0])  # fmt: skip
    if body.truncate_prompt_tokens is not None:
        if cut is not None:  # (both cut a document: which first would be a guess)
            raise APIError(400, "give max_tokens_per_doc or truncate_prompt_tokens, not both",
                           param="truncate_prompt_tokens")  # fmt: skip
        truncate_prompt([0], body.truncate_prompt_tokens, engine.max_model_len)  # (its check)
    ctx.check_capacity(num_texts)
    prompts: list[list[int]] = []
    fields: list[str] = []
    for k, (name, texts) in enumerate(sides):
        for ids in await asyncio.to_thread(prompt_lists, engine.tokenizer, texts, name):
            if cut is not None and k == len(sides) - 1:
                ids = ids[:cut]
            prompts.append(truncate_prompt(ids, body.truncate_prompt_tokens, engine.max_model_len,
                                           body.truncation_side))  # fmt: skip
            fields.append(name)
    vectors = await pooled(ctx, request, request_id, prompts, PoolingParams(normalize=True), fields)
    if vectors is None:
        return None
    out, start = [], 0
    for _, texts in sides:
        out.append(torch.stack(vectors[start : start + len(texts)]))
        start += len(texts)
    return out, sum(len(ids) for ids in prompts)


def cosine(first: torch.Tensor, second: torch.Tensor) -> list[float]:
    """The cosine similarity of each row of `second` ([n, hidden]) with the one row of `first`
    ([1, hidden]) or with its own row ([n, hidden])."""
    return F.cosine_similarity(first.float(), second.float(), dim=-1).tolist()


def _usage(tokens: int) -> dict:
    return {"prompt_tokens": tokens, "total_tokens": tokens, "completion_tokens": 0}


def add_score_routes(router: APIRouter, ctx: ServingContext) -> None:
    """Add the score and rerank endpoints to `router` (the app's API-key-protected one)."""

    def ids(request: Request, body: _Scored, prefix: str) -> tuple[str, str]:
        """(the engine's id, the response's): ours, and the client's where it gave one."""
        internal_id = P.new_id(prefix)
        given = given_request_id(request, body.request_id)
        return internal_id, internal_id if given is None else f"{prefix}-{given}"

    @router.post("/score")
    @router.post("/v1/score", include_in_schema=False)  # vLLM's older name of it
    async def score(request: Request) -> Response:
        body = await ctx.parse(request, ScoreRequest, SCORE)
        ctx.check_model(body.model)
        (first_name, first), (second_name, second) = body.sides()
        if len(first) > 1 and len(first) != len(second):
            raise APIError(400, f"{first_name} holds {len(first)} texts and {second_name} "
                                f"{len(second)}: give one {first_name} text, or as many as "
                                f"{second_name} (1:1, 1:N or N:N)", param=second_name)  # fmt: skip
        internal_id, response_id = ids(request, body, "score")
        sides = [(first_name, first), (second_name, second)]
        embedded = await _embedded(ctx, request, body, internal_id, sides)
        if embedded is None:
            return Response(status_code=499)  # the client is gone: nobody reads this
        (a, b), tokens = embedded
        data = [{"index": i, "object": "score", "score": s} for i, s in enumerate(cosine(a, b))]
        return JSONResponse({"id": response_id, "object": "list", "created": P.now(),
                             "model": ctx.model_name, "data": data, "usage": _usage(tokens)})  # fmt: skip

    @router.post("/rerank")
    @router.post("/v1/rerank", include_in_schema=False)  # Jina's path
    @router.post("/v2/rerank", include_in_schema=False)  # Cohere's ClientV2
    @router.post("/reranking", include_in_schema=False)  # llama.cpp's names
    @router.post("/v1/reranking", include_in_schema=False)
    async def rerank(request: Request) -> Response:
        body = await ctx.parse(request, RerankRequest, RERANK)
        ctx.check_model(body.model)
        name, documents = body.documents_given()
        if body.top_n is not None and body.top_n < 0:
            raise APIError(400, f"top_n must be >= 0 (0: all), got {body.top_n}", param="top_n")
        if body.max_tokens_per_doc is not None and body.max_tokens_per_doc < 1:
            raise APIError(400, f"max_tokens_per_doc must be >= 1, got {body.max_tokens_per_doc}",
                           param="max_tokens_per_doc")  # fmt: skip
        internal_id, response_id = ids(request, body, "rerank")
        sides = [("query", [body.query]), (name, documents)]
        embedded = await _embedded(ctx, request, body, internal_id, sides, body.max_tokens_per_doc)
        if embedded is None:
            return Response(status_code=499)
        (query, docs), tokens = embedded
        scores = cosine(query, docs)
        order = sorted(range(len(documents)), key=lambda i: -scores[i])  # (stable: ties in order)
        order = order[: body.top_n or None]
        if body.texts is not None:  # TEI's answer
            return JSONResponse([{"index": i, "score": scores[i],
                                  **({"text": documents[i]} if body.return_text else {})}
                                 for i in order])  # fmt: skip
        results = [{"index": i, "relevance_score": scores[i],
                    **({"document": {"text": documents[i]}} if body.return_documents else {})}
                   for i in order]  # fmt: skip
        return JSONResponse({"id": response_id, "object": "list", "model": ctx.model_name,
                             "usage": _usage(tokens), "results": results})  # fmt: skip
