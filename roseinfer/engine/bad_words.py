"""A request's `bad_words` as token ids, each distinct list tokenized once.

Tokenizing is per word and in Python: 10,000 words take ~0.3 s. A server does it on a worker
thread while it validates the request (as it compiles a grammar), so the engine loop, which
every running request waits on, only looks the list up here."""

from __future__ import annotations

import functools
from collections.abc import Sequence as Seq

from roseinfer.tokenizer import Tokenizer

BadWordIds = tuple[tuple[int, ...], ...]


def bad_words_token_ids(tokenizer: Tokenizer, words: Seq[str]) -> BadWordIds:
    """The tokenizations of banned words: each word (leading spaces stripped) as it encodes at
    the start of text and after a space (vLLM's two; vLLM drops the second when its length
    differs, which lets " unbelievable" through where it is [" un", "believable"])."""
    out: list[tuple[int, ...]] = []
    for word in words:
        plain = tuple(tokenizer.encode(word.lstrip(), add_special_tokens=False))
        if plain:
            out.append(plain)
        spaced = tuple(tokenizer.encode(" " + word.lstrip(), add_special_tokens=False))
        if spaced:
            out.append(spaced)
    return tuple(dict.fromkeys(out))


class BadWords:
    """`bad_words_token_ids` of one tokenizer, the latest CACHE_SIZE lists kept (any thread)."""

    CACHE_SIZE = 64

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        # A lambda, not a bound partial: the module's function is looked up at each miss.
        self._token_ids = functools.lru_cache(self.CACHE_SIZE)(
            lambda words: bad_words_token_ids(tokenizer, words)
        )

    def token_ids(self, words: Seq[str]) -> BadWordIds:
        return self._token_ids(tuple(words)) if words else ()
