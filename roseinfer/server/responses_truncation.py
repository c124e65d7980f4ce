"""`truncation: "auto"` of /v1/responses: a conversation grown past the context cut to fit
(`fit_conversation`), as OpenAI's drops the oldest items."""

from __future__ import annotations

from collections.abc import Callable

from roseinfer.chat import ChatMessage
from roseinfer.server.errors import APIError


def fit_conversation(
    messages: list[ChatMessage], render: Callable[[list[ChatMessage]], list[int]], limit: int
) -> tuple[list[ChatMessage], list[int]]:
    """`truncation: "auto"`: the messages, the oldest after the leading system ones dropped
    until `render`'s prompt is at most `limit` tokens, and that prompt. What is kept starts at
    a user message (a call keeps its results; templates that want turns to alternate get a
    conversation that does), and the newest user message always stays: where even that does
    not fit, all of it (the context check then says so). Past the whole conversation, the
    search grows what is kept from the newest message (1, 2, 4, ... turns) and then bisects:
    its renders are bounded by the context, not by how long a stored chain has grown."""
    ids = render(messages)
    if len(ids) <= limit:
        return messages, ids
    head = next((i for i, m in enumerate(messages) if m.role not in ("system", "developer")),
                len(messages))  # fmt: skip
    starts = [j for j in range(len(messages) - 1, head - 1, -1) if messages[j].role == "user"]
    if not starts:
        return messages, ids

    def kept(k: int) -> tuple[list[ChatMessage], list[int]] | None:
        """The conversation from the k-th newest user message on, if it fits."""
        trimmed = messages[:head] + messages[starts[k] :]
        try:
            trimmed_ids = render(trimmed)
        except APIError:  # a template that refuses this cut: it does not fit either
            return None
        return (trimmed, trimmed_ids) if len(trimmed_ids) <= limit else None

    best = kept(0)
    if best is None:
        return messages, ids
    lo, hi = 0, 1  # kept(lo) fits; find the first k that does not
    while hi < len(starts) and (found := kept(hi)) is not None:
        best, lo, hi = found, hi, hi * 2
    hi = min(hi, len(starts))
    while hi - lo > 1:  # kept(lo) fits, kept(hi) does not (or is past the oldest)
        mid = (lo + hi) // 2
        if (found := kept(mid)) is not None:
            best, lo = found, mid
        else:
            hi = mid
    return best
