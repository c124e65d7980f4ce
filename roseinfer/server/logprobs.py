"""Logprobs in the OpenAI response shapes, from the output processor's `PositionLogprobs`.

- /v1/completions (legacy): `{"tokens", "token_logprobs", "top_logprobs", "text_offset"}`,
  one entry per token; `top_logprobs` maps token text to logprob for the top N plus the token
  itself (OpenAI: up to N + 1 entries). With `echo` the prompt's tokens come first, the first
  one with null logprobs (it has no context). `text_offset` is where each token's text starts
  in the choice's `text`, counted as the sum of the preceding tokens' texts (vLLM's rule: a
  special token, which the text skips, still counts its own text there, as it is in `tokens`).
- /v1/chat/completions: `{"content": [{"token", "logprob", "bytes", "top_logprobs"}],
  "refusal": null}`, `top_logprobs` the N likeliest (the token itself is in them only if it is
  one of the N).
- vLLM's `prompt_logprobs`: per prompt token null or `{token id: {"logprob", "rank",
  "decoded_token"}}`.
"""

from __future__ import annotations

from collections.abc import Sequence

from roseinfer.outputs import PositionLogprobs
from roseinfer.tokenizer import Tokenizer


def completion_logprobs(
    token_ids: Sequence[int],
    positions: Sequence[PositionLogprobs | None],
    num_top: int,
    tokenizer: Tokenizer,
    offset: int = 0,
) -> dict:
    """The legacy shape for `token_ids` (their `positions`, aligned), text offsets from
    `offset`."""
    tokens: list[str] = []
    values: list[float | None] = []
    tops: list[dict[str, float] | None] = []
    offsets: list[int] = []
    for token_id, position in zip(token_ids, positions, strict=True):
        text = tokenizer.token_text(token_id)
        tokens.append(text)
        offsets.append(offset)
        offset += len(text)
        if position is None:
            values.append(None)
            tops.append(None)
            continue
        values.append(position[token_id].logprob)
        top = {p.decoded_token: p.logprob for p in _top(position, num_top)}
        top.setdefault(text, position[token_id].logprob)
        tops.append(top)
    return {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops,
            "text_offset": offsets}  # fmt: skip


def end_offset(logprobs: dict) -> int:
    """The text offset after the tokens of a `completion_logprobs` result (the next chunk's)."""
    if not logprobs["tokens"]:
        return 0
    return logprobs["text_offset"][-1] + len(logprobs["tokens"][-1])


def chat_logprobs(
    token_ids: Sequence[int],
    positions: Sequence[PositionLogprobs],
    num_top: int,
    tokenizer: Tokenizer,
) -> dict:
    content = []
    for token_id, position in zip(token_ids, positions, strict=True):
        content.append({
            "token": tokenizer.token_text(token_id),
            "logprob": position[token_id].logprob,
            "bytes": list(tokenizer.token_bytes(token_id)),
            "top_logprobs": [
                {"token": p.decoded_token, "logprob": p.logprob,
                 "bytes": list(tokenizer.token_bytes(t))}
                for t, p in _top_items(position, num_top)
            ],
        })  # fmt: skip
    return {"content": content, "refusal": None}


def prompt_logprobs_json(
    token_ids: Sequence[int], positions: Sequence[PositionLogprobs | None], num_top: int
) -> list[dict | None]:
    """Per prompt token, null or {token id: {logprob, rank, decoded_token}} of the token and
    the `num_top` likeliest. The engine may hold more (echo's `logprobs` asks for its own N of
    the same positions)."""
    if not positions:  # none were taken (a request that failed before its prefill)
        return []
    return [
        None
        if position is None
        else {
            str(t): {"logprob": p.logprob, "rank": p.rank, "decoded_token": p.decoded_token}
            for t, p in position.items()
            if t == token_id or p.rank <= num_top
        }
        for token_id, position in zip(token_ids, positions, strict=True)
    ]


def _top_items(position: PositionLogprobs, n: int) -> list:
    """(token id, Logprob) of the position's n likeliest, likeliest first."""
    ranked = sorted(position.items(), key=lambda item: item[1].rank)
    return [item for item in ranked if item[1].rank <= n][:n]


def _top(position: PositionLogprobs, n: int) -> list:
    return [p for _, p in _top_items(position, n)]
