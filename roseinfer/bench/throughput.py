"""`roseinfer bench throughput`: offline throughput on a seeded random workload.

nano-vllm's protocol (its `bench.py`): 256 sequences, prompts of 100..1024 random token ids,
outputs of 100..1024 tokens, `ignore_eos`, one `LLM.generate` call, throughput = output tokens /
wall time. That is sized for a big GPU; on 2 CPU cores we scale it down (defaults below):
64 sequences, prompts of 32..256 tokens, outputs of 32..128 tokens, seed 0. Sampling is greedy
by default (nano-vllm samples at temperature 0.6; with `ignore_eos` the lengths are fixed either
way, and greedy keeps the transformers baseline comparison free of sampler differences).

Timing: a short warm-up request (as nano-vllm) runs first and is not counted, then the prefix
cache is reset and the whole workload goes through `LLM.generate` (continuous batching,
incremental detokenisation included). Model loading is not timed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time

from roseinfer.bench.machine import OtherLoad, machine_info
from roseinfer.commands import set_help
from roseinfer.config import EngineConfig, add_engine_args
from roseinfer.sampling_params import SamplingParams

DEFAULTS = dict(
    num_seqs=64, min_input_len=32, max_input_len=256, min_output_len=32, max_output_len=128
)


def add_workload_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("workload (nano-vllm's protocol, scaled to 2 CPU cores)")
    g.add_argument("--num-seqs", type=int, default=DEFAULTS["num_seqs"])
    g.add_argument("--min-input-len", type=int, default=DEFAULTS["min_input_len"])
    g.add_argument("--max-input-len", type=int, default=DEFAULTS["max_input_len"])
    g.add_argument("--min-output-len", type=int, default=DEFAULTS["min_output_len"])
    g.add_argument("--max-output-len", type=int, default=DEFAULTS["max_output_len"])
    g.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")


def add_args(p: argparse.ArgumentParser) -> None:
    add_workload_args(p)
    g = p.add_argument_group("run")
    g.add_argument(
        "--num-warmup", type=int, default=1, help="warm-up requests before timing (default 1)"
    )
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--json", default=None, metavar="PATH", help="write the result as JSON")
    g.add_argument(
        "--trace", default=None, metavar="PNG", help="draw the engine steps as a timeline"
    )
    g.add_argument(
        "--trace-json", default=None, metavar="PATH", help="save the engine steps as JSON"
    )
    add_engine_args(p)
    set_help(p, "seed", "seed of the random workload (prompt ids and lengths, output lengths) "
                        "and of sampling with --temperature > 0 (default 0)")  # fmt: skip


def make_workload(args: argparse.Namespace, vocab_size: int, special_ids) -> list:
    from roseinfer.bench.workload import random_requests, token_pool

    return random_requests(
        args.num_seqs,
        (args.min_input_len, args.max_input_len),
        (args.min_output_len, args.max_output_len),
        token_pool(vocab_size, special_ids),
        seed=args.seed,
    )


def workload_description(args: argparse.Namespace) -> str:
    return (
        f"{args.num_seqs} seqs, input {args.min_input_len}-{args.max_input_len}, "
        f"output {args.min_output_len}-{args.max_output_len}, seed {args.seed}, ignore_eos, "
        f"{'greedy' if args.temperature == 0 else f'temperature {args.temperature}'}"
    )


def build_llm(config: EngineConfig):
    from roseinfer.llm import LLM

    fields = dataclasses.asdict(config)
    return LLM(**fields)


def run_throughput(
    llm,
    requests: list,
    temperature: float = 0.0,
    num_warmup: int = 1,
    progress: bool = True,
    tracer=None,
) -> dict:
    """Run the workload through `llm.generate`; returns the measured numbers."""

    def params(n: int) -> SamplingParams:
        return SamplingParams(max_tokens=n, temperature=temperature, ignore_eos=True)

    if num_warmup > 0:  # no longer than the workload's own requests: it fits where they do
        warm = requests[:num_warmup]
        llm.generate([r.prompt_token_ids[:16] for r in warm],
                     params(min(8, *(r.output_len for r in warm))), use_tqdm=False)  # fmt: skip
    llm.reset_prefix_cache()
    prompts = [r.prompt_token_ids for r in requests]
    sampling = [params(r.output_len) for r in requests]
    if tracer is not None:
        tracer.attach(llm.engine)
    try:
        with OtherLoad() as load:
            t0 = time.perf_counter()
            outputs = llm.generate(prompts, sampling, use_tqdm=progress)
            elapsed = time.perf_counter() - t0
    finally:
        if tracer is not None:
            tracer.detach()
    load.warn("the roseinfer run")
    prompt_tokens = sum(len(p) for p in prompts)
    output_tokens = sum(len(o.token_ids) for o in outputs)
    return {
        "num_requests": len(requests),
        "prompt_tokens": prompt_tokens,
        "output_tokens": output_tokens,
        "requested_output_tokens": sum(r.output_len for r in requests),
        "elapsed_s": elapsed,
        "request_throughput": len(requests) / elapsed,
        "output_throughput": output_tokens / elapsed,
        "total_token_throughput": (prompt_tokens + output_tokens) / elapsed,
        "other_cpu_cores": load.cores,
        "machine": machine_info(),
    }


def describe_engine(llm) -> dict:
    loaded = llm.loaded
    cfg = llm.config
    return {
        "model": loaded.name,
        "dtype": str(loaded.dtype).removeprefix("torch."),
        "device": cfg.device,
        "max_num_seqs": cfg.max_num_seqs,
        "max_num_batched_tokens": cfg.max_num_batched_tokens,
        "lone_prefill_tokens": cfg.lone_prefill_tokens,
        "enforce_eager": cfg.enforce_eager,
        "quantization": cfg.quantization,
    }


def print_result(r: dict, header: str = "=== throughput ===") -> None:
    print(header)
    print(f"Model: {r['model']} ({r['dtype']}, {r['device']})")
    print(f"Workload: {r['workload']}")
    print(f"Requests: {r['num_requests']}")
    print(f"Prompt tokens: {r['prompt_tokens']}")
    print(f"Output tokens: {r['output_tokens']}")
    print(f"Elapsed: {r['elapsed_s']:.2f} s")
    print(f"Request throughput: {r['request_throughput']:.2f} req/s")
    print(f"Output token throughput: {r['output_throughput']:.2f} tok/s")
    print(f"Total token throughput: {r['total_token_throughput']:.2f} tok/s")


def throughput_main(args: argparse.Namespace) -> int:
    from roseinfer.bench.trace import StepTracer

    if args.num_warmup < 0:
        raise ValueError(f"--num-warmup must be >= 0, got {args.num_warmup}")
    llm = build_llm(EngineConfig.from_args(args))
    tok = llm.tokenizer
    requests = make_workload(args, tok.vocab_size, tok.special_token_ids)
    if args.num_warmup > len(requests):  # the warm-up takes the workload's first prompts
        raise ValueError(
            f"--num-warmup {args.num_warmup} is more than the workload's {len(requests)} prompts"
        )
    tracer = StepTracer() if (args.trace or args.trace_json) else None
    result = describe_engine(llm)
    result["workload"] = workload_description(args)
    result.update(
        run_throughput(
            llm, requests, args.temperature, args.num_warmup, not args.no_progress, tracer
        )
    )
    print_result(result)
    if tracer is not None:
        result["trace_summary"] = tracer.summary()
        if args.trace:
            tracer.plot(
                args.trace,
                title=f"roseinfer bench throughput: {result['model']}, {result['workload']}",
            )
            print(f"[throughput] wrote trace plot {args.trace}", file=sys.stderr)
        if args.trace_json:
            tracer.save_json(args.trace_json)
            print(f"[throughput] wrote trace {args.trace_json}", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"benchmark": "throughput", **result}, f, indent=1)
    return 0
