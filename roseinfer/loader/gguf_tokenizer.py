"""Rebuild a tokenizer from a GGUF file's `tokenizer.ggml.*` metadata (no tensor is read).

`hf_tokenizer_from_gguf(path)` returns a `transformers.PreTrainedTokenizerFast`;
`tokenizer_from_gguf(path)` the engine's `roseinfer.tokenizer.Tokenizer` over it. Two tokenizer models are supported:
GPT-2 style byte-level BPE (`gpt2`, from tokens + merges, split as llama.cpp's `tokenizer.ggml.pre`
says) and SentencePiece BPE (`llama`, from tokens + merges or scores, with byte fallback).

The header is read with `roseinfer.loader.gguf.read_gguf_metadata` (~20x faster than
`gguf.GGUFReader` on SmolLM2's 98k vocabulary and merge strings). transformers' own
`AutoTokenizer.from_pretrained(dir, gguf_file=...)` is the correctness oracle (tests compare
ids, decoded text and chat prompts), except where llama.cpp and the model's original
tokenizer agree against it (see `_BYTE_LEVEL_PRE`).
"""

from __future__ import annotations

import os
from typing import Any

from roseinfer.loader.gguf import GGUFError, GGUFFile, read_gguf_metadata
from roseinfer.tokenizer import Tokenizer, TokenizerError, bytes_to_unicode

__all__ = ["hf_tokenizer_from_gguf", "read_gguf_tokenizer_metadata", "tokenizer_from_gguf"]


def tokenizer_from_gguf(source: str | os.PathLike[str] | GGUFFile) -> Tokenizer:
    """The tokenizer described by a GGUF file's metadata (no tensor is read): a path, or the
    header `roseinfer.loader.gguf.open_gguf` parsed."""
    return Tokenizer(hf_tokenizer_from_gguf(source))


def hf_tokenizer_from_gguf(source: str | os.PathLike[str] | GGUFFile) -> Any:
    """The `PreTrainedTokenizerFast` described by a GGUF file's metadata (a path, or a header
    `open_gguf` parsed)."""
    meta = read_gguf_tokenizer_metadata(source)
    path = source.path if isinstance(source, GGUFFile) else os.fspath(source)
    kind = meta.get("tokenizer.ggml.model")
    if kind is None:
        raise TokenizerError(f"{path} has no tokenizer metadata (tokenizer.ggml.model)")
    if kind == "gpt2":
        backend = _byte_level_bpe(meta)
    elif kind == "llama":
        backend = _sentencepiece_bpe(meta)
    else:
        raise TokenizerError(
            f"{path}: GGUF tokenizer model {kind!r} is not supported (supported: gpt2, llama)"
        )
    return _wrap_gguf_backend(backend, meta, default_add_bos=kind == "llama")


def read_gguf_tokenizer_metadata(source: str | os.PathLike[str] | GGUFFile) -> dict[str, Any]:
    """The metadata of a GGUF file (the `tokenizer.*` keys among it); no tensor is read."""
    try:
        return read_gguf_metadata(source)
    except GGUFError as e:
        raise TokenizerError(str(e)) from None


# GGUF token types (llama.cpp's llama_token_type).
_TOKEN_CONTROL = 3
_TOKEN_USER_DEFINED = 4

# `tokenizer.ggml.pre` -> how byte-level BPE text is split before merging, as llama.cpp does it.
# None: ByteLevel's own regex, 's|'t|'re|...| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
_GPT2_SPLIT = None
_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# SmolLM (and StarCoder, whose tokenizer it reuses) split every digit off first, then apply the
# GPT-2 regex: llama.cpp's "smollm" pre-type is {"\p{N}", <gpt2 regex>} and SmolLM2's own
# tokenizer.json is Sequence[Digits(individual_digits), ByteLevel]. transformers' GGUF loader
# uses plain ByteLevel for "smollm"; the ids only differ for 2+ spaces before a digit ("a  1":
# ours ĠĠ,1 like the original tokenizer, transformers' Ġ,Ġ,1), since the vocabulary has no
# multi-digit tokens.
_DIGITS_THEN_GPT2 = "digits"
_BYTE_LEVEL_PRE: dict[str, str | None] = {
    "default": _GPT2_SPLIT,
    "gpt2": _GPT2_SPLIT,
    "gpt-2": _GPT2_SPLIT,
    "mpt": _GPT2_SPLIT,
    "olmo": _GPT2_SPLIT,
    "jais": _GPT2_SPLIT,
    "smollm": _DIGITS_THEN_GPT2,
    "starcoder": _DIGITS_THEN_GPT2,
    "refact": _DIGITS_THEN_GPT2,
    "command-r": _DIGITS_THEN_GPT2,
    "codeshell": _DIGITS_THEN_GPT2,
    "exaone": _DIGITS_THEN_GPT2,
    "minerva-7b": _DIGITS_THEN_GPT2,
    "llama3": _LLAMA3_SPLIT,
    "llama-v3": _LLAMA3_SPLIT,
    "llama-bpe": _LLAMA3_SPLIT,
    "falcon3": _LLAMA3_SPLIT,
    "pixtral": _LLAMA3_SPLIT,
    "dbrx": _LLAMA3_SPLIT,
    "smaug-bpe": _LLAMA3_SPLIT,
    "qwen2": _QWEN2_SPLIT,
    "deepseek-r1-qwen": _QWEN2_SPLIT,
    "megrez": _QWEN2_SPLIT,
}


