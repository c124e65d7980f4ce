"""The tokenizer the engine uses everywhere: a thin wrapper over a Hugging Face fast tokenizer.

Two ways in: `Tokenizer.from_pretrained(dir)` for a checkpoint directory (tokenizer.json,
vocab.json + merges.txt or tokenizer.model), and the loader's `tokenizer_from_gguf(path)`, which
rebuilds the tokenizer from a GGUF file's `tokenizer.ggml.*` metadata
(`roseinfer/loader/gguf_tokenizer.py`: the loader knows GGUF, this module does not).
Both end up as a `transformers.PreTrainedTokenizerFast`, so encoding, decoding and chat templates
behave exactly as they do in transformers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["Tokenizer", "TokenizerError", "format_messages_as_prompt"]


class TokenizerError(ValueError):
    """A tokenizer could not be loaded, or an input to it is malformed."""


ROLES = ("system", "user", "assistant", "tool")

# Tokens that end a turn in common chat formats (ChatML, Llama 3, Gemma, Phi-3, GPT-2). A model
# stops on any of these that its vocabulary has, not only on the one `eos_token` names: SmolLM2's
# eos is <|im_end|>, but a base model ends documents with <|endoftext|>.
CHAT_END_TOKENS = (
    "<|im_end|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<|endoftext|>",
    "<end_of_turn>",
    "<|end|>",
)

# Files any one of which lets AutoTokenizer build a tokenizer from a directory.
_TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "spiece.model",
    "vocab.json",
    "vocab.txt",
    "tekken.json",
)


def _validate_messages(messages: Any) -> list[dict]:
    """The messages as a list, or a TokenizerError naming the first bad one."""
    if not isinstance(messages, list | tuple) or not messages:
        raise TokenizerError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TokenizerError(f"messages[{i}] must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in ROLES:
            raise TokenizerError(
                f"messages[{i}] has role {role!r}; expected one of {', '.join(ROLES)}"
            )
        content = message.get("content")
        if not isinstance(content, str):
            raise TokenizerError(
                f"messages[{i}] content must be a string, got {type(content).__name__}"
            )
    return list(messages)


def format_messages_as_prompt(messages: list[dict], add_generation_prompt: bool = True) -> str:
    """Plain-text chat prompt for a tokenizer without a chat template.

    One `role: content` line per message, then `assistant:` so the model answers as the
    assistant (left out when `add_generation_prompt` is False).
    """
    lines = [f"{m['role']}: {m['content']}" for m in _validate_messages(messages)]
    if add_generation_prompt:
        lines.append("assistant:")
    return "\n".join(lines)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table (the byte-level BPE alphabet)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_BYTE_OF = {c: b for b, c in bytes_to_unicode().items()}


class Tokenizer:
    """A Hugging Face tokenizer plus what the engine needs to know about it (stop ids, specials)."""

    def __init__(self, hf: Any, extra_eos_ids: Iterable[int] = ()) -> None:
        self.hf = hf
        self.eos_token_id: int | None = hf.eos_token_id
        self.bos_token_id: int | None = hf.bos_token_id
        self.vocab_size: int = len(hf)

        vocab = hf.get_vocab()
        stops = {vocab[t] for t in CHAT_END_TOKENS if t in vocab}
        if self.eos_token_id is not None:
            stops.add(self.eos_token_id)
        for token_id in extra_eos_ids:
            if isinstance(token_id, bool) or not isinstance(token_id, int):
                raise TokenizerError(f"extra eos ids must be integers, got {token_id!r}")
            stops.add(token_id)
        self.stop_token_ids: frozenset[int] = frozenset(stops)

        # decode(skip_special_tokens=True) drops the added tokens flagged special in the backend;
        # all_special_ids covers bos/eos/unk/pad of tokenizers without such a flag.
        special = {i for i, t in hf.added_tokens_decoder.items() if getattr(t, "special", False)}
        special.update(hf.all_special_ids)
        self._special_ids: frozenset[int] = frozenset(special)
        self._token_texts: dict[int, str] = {}

    def __repr__(self) -> str:
        name = type(self.hf).__name__
        return f"Tokenizer({name}, vocab_size={self.vocab_size}, eos={self.eos_token_id})"

    # ---- loading -----------------------------------------------------------------------------
    @classmethod
    def from_pretrained(cls, path: str, extra_eos_ids: Iterable[int] = ()) -> Tokenizer:
        """Load the tokenizer of a local checkpoint directory (no network access)."""
        from transformers import AutoTokenizer

        path = os.fspath(path)
        if os.path.isdir(path):
            if not any(os.path.isfile(os.path.join(path, f)) for f in _TOKENIZER_FILES):
                raise TokenizerError(
                    f"no tokenizer in {path}: expected one of {', '.join(_TOKENIZER_FILES)}"
                )
        elif os.path.exists(path):
            raise TokenizerError(f"tokenizer path {path} is a file, not a directory")
        try:
            # A path that is not a directory may still name a model in the local HF cache.
            hf = AutoTokenizer.from_pretrained(path, local_files_only=True)
        except Exception as e:  # transformers raises OSError, ValueError, HFValidationError...
            where = path if os.path.isdir(path) else f"{path} (no such directory or cached model)"
            raise TokenizerError(f"could not load a tokenizer from {where}: {e}") from e
        return cls(hf, extra_eos_ids)

    # ---- text <-> ids ------------------------------------------------------------------------
    def encode(
        self, text: str, add_special_tokens: bool = True, split_special_tokens: bool = False
    ) -> list[int]:
        """`split_special_tokens`: a special token's text in `text` is read as plain text (by
        default it is the special token)."""
        if not isinstance(text, str):
            raise TokenizerError(f"text to encode must be a string, got {type(text).__name__}")
        if split_special_tokens:  # (not passed otherwise: some tokenizers do not take it)
            return list(self.hf.encode(text, add_special_tokens=add_special_tokens,
                                       split_special_tokens=True))  # fmt: skip
        return list(self.hf.encode(text, add_special_tokens=add_special_tokens))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Text of `ids`, with no clean-up of spaces, so streamed pieces add up to it exactly."""
        return self.hf.decode(
            list(ids), skip_special_tokens=skip_special_tokens, clean_up_tokenization_spaces=False
        )

    def token_text(self, token_id: int) -> str:
        """One token's text on its own, special tokens included (how logprobs name tokens;
        U+FFFD where the token holds part of a character)."""
        text = self._token_texts.get(token_id)
        if text is None:
            text = self.hf.decode(
                [token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False
            )
            self._token_texts[token_id] = text
        return text

    def token_bytes(self, token_id: int) -> bytes:
        """One token's bytes: its text's UTF-8, or, for a token holding part of a character,
        its raw bytes (byte-level BPE's alphabet, or a SentencePiece <0xHH> byte token)."""
        text = self.token_text(token_id)
        if "\ufffd" not in text:
            return text.encode("utf-8")
        piece = self.hf.convert_ids_to_tokens(token_id)
        if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
            return bytes([int(piece[3:5], 16)])
        if all(c in _BYTE_OF for c in piece):
            return bytes(_BYTE_OF[c] for c in piece)
        return text.encode("utf-8")

    def token_piece(self, token_id: int) -> bytes:
        """A token's bytes as text without special tokens (llama.cpp's `token_to_piece` without
        `special`): b"" for a special one."""
        return b"" if token_id in self._special_ids else self.token_bytes(token_id)

    @property
    def end_token_id(self) -> int:
        """The token that ends an output: EOS, or the first stop token where there is none."""
        if self.eos_token_id is not None:
            return self.eos_token_id
        return min(self.stop_token_ids, default=0)

    def is_special(self, token_id: int) -> bool:
        """Whether decode(skip_special_tokens=True) drops this token."""
        return token_id in self._special_ids

    @property
    def special_token_ids(self) -> frozenset[int]:
        return self._special_ids

    # ---- chat --------------------------------------------------------------------------------
    def set_chat_template(self, template: str) -> None:
        """Use `template` (Jinja, as in tokenizer_config.json) instead of the model's."""
        self.hf.chat_template = template

    def apply_chat_template(
        self,
        messages: list[dict],
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        **template_kwargs: Any,
    ) -> str:
        """The prompt text for `messages`: the tokenizer's template, or the plain fallback.

        `continue_final_message` leaves the last message open for the model to continue (as
        transformers' flag); `template_kwargs` are extra variables for the template."""
        messages = _validate_messages(messages)
        if not getattr(self.hf, "chat_template", None):
            # The fallback's last line is already open: continuing it needs nothing more.
            return format_messages_as_prompt(messages, add_generation_prompt)
        from jinja2 import TemplateError

        try:
            return self.hf.apply_chat_template(
                messages,
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
                **template_kwargs,
            )
        except (TemplateError, ValueError, TypeError, KeyError) as e:
            # Templates reject things like non-alternating roles with raise_exception(...).
            raise TokenizerError(f"chat template rejected the messages: {e}") from e

    def encode_chat(
        self,
        messages: list[dict],
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        **template_kwargs: Any,
    ) -> list[int]:
        """Token ids of the chat prompt; the template writes BOS itself, so none is added."""
        text = self.apply_chat_template(
            messages, add_generation_prompt, continue_final_message, **template_kwargs
        )
        return self.encode(text, False)
