"""Logprobs' two passes (logsumexp, ranks) on torch against the C++ kernels, in one process,
SmolLM2 bf16 (the default engine), rounds alternating which goes first:

    .venv/bin/python docs/bench/session49/logprobs/logprobs_ab.py [--rounds 5]

prompt: one request of an 800-token random prompt, max_tokens 1, without logprobs (the
prefill alone), with prompt_logprobs 1 and 20 (the prefix cache reset before each); decode: 32 requests of 16-token prompts, 64 tokens each,
logprobs 5. The torch passes are `layers.logprobs`' (the code before session 49 also copied
the prompt's rows to fp32 first and skipped the rank pass for rows whose token was in the top
k: sampled tokens mostly, prompt tokens seldom).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from roseinfer import LLM, SamplingParams
from roseinfer.layers.logprobs import LogprobOps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    llm = LLM(model="smollm2")
    runner = llm.engine.runner
    ops = {"torch": LogprobOps(), "kernel": LogprobOps(runner.backend.logsumexp,
                                                       runner.backend.count_greater)}
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(100, 40000, (800,), generator=g).tolist()
    shorts = [torch.randint(100, 40000, (16,), generator=g).tolist() for _ in range(32)]
    cases = {
        "800-token prompt, no logprobs": ([prompt], SamplingParams(max_tokens=1, temperature=0)),
        "prompt_logprobs 1": ([prompt], SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=1)),
        "prompt_logprobs 20": ([prompt], SamplingParams(max_tokens=1, temperature=0, prompt_logprobs=20)),
        "decode 32 x 64, logprobs 5": (shorts, SamplingParams(max_tokens=64, temperature=0, ignore_eos=True, logprobs=5)),
    }  # fmt: skip
    times: dict[tuple[str, str], list[float]] = {}
    outputs: dict[tuple[str, str], list] = {}
    for r in range(args.rounds + 1):  # round 0: warm-up, not counted
        order = ["torch", "kernel"] if r % 2 else ["kernel", "torch"]
        for case, (prompts, params) in cases.items():
            for name in order:
                runner.sampler.logprob_ops = ops[name]
                llm.reset_prefix_cache()
                t = time.perf_counter()
                out = llm.generate(prompts, params, use_tqdm=False)
                if r:
                    times.setdefault((case, name), []).append(time.perf_counter() - t)
                outputs[(case, name)] = out
    for case in cases:
        a, b = (statistics.median(times[(case, n)]) for n in ("torch", "kernel"))
        ta, tb = outputs[(case, "torch")], outputs[(case, "kernel")]
        same = all(x.outputs[0].token_ids == y.outputs[0].token_ids for x, y in zip(ta, tb))
        if not ta[0].prompt_logprobs and ta[0].outputs[0].logprobs is None:
            print(f"{case}: {a * 1e3:.1f} / {b * 1e3:.1f} ms (the same code: the noise)")
            continue
        if ta[0].prompt_logprobs:
            worst = max(abs(p[t].logprob - q[t].logprob) for p, q in
                        zip(ta[0].prompt_logprobs[1:], tb[0].prompt_logprobs[1:]) for t in p)  # fmt: skip
            ranks = all(p[t].rank == q[t].rank for p, q in
                        zip(ta[0].prompt_logprobs[1:], tb[0].prompt_logprobs[1:]) for t in p)  # fmt: skip
        else:
            pairs = [(p, q) for x, y in zip(ta, tb)
                     for p, q in zip(x.outputs[0].logprobs, y.outputs[0].logprobs)]  # fmt: skip
            worst = max(abs(p[t].logprob - q[t].logprob) for p, q in pairs for t in p)
            ranks = all(p[t].rank == q[t].rank for p, q in pairs for t in p)
        print(f"{case}: torch {a * 1e3:.1f} ms, kernel {b * 1e3:.1f} ms ({a / b:.2f}x); "
              f"tokens same {same}, ranks same {ranks}, largest logprob difference {worst:.2e}")  # fmt: skip


if __name__ == "__main__":
    main()
