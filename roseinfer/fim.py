"""Fill-in-the-middle: the prompt a code model completes between a prefix and a suffix (llama.cpp's
/infill, OpenAI's `suffix`), built as llama.cpp's server builds it.

A model can fill in the middle when its vocabulary has the FIM tokens its training used; they
are found by their text, as llama.cpp finds them (`FIM_TEXTS`: Qwen-Coder's `<|fim_prefix|>`,
StarCoder's `<fim_prefix>`, CodeLlama's `<PRE>`, DeepSeek-Coder's, ...). The prompt, in the
prefix-suffix-middle order:

    [repo-level context][BOS] <PRE> prefix prompt <SUF> suffix <MID>

the prefix and the suffix tokenized with their special tokens' text read as plain text, the
prefix cut to its last 3/4 of a batch, the suffix to its first quarter less the prompt (the
batch: llama.cpp's 2,048 tokens, or what the context leaves beside the output's room, its
limit or a quarter of the context), the repository context (a `<REP>` project line, a `<SEP>`
file line before each file's text (`extra`), or llama.cpp's "--- snippet ---" separator, and a
`<SEP>` line for the current file, where the vocabulary has those tokens) to its last tokens
that the batch and the output leave room for (none in a context of 2,048 or less). Generation ends at the pad, repo and separator tokens too (`FimTokens.stop_ids`).
"""

from __future__ import annotations

from dataclasses import dataclass

from roseinfer.tokenizer import Tokenizer

# each FIM token's text in the vocabularies llama.cpp knows, first found first taken
FIM_TEXTS: dict[str, tuple[str, ...]] = {
    "pre": ("<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
            "<|code_prefix|>", "<|prefix|>"),
    "suf": ("<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
            "<|code_suffix|>", "<|suffix|>"),
    "mid": ("<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
            "<|code_middle|>", "<|middle|>"),
    "pad": ("<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"),
    "rep": ("<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"),
    "sep": ("<|file_sep|>",),
    "eot": ("<EOT>", "▁<EOT>", "_<EOT>"),  # CodeLlama's end of a fill (not its EOS)
}  # fmt: skip
MAX_BATCH = 2048  # llama.cpp's default n_batch, which its budgets read
_SNIPPET = "\n\n--- snippet ---\n\n"  # llama.cpp's separator where there is no <SEP> token
_PROJECT = "myproject\n"  # (llama.cpp's project line)


@dataclass(frozen=True)
class FimTokens:
    """A vocabulary's FIM token ids (prefix, suffix and middle needed; the rest optional)."""

    pre: int
    suf: int
    mid: int
    pad: int | None = None
    rep: int | None = None
    sep: int | None = None
    eot: int | None = None

    @property
    def stop_ids(self) -> tuple[int, ...]:
        """What ends a fill besides the model's own end tokens (llama.cpp's EOG set)."""
        return tuple(t for t in (self.pad, self.rep, self.sep, self.eot) if t is not None)


class NoFimTokens(ValueError):
    """The model's vocabulary lacks a FIM token a fill needs."""


def fim_tokens(tokenizer: Tokenizer) -> FimTokens:
    """The vocabulary's FIM tokens (NoFimTokens naming the missing ones)."""
    vocab = tokenizer.hf.get_vocab()
    found = {
        slot: next((vocab[t] for t in texts if t in vocab), None)
        for slot, texts in FIM_TEXTS.items()
    }
    pre, suf, mid = found["pre"], found["suf"], found["mid"]
    if pre is None or suf is None or mid is None:
        missing = [name for name, t in (("prefix", pre), ("suffix", suf), ("middle", mid))
                   if t is None]  # fmt: skip
        raise NoFimTokens(f"this model cannot fill in the middle: its vocabulary has no "
                          f"{', '.join(missing)} token (llama.cpp's FIM tokens)")  # fmt: skip
    return FimTokens(pre, suf, mid, found["pad"], found["rep"], found["sep"], found["eot"])


def infill_prompt(tokenizer: Tokenizer, fim: FimTokens, prefix: str, suffix: str,
                  extra: list[tuple[str, str]], prompt: str, n_ctx: int,
                  n_predict: int) -> list[int]:  # fmt: skip
    """The fill's prompt (module docstring). `extra`: (filename, text) of each repository
    file; `prompt`: text typed after the prefix (its special tokens' text read as such);
    `n_ctx`: what a prompt and its output may hold; `n_predict`: the output's limit (0 where
    the request gives none)."""

    def text(t: str) -> list[int]:  # (a special token's text is plain text here)
        return tokenizer.encode(t, False, split_special_tokens=True)

    prompt_ids = tokenizer.encode(prompt, False) if prompt else []
    room = n_predict if n_predict > 0 else n_ctx // 4  # (the output's, kept free)
    bos = _bos(tokenizer)
    # (the fill alone holds at most n_batch + 1 tokens, and its BOS)
    n_batch = max(8, min(MAX_BATCH, n_ctx - room - 1 - len(bos)))
    prefix_ids, suffix_ids = text(prefix), text(suffix)
    take_prefix = min(len(prefix_ids), 3 * (n_batch // 4))
    take_suffix = min(len(suffix_ids), max(0, n_batch // 4 - (2 + len(prompt_ids))))
    head = [fim.pre, *prefix_ids[len(prefix_ids) - take_prefix :], *prompt_ids]
    ids = bos + head + [fim.suf, *suffix_ids[:take_suffix]] + [fim.mid]
    context: list[int] = []  # (its lines whether files come or not, as llama.cpp's)
    if fim.rep is not None:
        context += [fim.rep, *text(_PROJECT)]
    for filename, body in extra:
        context += [fim.sep, *text(filename + "\n")] if fim.sep is not None else text(_SNIPPET)
        context += text(body)
    if fim.sep is not None:
        context += [fim.sep, *text("filename\n")]  # (llama.cpp's line for the current file)
    # what the batch and the output leave, the same for every request of one output limit:
    # the context kept does not move with the prefix's length (its cached blocks stay useful)
    take_context = min(len(context), max(0, n_ctx - room - n_batch - 1 - len(bos)))
    return context[len(context) - take_context :] + ids


def _bos(tokenizer: Tokenizer) -> list[int]:
    """What the tokenizer puts before a text's own tokens (a BOS, or nothing)."""
    with_specials, plain = tokenizer.encode("a", True), tokenizer.encode("a", False)
    n = len(with_specials) - len(plain)
    return with_specials[:n] if n > 0 and with_specials[n:] == plain else []
