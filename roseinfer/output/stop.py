"""Stop strings over streamed text: emit what is safe now, hold back what might become a stop.

A stop string can arrive split over several detokenized pieces ("<|" then "end|>"), so text
that ends with a prefix of some stop string is held back until the next piece decides it. Once
a stop string appears, the text before it is released and everything from it on is dropped:
the stop string itself never reaches the output, not even partially while streaming. Asked to
keep it (vLLM's `include_stop_str_in_output`), the text goes out as it comes (nothing needs
holding back) up to the end of the stop string.

    checker = StopStringChecker(["\\n\\n", "END"])
    for piece in pieces:
        emitted, matched = checker.feed(piece)
        send(emitted)
        if matched:
            break  # abort the request with finish_reason "stop"
    else:
        send(checker.flush())  # generation ended on its own: release the held-back tail

Used by `OutputProcessor` (roseinfer/output/processor.py), the one place every front door reads.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Iterable

__all__ = ["StopStringChecker"]


class StopStringChecker:
    """Per-request stop-string state. Each stop string is followed as the text arrives (the
    longest prefix of it the text ends with, Knuth-Morris-Pratt), so the text costs
    O(its length x the number of stop strings) in all (amortized: a piece may step back over
    what the ones before it matched), whatever their lengths or the text held back (a search of
    the held text for every possible prefix had cost a 30,000-character stop string cubic time
    in the output, on the event loop)."""

    def __init__(self, stop: str | Iterable[str] = (), include: bool = False) -> None:
        """`include`: the stop string that matched ends the text, in it."""
        stops = (stop,) if isinstance(stop, str) else tuple(stop)
        self.include = include
        self.stop: tuple[str, ...] = tuple(
            dict.fromkeys(s for s in stops if s)
        )  # dedup, keep order
        self._fallback = [_fallback_table(s) for s in self.stop]
        self._matched_len = [0] * len(self.stop)  # each one's longest prefix the text ends with
        self._held = ""  # text not emitted yet: a suffix that could start a stop string
        self.matched: str | None = None  # the stop string that ended the text, once seen

    @property
    def held(self) -> str:
        """Text received but not emitted yet."""
        return self._held

    def feed(self, text: str, can_match: bool = True) -> tuple[str, bool]:
        """Add a piece of text: (text safe to emit now, whether a stop string matched).
        `can_match=False` (before `min_tokens`, as vLLM): no stop string ends in this piece,
        though one may still begin in it and end in a later piece.

        After a match every later call returns ("", True).
        """
        if self.matched is not None:
            return "", True
        if not self.stop:
            return text, False
        buf = self._held + text
        # (where in buf it starts, where it ends, stop string) of the earliest
        first: tuple[int, int, str] | None = None
        for i, stop in enumerate(self.stop):
            end = self._advance(i, text)
            if end is None:
                continue
            at = len(self._held) + end - len(stop)
            if can_match and (
                first is None or at < first[0] or (at == first[0] and len(stop) > len(first[2]))
            ):
                first = (at, len(self._held) + end, stop)
        if first is not None:
            self.matched = first[2]
            self._held = ""
            return buf[: first[1] if self.include else first[0]], True
        keep = 0 if self.include else max(self._matched_len)
        self._held = buf[len(buf) - keep :] if keep else ""
        return buf[: len(buf) - keep], False

    def flush(self) -> str:
        """The held-back text, once no more text will come (nothing after a match)."""
        held, self._held = self._held, ""
        return "" if self.matched is not None else held

    def _advance(self, i: int, text: str) -> int | None:
        """Follow stop string i through `text`: where in `text` it first ends (past its last
        character), or None. After an end the prefix goes on as if it had not matched (a
        match before min_tokens does not count: vLLM's rule)."""
        stop, fallback, n = self.stop[i], self._fallback[i], self._matched_len[i]
        if n == 0 and stop[0] not in text:  # the usual piece: nothing of it starts here
            return None
        end = None
        for j, char in enumerate(text):
            while n and stop[n] != char:
                n = fallback[n - 1]
            if stop[n] == char:
                n += 1
            if n == len(stop):
                if end is None:
                    end = j + 1
                n = fallback[n - 1]
        self._matched_len[i] = n
        return end


@functools.lru_cache(maxsize=256)
def _fallback_table(stop: str) -> array:
    """Entry k: the longest proper prefix of stop[: k + 1] that is also its suffix (the prefix
    function). Cached: a request's n choices, and requests with the same stop, share it."""
    table = array("i", bytes(4 * len(stop)))
    n = 0
    for k in range(1, len(stop)):
        while n and stop[k] != stop[n]:
            n = table[n - 1]
        if stop[k] == stop[n]:
            n += 1
        table[k] = n
    return table
