"""What the sampling features cost a batch: 32 requests at once through `LLM.generate`, plain
sampling against every request with frequency_penalty, presence_penalty, min_p and top-5
logprobs (issue 19's workload), alternated in one process so both see the same machine.

    python benchmarks/sampling_overhead.py --rounds 4

Prints each run's output tokens per second and the medians; BENCHMARKS.md has the figures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from roseinfer import LLM, SamplingParams

FEATURES = {"frequency_penalty": 0.5, "presence_penalty": 0.5, "min_p": 0.05, "logprobs": 5}


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--num-seqs", type=int, default=32)
    p.add_argument("--input-len", type=int, default=70)
    p.add_argument("--output-len", type=int, default=128)
    p.add_argument("--rounds", type=int, default=4)
    args = p.parse_args()
    llm = LLM(args.model, dtype=args.dtype, max_num_seqs=args.num_seqs)
    rng = random.Random(0)
    vocab = llm.engine.model_config.vocab_size
    prompts = [
        [rng.randrange(100, vocab) for _ in range(args.input_len)] for _ in range(args.num_seqs)
    ]
    base = {"max_tokens": args.output_len, "temperature": 1.0, "ignore_eos": True}
    cases = {"plain": SamplingParams(**base), "features": SamplingParams(**base, **FEATURES)}
    llm.generate(prompts[:4], SamplingParams(max_tokens=8), use_tqdm=False)  # warm up
    results: dict[str, list[float]] = {name: [] for name in cases}
    for r in range(args.rounds):
        for name, params in cases.items():
            llm.reset_prefix_cache()
            start = time.perf_counter()
            outs = llm.generate(prompts, [params] * len(prompts), use_tqdm=False)
            elapsed = time.perf_counter() - start
            tokens = sum(o.num_output_tokens for o in outs)
            results[name].append(tokens / elapsed)
            print(f"round {r + 1} {name:8s} {tokens / elapsed:8.1f} output tok/s", flush=True)
    plain, featured = (statistics.median(results[n]) for n in cases)
    print(f"median: plain {plain:.1f} tok/s, features {featured:.1f} tok/s "
          f"({100 * (featured / plain - 1):+.1f} %)")  # fmt: skip


if __name__ == "__main__":
    main()
