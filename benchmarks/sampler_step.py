"""The sampler alone at one batch: median milliseconds of a call, plain and with each feature,
on random logits (scaled so that a few tokens dominate, as a model's do) and 70-token prompts.

    python benchmarks/sampler_step.py --batch-size 32 --vocab 49152

With `--grammar`, also every row under a JSON schema (SmolLM2's tokenizer, llguidance): the
bitmask fill and apply, with each row's matcher advanced by the token it drew, the apply by the
torch version and by the C++ kernel (the CPU backend's); and every row under tool_choice
"auto"'s grammar (free text with a lazy `<tool_call>` trigger), kernel apply. With `--kernels`,
every case with the CPU backend's passes over whole rows (argmax, logprobs', the truncation's),
as the engine runs them.

The engine's own figures (the sampler inside a generate run) are in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any

import torch

from roseinfer.layers.infill import InfillFilter
from roseinfer.layers.sampler import Sampler
from roseinfer.sampling_params import SamplingParams

CASES: dict[str, dict] = {
    "plain": {},
    "greedy": {"temperature": 0.0},
    "freq+presence": {"frequency_penalty": 0.5, "presence_penalty": 0.5},
    "repetition": {"repetition_penalty": 1.2},
    "min_p": {"min_p": 0.05},
    "logprobs 5": {"logprobs": 5},
    "logprobs 0": {"logprobs": 0},
    "issue 19's four": {"frequency_penalty": 0.5, "presence_penalty": 0.5, "min_p": 0.05,
                        "logprobs": 5},
    "T .8 k40 p.95 m.05": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05},
    "same, T last": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05,
                     "temperature_last": True},  # llama.cpp's default chain
    "llama.vim's": {"top_k": 40, "top_p": 0.9, "infill": True},
}  # fmt: skip


@dataclass(eq=False)
class History:
    seq_id: int
    token_ids: list[int]
    num_prompt_tokens: int
    is_finished: bool = False
    bad_words_token_ids: tuple[tuple[int, ...], ...] = ()
    matcher: Any = None


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"},
          "sources": {"type": "array", "items": {"type": "string"}}}}  # fmt: skip


def grammar_cases(vocab: int) -> tuple[dict[str, SamplingParams], Any]:
    """Params under SCHEMA and under tool_choice "auto", and a compiler for SmolLM2's tokenizer
    (its vocabulary: `vocab`)."""
    from roseinfer.loader import smollm2_path
    from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf
    from roseinfer.sampling_params import StructuredOutputs
    from roseinfer.structured.grammar import GrammarCompiler
    from roseinfer.structured.tools import Tool, ToolUse

    tools = ToolUse((Tool("get_weather", None, SCHEMA),), "auto")
    specs = {"json schema": StructuredOutputs(json=SCHEMA),
             "tools auto": StructuredOutputs(grammar=tools.grammar())}  # fmt: skip
    compiler = GrammarCompiler(tokenizer_from_gguf(smollm2_path()), vocab)
    for spec in specs.values():
        compiler.check(spec)  # the tokenizer's view and the grammar: not timed
    params = {
        name: SamplingParams(max_tokens=128, temperature=1.0, structured_outputs=spec)
        for name, spec in specs.items()
    }
    return params, compiler


def kernel_sampler(seed: int, infill: InfillFilter) -> Sampler:
    """A sampler with the CPU backend's passes over whole rows, as the engine builds it (the
    truncation's where the tree has them)."""
    from roseinfer.kernels import load_cpu_kernels
    from roseinfer.layers.logprobs import LogprobOps

    kernels = load_cpu_kernels()
    assert kernels is not None, "the C++ kernels do not build here"
    ops: dict[str, Any] = {}
    try:
        from roseinfer.layers.truncation import CandidateOps

        ops["candidate_ops"] = CandidateOps(
            kernels.top_candidates_rows, kernels.logsumexp_rows, kernels.sample_candidates_rows
        )
    except ImportError:  # (a tree from before session 57)
        pass
    return Sampler("cpu", seed, [0], kernels.argmax_rows, kernels.apply_token_bitmask,
                   LogprobOps(kernels.logsumexp_rows, kernels.count_greater_rows), infill, **ops)  # fmt: skip


def median_ms(params: SamplingParams, batch: int, vocab: int, steps: int, seed: int,
              compiler: Any = None, kernel: bool = False) -> float:  # fmt: skip
    gen = torch.Generator().manual_seed(seed)
    logits = [torch.randn(batch, vocab, generator=gen) * 4 for _ in range(8)]
    # the infill filter over made-up texts: a token's text its id's digits ("1" begins "12")
    infill = InfillFilter(lambda t: str(t).encode(), 0)
    sampler = kernel_sampler(seed, infill) if kernel else Sampler("cpu", seed, [0], infill=infill)
    seqs = [History(i, torch.randint(0, vocab, (70,), generator=gen).tolist(), 70)
            for i in range(batch)]  # fmt: skip
    if params.structured_outputs is not None:
        for seq in seqs:
            seq.matcher = compiler.matcher(params.structured_outputs)
    states = [sampler.new_row_state(params, seq.bad_words_token_ids) for seq in seqs]  # once
    times = []
    for step in range(steps):
        x = logits[step % 8].clone()
        start = time.perf_counter()
        out = sampler(x, [params] * batch, states, [0] * batch, seqs)
        out.token_ids.tolist()
        if out.logprobs is not None:
            out.logprobs.top_ids.tolist()
        times.append(time.perf_counter() - start)
        for seq, token in zip(seqs, out.token_ids.tolist(), strict=True):
            seq.token_ids.append(token)
            if seq.matcher is not None:
                seq.matcher.consume_token(token)
                if seq.matcher.is_stopped():  # done: start over, the batch stays full
                    seq.matcher.reset()
    return 1e3 * statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--vocab", type=int, default=49152)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--grammar", action="store_true", help="also every row under a JSON schema")
    p.add_argument("--kernels", action="store_true",
                   help="the CPU backend's passes over whole rows, as the engine runs (default: "
                        "torch's)")  # fmt: skip
    args = p.parse_args()
    grammar = grammar_cases(args.vocab) if args.grammar else None
    for r in range(args.rounds):
        row = []
        for name, fields in CASES.items():
            params = SamplingParams(**{"max_tokens": 128, "temperature": 1.0, **fields})
            row.append(
                f"{name} "
                f"{median_ms(params, args.batch_size, args.vocab, args.steps, r, None, args.kernels):.2f}"
            )
        if grammar is not None:
            cases, compiler = grammar
            for name, kernel in [("json schema", False), ("json schema", True),
                                 ("tools auto", True)]:  # fmt: skip
                ms = median_ms(cases[name], args.batch_size, args.vocab, args.steps, r,
                               compiler, kernel)  # fmt: skip
                row.append(f"{name} ({'kernel' if kernel else 'torch'} apply) {ms:.2f}")
        print(f"round {r + 1} (ms): " + ", ".join(row), flush=True)


if __name__ == "__main__":
    main()
