"""The workload of the seeds' scheduler benchmark (`roseinfer.bench.scheduler`): prompts from
`--prompt`, `--prompts`, `--prompts-file` or random token ids, and the sampling parameters."""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roseinfer.bench.workload import length_range, random_prompt_ids, token_pool
from roseinfer.compat import seed_params
from roseinfer.sampling_params import SamplingParams

if TYPE_CHECKING:
    from roseinfer import InferenceEngine


@dataclass
class Workload:
    prompt_ids: list[list[int]]
    params: SamplingParams
    description: str


def read_prompts_file(path: str) -> list[str]:
    prompts: list[str] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if path.endswith(".jsonl"):
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{lineno}: not JSON: {e}") from None
                if isinstance(item, dict):
                    item = item.get("prompt")
                if not isinstance(item, str) or not item:
                    raise ValueError(
                        f"{path}:{lineno}: expected a string or an object with a 'prompt'"
                    )
                prompts.append(item)
            else:
                prompts.append(line)
    if not prompts:
        raise ValueError(f"{path} has no prompts")
    return prompts


def prompt_texts(args: argparse.Namespace) -> tuple[list[str], str]:
    """The prompt strings and where they came from (read before the model loads, to fail fast)."""
    if args.prompts_file:
        return read_prompts_file(args.prompts_file), args.prompts_file
    if args.prompts:
        return list(args.prompts), "--prompts"
    prompt = "Hello" if args.prompt is None else args.prompt  # the seeds' default
    return [prompt], repr(prompt)


def build_workload(
    args: argparse.Namespace, engine: InferenceEngine, texts: list[str], source: str
) -> Workload:
    params = seed_params(
        args.max_new_tokens, args.temperature, args.top_k, args.top_p,
        stop_on_eos=not args.ignore_eos, do_sample=args.do_sample,
    )  # fmt: skip
    if args.random_input_len is not None:
        n = args.num_requests or 16
        lo, hi = length_range(args.random_input_len, args.random_range_ratio or 0.0)
        tok = engine.tokenizer
        pool = token_pool(tok.vocab_size, tok.special_token_ids, max_id=tok.vocab_size)
        rng = random.Random(args.seed)
        ids = [random_prompt_ids(rng, rng.randint(lo, hi), pool) for _ in range(n)]
        return Workload(ids, params, f"{n} random prompts of {lo}-{hi} tokens (seed {args.seed})")
    n = args.num_requests or (16 if not (args.prompts_file or args.prompts) else len(texts))
    texts = [texts[i % len(texts)] for i in range(n)]
    return Workload([engine.encode_prompt(t) for t in texts], params, f"{n} prompts from {source}")
