"""`bad_words` (vLLM's): the tokens that would complete one of a sequence's bad words now, each
word indexed once by the length of its head (all but its last token)."""

from __future__ import annotations

import functools

import torch

from roseinfer.layers.penalties import History

__all__ = ["bad_word_ends", "completing_tokens"]


@functools.lru_cache(maxsize=64)
def bad_word_ends(
    bad_words: tuple[tuple[int, ...], ...], device: torch.device
) -> dict[int, dict[tuple[int, ...], torch.Tensor]]:
    """Bad words by the length of their head (all but the last token): head -> last tokens.
    Cached: a request's n choices share one list (the engine's BadWords hands out one tuple)."""
    ends: dict[int, dict[tuple[int, ...], list[int]]] = {}
    for word in bad_words:
        ends.setdefault(len(word) - 1, {}).setdefault(word[:-1], []).append(word[-1])
    return {
        head: {k: torch.tensor(v, dtype=torch.long, device=device) for k, v in by_head.items()}
        for head, by_head in ends.items()
    }


def completing_tokens(
    seq: History, ends: dict[int, dict[tuple[int, ...], torch.Tensor]]
) -> list[torch.Tensor]:
    """The tokens that would complete one of `seq`'s bad words now, as tensors of words' last
    tokens: where the generated tokens end with the rest of the word (a one-token word:
    always). One lookup per length of the words' heads, not one per word."""
    num_output = len(seq.token_ids) - seq.num_prompt_tokens
    banned: list[torch.Tensor] = []
    for head, by_head in ends.items():
        if head <= num_output:
            tail = tuple(seq.token_ids[len(seq.token_ids) - head :]) if head else ()
            if (tokens := by_head.get(tail)) is not None:
                banned.append(tokens)
    return banned
