"""Turn a stream of generated token ids into a stream of text pieces, in O(1) per token.

Decoding every output from scratch after each token costs O(n) per token (O(n^2) a request),
and decoding each token on its own is wrong: a byte-level BPE token can hold half a UTF-8
character, and a SentencePiece token's leading "▁" only turns into a space in context. This
uses vLLM's prefix_offset / read_offset scheme instead: only a small window of recent tokens is
decoded, and text is released once it can no longer change.
"""

from __future__ import annotations

from collections.abc import Sequence

from roseinfer.checks import check_bools
from roseinfer.tokenizer import Tokenizer

__all__ = ["IncrementalDetokenizer"]

_REPLACEMENT = "\ufffd"


class IncrementalDetokenizer:
    """Streams the text of one sequence's output tokens, a piece per token.

    Window: `_ids[prefix_offset:read_offset]` is already-emitted context, `_ids[read_offset:]`
    the tokens whose text is not out yet. Each token decodes the context alone (cached) and the
    context plus new tokens; the new text is the difference. It is held back while it ends in
    U+FFFD, i.e. a character whose bytes have not all arrived; once it is complete the offsets
    move up, so the window stays a handful of tokens however long the output gets.

    What the pieces add up to (all on_token pieces, then flush()):

    * byte-level BPE (GPT-2, SmolLM2, Llama 3, Qwen): exactly
      `tokenizer.decode(output_ids, skip_special_tokens=...)`, with or without a prompt. A
      character split over several tokens comes out whole, in the piece of its last byte; no
      piece contains U+FFFD unless the bytes are really invalid, and then it is what decode gives.
    * SentencePiece (Llama 2, Mistral; "▁" spaces, <0xE2>-style byte-fallback tokens): after
      `start_prompt(prompt_ids)`, exactly `decode(prompt_ids + output_ids)` minus
      `decode(prompt_ids)`. So the leading space of the first output token is kept, as it reads
      after the prompt; decoding the output alone would strip it. Without `start_prompt` the
      pieces add up to `decode(output_ids)`.

    Special tokens are dropped when `skip_special_tokens` is set, as decode drops them.

    Text that is never valid is bounded too: after `MAX_PENDING` tokens without a complete
    character the held text is released (byte-level: still exactly as decode renders it). For
    SentencePiece, whose decoder replaces a whole run of byte tokens when any of it is invalid,
    such garbage can come out differently from a one-shot decode; valid text never does.
    """

    CONTEXT_TOKENS = 6  # prompt tokens kept as context: enough for "▁"/byte-fallback rules
    MAX_PENDING = 16  # a valid character needs at most 4 byte tokens; more is garbage
    _TRIM_AT = 256  # drop ids before the window once this many have piled up

    def __init__(self, tokenizer: Tokenizer, skip_special_tokens: bool = True) -> None:
        check_bools(skip_special_tokens=skip_special_tokens)  # ("no" would read as true)
        self.tokenizer = tokenizer
        self.skip_special_tokens = skip_special_tokens
        self._ids: list[int] = []
        self._prefix_offset = 0
        self._read_offset = 0
        self._prefix_text = ""  # decode(_ids[prefix_offset:read_offset])
        self._held = 0  # trailing chars of _prefix_text not emitted yet (see _force_release)
        self._pieces: list[str] = []
        self._text: str | None = ""

    def start_prompt(self, prompt_ids: Sequence[int]) -> None:
        """Use the end of the prompt as context for the first output token."""
        if self._ids:
            raise RuntimeError("start_prompt must be called before the first on_token")
        # Only the tail matters; with room for the special tokens a chat template puts last.
        tail = list(prompt_ids[-(self.CONTEXT_TOKENS + self.MAX_PENDING) * 4 :])
        ids = [i for i in tail if not self._skipped(i)]
        # Start the context on a character boundary: cut inside a character, its bytes decode
        # to U+FFFD, and SentencePiece's byte fallback would then spoil the whole run of byte
        # tokens, including output bytes that continue it.
        start = max(len(ids) - self.CONTEXT_TOKENS, 0)
        lowest = max(start - self.MAX_PENDING, 0)
        while start > lowest and self._decode(ids[start:]).startswith(_REPLACEMENT):
            start -= 1
        ids = ids[start:]
        # A prompt ending inside a character (at most 3 bytes of it) has no text the output can
        # be the continuation of; drop those bytes from the context rather than slice garbage.
        for _ in range(3):
            if not ids or not self._decode(ids).endswith(_REPLACEMENT):
                break
            ids.pop()
        self._ids = ids
        self._prefix_offset = 0
        self._read_offset = len(ids)
        self._prefix_text = self._decode(ids) if ids else ""

    def on_token(self, token_id: int) -> str:
        """The text this token makes final ('' while a character is still incomplete). A
        negative id is a ValueError (it had been an OverflowError deep in the tokenizer); an id
        past the tokenizer's vocabulary makes no text, as in a one-shot decode (a model's
        vocabulary may be padded past its tokenizer's)."""
        if token_id < 0:
            raise ValueError(f"token ids are not negative, got {token_id!r}")
        if self._skipped(token_id):
            return ""
        self._ids.append(token_id)
        new_text = self._decode(self._ids[self._prefix_offset :])
        if not new_text.endswith(_REPLACEMENT):
            return self._release(new_text)
        if len(self._ids) - self._read_offset > self.MAX_PENDING:
            return self._force_release(new_text)
        return ""

    def flush(self) -> str:
        """Whatever is still held back: call once when the sequence ends."""
        if self._read_offset == len(self._ids) and not self._held:
            return ""
        return self._release(self._decode(self._ids[self._prefix_offset :]))

    @property
    def text(self) -> str:
        """Everything emitted so far."""
        if self._text is None:
            self._text = "".join(self._pieces)
        return self._text

    # ---- internals ----------------------------------------------------------------------------
    def _skipped(self, token_id: int) -> bool:
        return self.skip_special_tokens and self.tokenizer.is_special(token_id)

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=self.skip_special_tokens)

    def _emit(self, piece: str) -> str:
        if piece:
            self._pieces.append(piece)
            self._text = None
        return piece

    def _release(self, new_text: str) -> str:
        """Emit the new text of the window; the tokens behind it become the next context."""
        piece = new_text[len(self._prefix_text) - self._held :]
        self._move_window(self._read_offset, len(self._ids))
        self._held = 0
        return self._emit(piece)

    def _force_release(self, new_text: str) -> str:
        """Emit all but the last U+FFFD of a long invalid byte run, so the window stays small.

        With UTF-8's maximal-subpart replacement (what byte-level decode does) only the final
        U+FFFD can still turn into a character. Its bytes are in the last 3 tokens, so a window
        of the last 4 decodes them the same way; that char stays held (`_held`).
        """
        piece = new_text[len(self._prefix_text) - self._held : -1]
        end = len(self._ids)
        self._move_window(end - 4, end)
        self._held = 1
        return self._emit(piece)

    def _move_window(self, prefix_offset: int, read_offset: int) -> None:
        if prefix_offset >= self._TRIM_AT:
            # Ids before the window are never decoded again; keep the list short.
            del self._ids[:prefix_offset]
            read_offset -= prefix_offset
            prefix_offset = 0
        self._prefix_offset = prefix_offset
        self._read_offset = read_offset
        self._prefix_text = self._decode(self._ids[prefix_offset:read_offset])
