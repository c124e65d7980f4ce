"""Embeddings offline: roseinfer's `LLM.embed` against transformers on the same weights.

The same N texts (seeded, 40-200 words), the same dtype, each side warmed up first, then A/B
alternated `--rounds` times. transformers: the base model (`hf.model`, its last hidden state
after the final norm) over batches of `--hf-batch` texts, right-padded with an attention mask,
the vector at each text's last token, L2-normalized: the same vector roseinfer computes. Prints
seconds and prompt tokens/s per round and the worst cosine distance between the two sides'
vectors.

    python docs/bench/session53/embeddings/embed_bench.py --num 256 --rounds 2
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from hf_baseline import load_hf  # noqa: E402

from roseinfer import LLM  # noqa: E402

WORDS = ("the sea river mountain city light dark cold warm quick slow bright quiet loud old new "
         "tree stone cloud rain wind fire story song road house garden morning evening").split()


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 200))) for _ in range(n)]


def hf_embed(hf, ids: list[list[int]], batch: int, pad: int) -> torch.Tensor:
    out = []
    with torch.inference_mode():
        for i in range(0, len(ids), batch):
            chunk = ids[i : i + batch]
            width = max(map(len, chunk))
            x = torch.full((len(chunk), width), pad)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for j, row in enumerate(chunk):
                x[j, : len(row)] = torch.tensor(row)
                mask[j, : len(row)] = 1
            h = hf.model(input_ids=x, attention_mask=mask).last_hidden_state
            last = torch.tensor([len(row) - 1 for row in chunk])
            out.append(torch.nn.functional.normalize(h[torch.arange(len(chunk)), last].float(), dim=-1))
    return torch.cat(out)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--num", type=int, default=256)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--hf-batch", type=int, default=16)
    args = p.parse_args()
    dtype = getattr(torch, args.dtype)
    llm = LLM(dtype=args.dtype)
    hf = load_hf(None, dtype)
    prompts = texts(args.num, 0)
    ids = [llm.encode(t) for t in prompts]
    tokens = sum(map(len, ids))
    print(f"{args.num} texts, {tokens} prompt tokens, dtype {args.dtype}, torch threads "
          f"{torch.get_num_threads()}")
    llm.embed(texts(8, 1), use_tqdm=False)  # warm-up
    hf_embed(hf, [llm.encode(t) for t in texts(8, 1)], args.hf_batch, 0)
    for r in range(args.rounds):
        llm.reset_prefix_cache()  # each round computes every prompt
        t = time.perf_counter()
        ours = torch.tensor([o.outputs.embedding for o in llm.embed(ids, use_tqdm=False)])
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs = hf_embed(hf, ids, args.hf_batch, 0)
        t_hf = time.perf_counter() - t
        worst = float((1 - (ours * theirs).sum(-1)).max())
        print(f"round {r}: roseinfer {t_ours:.2f} s ({tokens / t_ours:.0f} tok/s), transformers "
              f"{t_hf:.2f} s ({tokens / t_hf:.0f} tok/s): {t_hf / t_ours:.2f}x; worst cosine "
              f"distance {worst:.2e}")


if __name__ == "__main__":
    main()
