"""Prompts for `roseinfer bench serve`: synthetic (random token ids decoded to text, or random
English words) or read from a JSONL file. See `roseinfer.bench.serve` for the flags."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

WORDS = (
    "the of and to in is was that for on it with as his he by at from her this be are had not but or an "
    "which you one were all we she they there their has been if would who will more when so no time up "
    "out can said about what into some other than them could only its new these two may first any then "
    "do like very my over such our also most made after where way many years before must through back "
    "much good well people world house music water river city night morning light story garden window"
).split()


@dataclass
class PromptSpec:
    prompt: str
    prompt_len: int  # our estimate; the server's usage wins when it reports one
    output_len: int


def load_tokenizer(spec: str | None):
    """A roseinfer Tokenizer: 'smollm2' (default), a .gguf file or a HF model directory; None for 'none'."""
    if spec is None or spec.lower() == "none":
        return None
    from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf
    from roseinfer.tokenizer import Tokenizer

    if spec == "smollm2":
        from roseinfer.loader import smollm2_path

        return tokenizer_from_gguf(smollm2_path())
    if spec.endswith(".gguf"):
        return tokenizer_from_gguf(spec)
    return Tokenizer.from_pretrained(spec)


def synthetic_prompt(tok, rng: random.Random, length: int, pool: list[int]) -> tuple[str, int]:
    """Text of about `length` tokens: decode random ids, re-encode, trim or pad, repeat."""
    ids = [rng.choice(pool) for _ in range(length)]
    text, n = "", 0
    for _ in range(4):
        text = tok.decode(ids)
        enc = tok.encode(text, add_special_tokens=False)
        n = len(enc)
        if n == length:
            break
        ids = enc[:length] if n > length else enc + [rng.choice(pool) for _ in range(length - n)]
    return text, n


def random_prompts(
    num: int,
    input_len: int,
    output_len: int,
    range_ratio: float,
    seed: int,
    tok,
    prefix_len: int = 0,
) -> list[PromptSpec]:
    """`num` prompts of about `input_len` random tokens after a `prefix_len`-token prefix they
    all share (vLLM's --random-prefix-len: a long system prompt, a document asked about)."""
    from roseinfer.bench.workload import length_range

    in_lo, in_hi = length_range(input_len, range_ratio)
    out_lo, out_hi = length_range(output_len, range_ratio)
    rng = random.Random(seed)
    special = set() if tok is None else tok.special_token_ids
    pool = [] if tok is None else [i for i in range(tok.vocab_size) if i not in special]

    def text_of(length: int) -> tuple[str, int]:
        if tok is not None:
            return synthetic_prompt(tok, rng, length, pool)
        return " ".join(rng.choice(WORDS) for _ in range(length)), length

    prefix, n_prefix = text_of(prefix_len) if prefix_len > 0 else ("", 0)
    if prefix and tok is None:
        prefix += " "  # words are joined by spaces; decoded token text carries its own
    specs = []
    for _ in range(num):
        n_in, n_out = rng.randint(in_lo, in_hi), rng.randint(out_lo, out_hi)
        text, n = text_of(n_in)
        specs.append(PromptSpec(prefix + text, n_prefix + n, n_out))
    return specs


def jsonl_prompts(path: str, num: int, default_output_len: int, tok) -> list[PromptSpec]:
    items: list[PromptSpec] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not JSON: {e}") from None
            if isinstance(obj, str):
                obj = {"prompt": obj}
            prompt = obj.get("prompt") if isinstance(obj, dict) else None
            if not isinstance(prompt, str) or not prompt:
                raise ValueError(f"{path}:{lineno}: expected a string or an object with a 'prompt'")
            out = int(obj.get("output_len", obj.get("max_tokens", default_output_len)))
            n = (
                len(tok.encode(prompt, add_special_tokens=False))
                if tok is not None
                else len(prompt.split())
            )
            items.append(PromptSpec(prompt, n, out))
    if not items:
        raise ValueError(f"{path} has no prompts")
    return [items[i % len(items)] for i in range(num)]
