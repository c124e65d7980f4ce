"""Logprobs in the OpenAI response shapes, from the output processor's `PositionLogprobs`.

- /v1/completions (legacy): `{"tokens", "token_logprobs", "top_logprobs", "text_offset"}`,
  one entry per token; `top_logprobs` maps token text to logprob for the top N plus the token
  itself (OpenAI: up to N + 1 entries). With `echo` the prompt's tokens come first, the first
  one with null logprobs (it has no context). A token holding part of a character (an emoji
  as three byte tokens) is named by its bytes, `"bytes:\\xf0\\x9f"`, as OpenAI's legacy API
  names it (its text alone would be U+FFFD, the same for every such token). `text_offset` is
  where each token's text starts in the choice's `text`: the characters the tokens before it
  complete (a character's byte tokens all start where it does), a special token, which the
  text skips, counting its own text there, as it is in `tokens` (vLLM's rule).
- /v1/chat/completions: `{"content": [{"token", "logprob", "bytes", "top_logprobs"}],
  "refusal": null}`, `top_logprobs` the N likeliest (the token itself is in them only if it is
  one of the N).
- vLLM's `prompt_logprobs`: per prompt token null or `{token id: {"logprob", "rank",
  "decoded_token"}}`.

With vLLM's `return_tokens_as_token_ids` (`as_ids`) the completions' and chat's tokens are named
`token_id:N` instead (chat's `bytes` stay the token's own).
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass

from roseinfer.outputs import PositionLogprobs
from roseinfer.tokenizer import Tokenizer


@dataclass(frozen=True)
class TextPosition:
    """Where the next token's text starts in a completion's `text`: the characters before it,
    and the bytes of a character not yet complete (a stream's chunk may end inside one)."""

    chars: int = 0
    pending: bytes = b""


@dataclass(frozen=True)
class CompletionLogprobs:
    json: dict  # the legacy shape
    end: TextPosition  # where a next chunk's tokens start


def completion_logprobs(
    token_ids: Sequence[int],
    positions: Sequence[PositionLogprobs | None],
    num_top: int,
    tokenizer: Tokenizer,
    start: TextPosition = TextPosition(),
    as_ids: bool = False,
    listed: bool = False,
) -> CompletionLogprobs:
    """The legacy shape for `token_ids` (their `positions`, aligned), text offsets from
    `start`; `listed`: the positions hold the tokens the request listed (`_top_items`)."""
    tokens: list[str] = []
    values: list[float | None] = []
    tops: list[dict[str, float] | None] = []
    offsets: list[int] = []
    chars = start.chars
    decoder = codecs.getincrementaldecoder("utf-8")("replace")  # as the text decodes its bytes
    decoder.setstate((start.pending, 0))
    for token_id, position in zip(token_ids, positions, strict=True):
        name = token_name(tokenizer, token_id, as_ids)
        tokens.append(name)
        offsets.append(chars)
        chars += len(decoder.decode(tokenizer.token_bytes(token_id)))
        if position is None:
            values.append(None)
            tops.append(None)
            continue
        values.append(position[token_id].logprob)
        top = {token_name(tokenizer, t, as_ids): p.logprob
               for t, p in _top_items(position, num_top, listed)}  # fmt: skip
        top.setdefault(name, position[token_id].logprob)
        tops.append(top)
    lp = {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops,
          "text_offset": offsets}  # fmt: skip
    return CompletionLogprobs(lp, TextPosition(chars, decoder.getstate()[0]))


def token_name(tokenizer: Tokenizer, token_id: int, as_id: bool = False) -> str:
    """A token's text, or `bytes:\\xNN...` where it holds part of a character (OpenAI's
    legacy name for such a token); `as_id`: `token_id:N`."""
    if as_id:
        return f"token_id:{token_id}"
    text = tokenizer.token_text(token_id)
    if "\ufffd" not in text:
        return text
    raw = tokenizer.token_bytes(token_id)
    try:
        return raw.decode("utf-8")  # U+FFFD itself, or a whole character
    except UnicodeDecodeError:
        return "bytes:" + "".join(f"\\x{b:02x}" for b in raw)


def chat_logprobs(
    token_ids: Sequence[int],
    positions: Sequence[PositionLogprobs],
    num_top: int,
    tokenizer: Tokenizer,
    as_ids: bool = False,
    listed: bool = False,
) -> dict:
    def name(t: int) -> str:
        return f"token_id:{t}" if as_ids else tokenizer.token_text(t)

    content = []
    for token_id, position in zip(token_ids, positions, strict=True):
        content.append({
            "token": name(token_id),
            "logprob": position[token_id].logprob,
            "bytes": list(tokenizer.token_bytes(token_id)),
            "top_logprobs": [
                {"token": name(t) if as_ids else p.decoded_token, "logprob": p.logprob,
                 "bytes": list(tokenizer.token_bytes(t))}
                for t, p in _top_items(position, num_top, listed)
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


def _top_items(position: PositionLogprobs, n: int, listed: bool = False) -> list:
    """(token id, Logprob) of the position's n likeliest, likeliest first; `listed`: every
    entry in its order, the position's token, then those `logprob_token_ids` listed (vLLM's)."""
    if listed:
        return list(position.items())
    ranked = sorted(position.items(), key=lambda item: item[1].rank)
    return [item for item in ranked if item[1].rank <= n][:n]