# Pre-tokenizer types for which llama.cpp sets ignore_merges (its LLAMA3 pre-type).
_IGNORE_MERGES_PRE = frozenset({"llama3", "llama-v3", "llama-bpe", "falcon3", "pixtral"})


def _byte_level_bpe(meta: dict[str, Any]) -> Any:
    """GPT-2 style byte-level BPE from `tokens` + `merges`."""
    from tokenizers import Regex, decoders, pre_tokenizers
    from tokenizers import Tokenizer as Backend
    from tokenizers.models import BPE

    tokens: list[str] = meta["tokenizer.ggml.tokens"]
    merges_raw: list[str] | None = meta.get("tokenizer.ggml.merges")
    if merges_raw is None:
        raise TokenizerError("GGUF gpt2 tokenizer has no tokenizer.ggml.merges")
    vocab = {token: i for i, token in enumerate(_byte_level_spelling(tokens, meta))}
    merges = [(m[0], m[2]) for m in (s.partition(" ") for s in merges_raw)]

    pre = meta.get("tokenizer.ggml.pre", "default")
    if pre not in _BYTE_LEVEL_PRE:
        # transformers falls back to GPT-2's regex too; the tokens still decode correctly.
        import logging

        logging.getLogger(__name__).warning(
            "unknown GGUF pre-tokenizer %r, splitting text with GPT-2's regex", pre
        )
    split = _BYTE_LEVEL_PRE.get(pre, _GPT2_SPLIT)
    # llama.cpp's Llama 3 tokenizer (like the original tokenizer.json) emits a pre-token that is
    # itself in the vocabulary whole, without running the merges.
    ignore_merges = pre in _IGNORE_MERGES_PRE

    backend = Backend(
        BPE(
            vocab,
            merges,
            dropout=None,
            fuse_unk=False,
            byte_fallback=False,
            ignore_merges=ignore_merges,
        )
    )
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if split is _DIGITS_THEN_GPT2:
        backend.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level]
        )
    elif split is not None:
        backend.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(split), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    else:
        backend.pre_tokenizer = byte_level
    backend.decoder = decoders.ByteLevel()
    _add_gguf_added_tokens(backend, meta)
    return backend


def _byte_level_spelling(tokens: list[str], meta: dict[str, Any]) -> list[str]:
    """Tokens as the BPE model must spell them: in the byte alphabet.

    A normal token written with other characters (a converter that stored raw text) is respelled
    from its UTF-8 bytes, as transformers does. Control and user-defined tokens keep their text:
    they become added tokens matched verbatim, and the ByteLevel decoder passes such text through.
    """
    table = bytes_to_unicode()
    alphabet = frozenset(table.values())
    types = meta.get("tokenizer.ggml.token_type") or ()
    out = list(tokens)
    for i, token in enumerate(tokens):
        if alphabet.issuperset(token):
            continue
        kind = types[i] if i < len(types) else 1
        if kind not in (_TOKEN_CONTROL, _TOKEN_USER_DEFINED):
            out[i] = "".join(table[b] for b in token.encode("utf-8"))
    return out


