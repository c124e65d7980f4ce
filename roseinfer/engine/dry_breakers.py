"""A request's DRY sequence breakers as token ids (`layers/dry.py`'s `DryBreakers`), each
distinct list worked out once.

As llama.cpp's `get_overlapping_token_sequences` (from koboldcpp): over the vocabulary, each
token's text (special tokens' included) is a breaker's head where it holds the breaker (an empty
tail), or where it ends with the breaker's first bytes: the rest of the breaker, tokenized, is
its tail (at most 20 tokens). The first request with a new list reads the whole vocabulary
(SmolLM2's 49,152 tokens: ~0.1 s a breaker once the token texts are known, the texts ~1 s once
per server); a server does it on a worker thread while it validates the request, as it
tokenizes bad words."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from collections.abc import Sequence as Seq

from roseinfer.layers.dry import DryBreakers
from roseinfer.tokenizer import Tokenizer

MAX_TAIL_TOKENS = 20  # llama.cpp's MAX_SEQ_LEN


def breaker_heads(
    texts: Seq[bytes], breaker: bytes, encode: Callable[[str], list[int]]
) -> dict[int, set[tuple[int, ...]]]:
    """{head token: its tails} of one breaker over the token texts `texts` (by id); `encode`:
    text -> token ids, no special tokens added or parsed."""
    heads: dict[int, set[tuple[int, ...]]] = {}
    first = breaker[:1]
    for token, text in enumerate(texts):
        if breaker in text:
            heads.setdefault(token, set()).add(())
            continue
        pos = text.find(first)
        while pos != -1:
            overlap = len(text) - pos  # the text's last bytes, the breaker's first ones
            if breaker.startswith(text[pos:]):
                rest = breaker[overlap:].decode("utf-8", "replace")
                tail = tuple(encode(rest))[:MAX_TAIL_TOKENS]
                heads.setdefault(token, set()).add(tail)
            pos = text.find(first, pos + 1)
    return heads


class DryBreakerTable:
    """`DryBreakers` of one tokenizer, the latest CACHE_SIZE lists kept (any thread; as
    `BadWords`, past that many lists in flight at once a list's request reads the vocabulary
    again on the engine loop)."""

    CACHE_SIZE = 64

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self._lock = threading.Lock()
        self._texts: list[bytes] | None = None
        self._of = functools.lru_cache(self.CACHE_SIZE)(self._breakers)

    def texts(self) -> list[bytes]:
        """Every token's text as bytes, special tokens' included (llama.cpp's detokenize with
        `special`), made once."""
        with self._lock:
            if self._texts is None:
                tok = self.tokenizer
                self._texts = [tok.token_bytes(i) for i in range(tok.vocab_size)]
            return self._texts

    def of(self, breakers: Seq[str]) -> DryBreakers:
        return self._of(tuple(breakers))

    def _breakers(self, breakers: tuple[str, ...]) -> DryBreakers:
        texts = self.texts()
        tok = self.tokenizer

        def encode(text: str) -> list[int]:
            # (llama.cpp's tokenize without `parse_special`: a special token's text is text)
            return tok.encode(text, add_special_tokens=False, split_special_tokens=True)

        tails: dict[int, set[tuple[int, ...]]] = {}
        for breaker in breakers:
            for head, found in breaker_heads(texts, breaker.encode("utf-8"), encode).items():
                tails.setdefault(head, set()).update(found)
        return DryBreakers({h: tuple(sorted(t)) for h, t in tails.items()})
