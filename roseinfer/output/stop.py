"""Stop strings over streamed text: emit what is safe now, hold back what might become a stop.

A stop string can arrive split over several detokenized pieces ("<|" then "end|>"), so text
that ends with a prefix of some stop string is held back until the next piece decides it. Once
a stop string appears, the text before it is released and everything from it on is dropped:
the stop string itself never reaches the output, not even partially while streaming.

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

from collections.abc import Iterable

__all__ = ["StopStringChecker"]


class StopStringChecker:
    """Per-request stop-string state. Cost per piece: O(len(piece) + sum of stop lengths)."""

    def __init__(self, stop: str | Iterable[str] = ()) -> None:
        stops = (stop,) if isinstance(stop, str) else tuple(stop)
        self.stop: tuple[str, ...] = tuple(
            dict.fromkeys(s for s in stops if s)
        )  # dedup, keep order
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
        hit = self._find_first(buf) if can_match else None
        if hit is not None:
            pos, self.matched = hit
            self._held = ""
            return buf[:pos], True
        keep = self._partial_suffix_len(buf)
        self._held = buf[len(buf) - keep :] if keep else ""
        return buf[: len(buf) - keep], False

    def flush(self) -> str:
        """The held-back text, once no more text will come (nothing after a match)."""
        held, self._held = self._held, ""
        return "" if self.matched is not None else held

    def _find_first(self, buf: str) -> tuple[int, str] | None:
        """The earliest stop string in `buf` (the longest one on a tie)."""
        best: tuple[int, str] | None = None
        for s in self.stop:
            i = buf.find(s)
            if i != -1 and (
                best is None or i < best[0] or (i == best[0] and len(s) > len(best[1]))
            ):
                best = (i, s)
        return best

    def _partial_suffix_len(self, buf: str) -> int:
        """Length of the longest suffix of `buf` that is a proper prefix of a stop string."""
        longest = 0
        for s in self.stop:
            for k in range(min(len(s) - 1, len(buf)), longest, -1):
                if buf.endswith(s[:k]):
                    longest = k
                    break
        return longest