def _sentencepiece_bpe(meta: dict[str, Any]) -> Any:
    """Llama/Mistral style SentencePiece BPE from `tokens` + `scores`, with byte fallback."""
    from tokenizers import Tokenizer as Backend
    from tokenizers import decoders, normalizers
    from tokenizers.models import BPE

    tokens: list[str] = meta["tokenizer.ggml.tokens"]
    scores: list[float] | None = meta.get("tokenizer.ggml.scores")
    vocab = {token: i for i, token in enumerate(tokens)}
    if meta.get("tokenizer.ggml.merges") is not None:
        merges = [(m[0], m[2]) for m in (s.partition(" ") for s in meta["tokenizer.ggml.merges"])]
    elif scores is not None and len(scores) == len(tokens):
        merges = _merges_from_scores(vocab, dict(zip(tokens, scores, strict=True)))
    else:
        raise TokenizerError("GGUF llama tokenizer has neither merges nor one score per token")
    unk_id = meta.get("tokenizer.ggml.unknown_token_id")
    unk = tokens[unk_id] if unk_id is not None and 0 <= unk_id < len(tokens) else None

    backend = Backend(
        BPE(vocab, merges, unk_token=unk, fuse_unk=True, byte_fallback=True, dropout=None)
    )
    add_space = bool(meta.get("tokenizer.ggml.add_space_prefix", True))
    # SentencePiece's (and llama.cpp's) rule: spaces become "▁" and every run of text gets one
    # "▁" prepended, also after a special token. As a normalizer this runs on each piece of text
    # between added tokens, which is exactly that. (transformers' GGUF loader uses Metaspace
    # instead, which adds no "▁" after a special token or before text starting with a space.)
    space = normalizers.Replace(" ", "\u2581")
    backend.normalizer = (
        normalizers.Sequence([normalizers.Prepend("\u2581"), space]) if add_space else space
    )
    backend.pre_tokenizer = None
    steps = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
    if add_space:
        steps.append(decoders.Strip(content=" ", left=1, right=0))
    backend.decoder = decoders.Sequence(steps)
    _add_gguf_added_tokens(backend, meta)
    return backend


def _merges_from_scores(vocab: dict[str, int], scores: dict[str, float]) -> list[tuple[str, str]]:
    """BPE merges implied by a SentencePiece vocabulary: every split of a token into two tokens,
    best-scored result first (transformers' `generate_merges`, same order)."""
    merges: list[tuple[str, str, float]] = []
    for piece, score in scores.items():
        local = [
            (piece[:i], piece[i:], score)
            for i in range(1, len(piece))
            if piece[:i] in vocab and piece[i:] in vocab
        ]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(a, b) for a, b, _ in merges]


def _add_gguf_added_tokens(backend: Any, meta: dict[str, Any]) -> None:
    """Make control tokens (<|im_start|>...) special and user-defined ones (<think>) added tokens,
    so both are matched whole in text, as llama.cpp does, instead of being split into pieces."""
    from tokenizers import AddedToken

    tokens = meta["tokenizer.ggml.tokens"]
    types = meta.get("tokenizer.ggml.token_type") or ()
    control = [
        AddedToken(t, special=True, normalized=False)
        for t, kind in zip(tokens, types, strict=False)
        if kind == _TOKEN_CONTROL
    ]
    user = [
        AddedToken(t, special=False, normalized=False)
        for t, kind in zip(tokens, types, strict=False)
        if kind == _TOKEN_USER_DEFINED
    ]
    if control:
        backend.add_special_tokens(control)
    if user:
        backend.add_tokens(user)


def _wrap_gguf_backend(backend: Any, meta: dict[str, Any], default_add_bos: bool) -> Any:
    """A PreTrainedTokenizerFast over `backend` with the GGUF's special tokens and template."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    tokens = meta["tokenizer.ggml.tokens"]

    def token_id(key: str) -> int | None:
        i = meta.get(f"tokenizer.ggml.{key}")
        return i if isinstance(i, int) and 0 <= i < len(tokens) else None

    def token(key: str) -> str | None:
        i = token_id(key)
        return None if i is None else tokens[i]

    bos_id, eos_id = token_id("bos_token_id"), token_id("eos_token_id")
    add_bos = bool(meta.get("tokenizer.ggml.add_bos_token", default_add_bos)) and bos_id is not None
    add_eos = bool(meta.get("tokenizer.ggml.add_eos_token", False)) and eos_id is not None
    # Set the BOS/EOS post-processor on the backend ourselves: transformers 5 rebuilds the same
    # one from add_bos_token, older versions ignore that argument.
    specials = [(tokens[i], i) for i, on in ((bos_id, add_bos), (eos_id, add_eos)) if on]

    def template(seq: str, type_id: int) -> str:
        parts = [f"{tokens[bos_id]}:{type_id}"] if add_bos else []
        parts.append(f"{seq}:{type_id}")
        if add_eos:
            parts.append(f"{tokens[eos_id]}:{type_id}")
        return " ".join(parts)

    backend.post_processor = processors.TemplateProcessing(
        single=template("$A", 0),
        pair=template("$A", 0) + " " + template("$B", 1),
        special_tokens=specials,
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=token("bos_token_id"),
        eos_token=token("eos_token_id"),
        unk_token=token("unknown_token_id"),
        pad_token=token("padding_token_id"),
        chat_template=meta.get("tokenizer.chat_template"),
        add_bos_token=add_bos,
        add_eos_token=add_eos,
        clean_up_tokenization_spaces=False,
    )
