"""llama.cpp's two ends of a code completion, on the text as the client gets it (what
llama.vim and llama.vscode send with every fill in the middle):

- `n_indent` (`SamplingParams.min_indent`): a line after the first whose indentation (its
  leading spaces and tabs, one each) is less than n ends the text at its first other character,
  cut there (the newline and the indentation stay): the suggestion ends where the block it
  began in ends. As in llama.cpp, a blank line is such a line (its newline is that character).
- `t_max_predict_ms` (`SamplingParams.stop_at_newline_after_ms`): a token whose text holds a
  newline, coming past this many milliseconds after the first token, is the last (kept whole).

Both end the text with llama.cpp's `stop_type` "limit" (finish reason "length").
"""

from __future__ import annotations

__all__ = ["LineEnd"]

_INDENT = " \t"


class LineEnd:
    """One choice's state: `feed` each released piece of text in order."""

    def __init__(self, min_indent: int, newline_after_ms: float | None) -> None:
        self.min_indent = min_indent
        self.newline_after_s = None if newline_after_ms is None else newline_after_ms / 1e3
        self._at_line_start = False  # after a newline, before the line's first other character
        self._indent = 0

    def feed(self, text: str, since_first_token_s: float) -> tuple[str, bool]:
        """(the text kept, whether the choice ends here); `since_first_token_s`: how long ago
        its first token came."""
        if self.min_indent > 0:
            for i, c in enumerate(text):
                if self._at_line_start:
                    if c in _INDENT:
                        self._indent += 1
                        continue
                    if self._indent < self.min_indent:
                        return text[:i], True
                    self._at_line_start = False
                if c == "\n":
                    self._at_line_start = True
                    self._indent = 0
        late = self.newline_after_s is not None and since_first_token_s > self.newline_after_s
        return text, late and "\n" in text
