"""How an embedding request turns its prompt into one vector (vLLM's `PoolingParams`)."""

from __future__ import annotations

from dataclasses import dataclass

from roseinfer.checks import check_bools


@dataclass(frozen=True)
class PoolingParams:
    """An embedding request (`LLM.embed`, /v1/embeddings): the model's final hidden state
    (after its last norm) at the prompt's last token, as vLLM pools decoder-only models for
    embeddings (`LAST`), L2-normalized unless `normalize` is False. A causal model's last token
    is the only one that has read the whole prompt: a mean would weigh the early tokens, which
    saw little of it, as much."""

    normalize: bool = True

    def __post_init__(self) -> None:
        check_bools(normalize=self.normalize)
