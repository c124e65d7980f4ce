"""The seeds' scheduler benchmark: many requests through `OnlineScheduler` / `OfflineScheduler`.

    python -m roseinfer.benchmark_scheduler --model smollm2 --device cpu --prompt "Hello" \\
        --num-requests 8 --max-new-tokens 8 --mode online --warmup-runs 0 --repeat-runs 1

prints the seeds' summary block (same line names and units):

    === online summary ===
    Warmup runs: 0
    Measured runs: 1
    Decode time p50/mean: 0.171313/0.171313 s
    Total time p50/mean: 0.193439/0.193439 s
    Throughput(completion,decode) p50/mean: 373.59/373.59 tokens/s
    Throughput(completion,total) p50/mean: 330.85/330.85 tokens/s
    TTFT p50/mean: 0.26/0.26 ms
    TPOT p50/mean: 24.55/24.55 ms/token
    Latency p50/mean: 172.09/172.09 ms

Timing. "Total" = add phase (submitting every request) + "decode" phase (stepping until all are
done, then reading the responses). In the seeds `add_request` prefilled synchronously; here it
only queues, so the add phase is ~0 and prefill happens inside the steps. Online mode records
per request: submit (before `add_request`), first (the end of the step that produced its first
token) and finish (the end of the step that finished it); TTFT = first - submit,
TPOT = (finish - first) / max(1, n_out - 1), Latency = finish - submit. Each run's TTFT/TPOT/
Latency is the median over its requests; the summary gives the p50 and mean of those over the
measured runs (as the seeds). Offline and naive modes have no TTFT/TPOT lines.
Completion tokens are counted from the engine (tokens generated), not by re-tokenizing text.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass

from roseinfer.bench.machine import OtherLoad, machine_info
from roseinfer.bench.metrics import jsonable_args, mean, percentile
from roseinfer.config import EngineConfig, SamplingParams, add_engine_args


@dataclass
class Workload:
    prompt_ids: list[list[int]]
    params: SamplingParams
    description: str


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m roseinfer.benchmark_scheduler",
        description="Benchmark the online/offline schedulers (the seeds' benchmark).",
    )
    g = p.add_argument_group("workload")
    g.add_argument(
        "--prompt", default="Hello", help="prompt repeated --num-requests times (default 'Hello')"
    )
    g.add_argument("--prompts", nargs="+", default=None, help="explicit prompts (one request each)")
    g.add_argument(
        "--prompts-file",
        default=None,
        help="a text file (one prompt per line) or .jsonl (a string or {'prompt': ...} per line)",
    )
    g.add_argument(
        "--random-input-len",
        type=int,
        default=None,
        help="random token-id prompts of about this many tokens instead of --prompt",
    )
    g.add_argument(
        "--random-range-ratio",
        type=float,
        default=0.0,
        help="random prompt lengths uniform in [len*(1-r), len*(1+r)] (default 0)",
    )
    g.add_argument(
        "--num-requests",
        type=int,
        default=None,
        help="requests per run (default 16; with --prompts/--prompts-file: all of them)",
    )
    g.add_argument("--max-new-tokens", type=int, default=100)
    g.add_argument("--temperature", type=float, default=1.0)
    g.add_argument("--top-k", type=int, default=0)
    g.add_argument("--top-p", type=float, default=1.0)
    g.add_argument(
        "--do-sample", action="store_true", help="sample (default: greedy, as the seeds)"
    )
    g.add_argument(
        "--ignore-eos",
        "--no-stop-on-eos",
        dest="ignore_eos",
        action="store_true",
        help="generate exactly --max-new-tokens per request",
    )
    r = p.add_argument_group("runs")
    r.add_argument("--mode", default="online", choices=["naive", "online", "offline", "all"])
    r.add_argument("--warmup-runs", type=int, default=1)
    r.add_argument("--repeat-runs", type=int, default=3)
    r.add_argument("--print-per-run", action="store_true", help="print each measured run's stats")
    r.add_argument(
        "--keep-prefix-cache-across-runs",
        action="store_true",
        help="online mode: keep prefix-cache entries between runs (default: reset before each run)",
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--json",
        default=None,
        metavar="PATH",
        help="write runs and summaries as JSON ('-': stdout)",
    )
    o.add_argument(
        "--trace", default=None, metavar="PNG", help="draw the last measured run's engine steps"
    )
    o.add_argument(
        "--trace-json", default=None, metavar="PATH", help="save the last measured run's steps"
    )
    add_engine_args(p)
    # The seeds' name for the running-batch limit.
    p.add_argument(
        "--max-batch-size",
        dest="max_num_seqs",
        type=int,
        default=argparse.SUPPRESS,
        help="alias of --max-num-seqs",
    )
    return p


# ---- workload ---------------------------------------------------------------------------------
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
    return [args.prompt], repr(args.prompt)


def build_workload(args: argparse.Namespace, engine, texts: list[str], source: str) -> Workload:
    from roseinfer.compat import seed_params

    params = seed_params(
        args.max_new_tokens, args.temperature, args.top_k, args.top_p,
        stop_on_eos=not args.ignore_eos, do_sample=args.do_sample,
    )  # fmt: skip
    if args.random_input_len is not None:
        import random

        from roseinfer.bench.workload import length_range, random_prompt_ids, token_pool

        n = args.num_requests or 16
        lo, hi = length_range(args.random_input_len, args.random_range_ratio)
        tok = engine.tokenizer
        pool = token_pool(tok.vocab_size, tok.special_token_ids, max_id=tok.vocab_size)
        rng = random.Random(args.seed)
        ids = [random_prompt_ids(rng, rng.randint(lo, hi), pool) for _ in range(n)]
        return Workload(ids, params, f"{n} random prompts of {lo}-{hi} tokens (seed {args.seed})")
    n = args.num_requests or (16 if not (args.prompts_file or args.prompts) else len(texts))
    texts = [texts[i % len(texts)] for i in range(n)]
    return Workload([engine.encode_prompt(t) for t in texts], params, f"{n} prompts from {source}")


# ---- runs -------------------------------------------------------------------------------------
def run_online(scheduler, work: Workload) -> dict:
    submit_ts: dict[int, float] = {}
    first_ts: dict[int, float] = {}
    finish_ts: dict[int, float] = {}
    rids: list[int] = []
    t0 = time.perf_counter()
    for ids in work.prompt_ids:
        submit = time.perf_counter()
        rid = scheduler.add_request(prompt_token_ids=ids, params=work.params)
        submit_ts[rid] = submit
        rids.append(rid)
    t1 = time.perf_counter()
    while scheduler.has_unfinished():
        step_tokens = scheduler.step()
        now = time.perf_counter()
        for rid in step_tokens:
            first_ts.setdefault(rid, now)
        for rid in scheduler.pop_finished_ids():
            finish_ts[rid] = now
    n_out = {rid: scheduler.get_step_count(rid) for rid in rids}
    for rid in rids:
        scheduler.pop_response(rid)
    t2 = time.perf_counter()
    ttft = [first_ts[r] - submit_ts[r] for r in rids if r in first_ts]
    latency = [finish_ts[r] - submit_ts[r] for r in rids if r in finish_ts]
    tpot = [
        (finish_ts[r] - first_ts[r]) / max(1, n_out[r] - 1)
        for r in rids
        if r in first_ts and r in finish_ts
    ]
    result = _run_result(work, t1 - t0, t2 - t1, sum(n_out.values()))
    for name, xs in (("ttft", ttft), ("tpot", tpot), ("total", latency)):
        result[f"{name}_p50"] = statistics.median(xs) if xs else 0.0
        result[f"{name}_mean"] = mean(xs)
        result[f"{name}_p90"] = percentile(xs, 90)
        result[f"{name}_p99"] = percentile(xs, 99)
    return result


def run_offline(scheduler, work: Workload) -> dict:
    t0 = time.perf_counter()
    rids = [
        scheduler.add_request(prompt_token_ids=ids, params=work.params) for ids in work.prompt_ids
    ]
    t1 = time.perf_counter()
    scheduler.run()
    t2 = time.perf_counter()
    completion = sum(len(scheduler.get_generated_ids(r)) for r in rids)
    return _run_result(work, t1 - t0, t2 - t1, completion)


def run_naive(engine, work: Workload) -> dict:
    t0 = time.perf_counter()
    completion = sum(len(engine.generate_ids(ids, work.params)) for ids in work.prompt_ids)
    t1 = time.perf_counter()
    return _run_result(work, 0.0, t1 - t0, completion)


def _run_result(
    work: Workload, prefill_elapsed: float, decode_elapsed: float, completion: int
) -> dict:
    prompt_tokens = sum(len(ids) for ids in work.prompt_ids)
    return dict(
        requests=len(work.prompt_ids),
        prefill_elapsed=prefill_elapsed,
        decode_elapsed=max(decode_elapsed, 1e-9),
        elapsed=max(prefill_elapsed + decode_elapsed, 1e-9),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion,
        total_tokens=prompt_tokens + completion,
    )


# ---- reporting --------------------------------------------------------------------------------
def report_run(mode: str, r: dict) -> None:
    print(f"=== {mode} ===")
    print(f"Requests: {r['requests']}")
    print(f"Elapsed (prefill/add): {r['prefill_elapsed']:.6f} seconds")
    print(f"Elapsed (decode/run): {r['decode_elapsed']:.6f} seconds")
    print(f"Elapsed (total): {r['elapsed']:.6f} seconds")
    print(f"Prompt tokens: {r['prompt_tokens']}")
    print(f"Completion tokens: {r['completion_tokens']}")
    print(f"Total tokens: {r['total_tokens']}")
    print(f"Throughput (completion,total): {r['completion_tokens'] / r['elapsed']:.2f} tokens/s")
    print(
        f"Throughput (completion,decode): {r['completion_tokens'] / r['decode_elapsed']:.2f} tokens/s"
    )
    print(f"Throughput (total,total): {r['total_tokens'] / r['elapsed']:.2f} tokens/s")
    print()


def summarize_runs(results: list[dict]) -> dict:
    def p50_mean(xs: list[float]) -> tuple[float, float]:
        return statistics.median(xs), statistics.mean(xs)

    s: dict = {}
    pairs = {
        "decode_time_s": [r["decode_elapsed"] for r in results],
        "total_time_s": [r["elapsed"] for r in results],
        "throughput_completion_decode": [
            r["completion_tokens"] / r["decode_elapsed"] for r in results
        ],
        "throughput_completion_total": [r["completion_tokens"] / r["elapsed"] for r in results],
    }
    if all("ttft_p50" in r for r in results):
        pairs["ttft_ms"] = [1000 * r["ttft_p50"] for r in results]
        pairs["tpot_ms"] = [1000 * r["tpot_p50"] for r in results]
        pairs["latency_ms"] = [1000 * r["total_p50"] for r in results]
    for key, xs in pairs.items():
        s[f"{key}_p50"], s[f"{key}_mean"] = p50_mean(xs)
    return s


def print_summary(mode: str, s: dict, warmup_runs: int, repeat_runs: int) -> None:
    print(f"=== {mode} summary ===")
    print(f"Warmup runs: {warmup_runs}")
    print(f"Measured runs: {repeat_runs}")
    print(f"Decode time p50/mean: {s['decode_time_s_p50']:.6f}/{s['decode_time_s_mean']:.6f} s")
    print(f"Total time p50/mean: {s['total_time_s_p50']:.6f}/{s['total_time_s_mean']:.6f} s")
    print(
        "Throughput(completion,decode) p50/mean: "
        f"{s['throughput_completion_decode_p50']:.2f}/{s['throughput_completion_decode_mean']:.2f} tokens/s"
    )
    print(
        "Throughput(completion,total) p50/mean: "
        f"{s['throughput_completion_total_p50']:.2f}/{s['throughput_completion_total_mean']:.2f} tokens/s"
    )
    if "ttft_ms_p50" in s:
        print(f"TTFT p50/mean: {s['ttft_ms_p50']:.2f}/{s['ttft_ms_mean']:.2f} ms")
        print(f"TPOT p50/mean: {s['tpot_ms_p50']:.2f}/{s['tpot_ms_mean']:.2f} ms/token")
        print(f"Latency p50/mean: {s['latency_ms_p50']:.2f}/{s['latency_ms_mean']:.2f} ms")
    print()


# ---- driver -----------------------------------------------------------------------------------
def benchmark_mode(
    mode: str, engine, work: Workload, args: argparse.Namespace, tracer=None
) -> dict:
    from roseinfer.engine import OfflineScheduler, OnlineScheduler

    warmup_runs = max(0, args.warmup_runs)
    repeat_runs = max(1, args.repeat_runs)
    online = OnlineScheduler(engine) if mode == "online" else None

    def once(measured_last: bool) -> dict:
        if mode == "naive":
            with OtherLoad() as load:
                r = run_naive(engine, work)
            r["other_cpu_cores"] = load.cores
            return r
        if mode == "online":
            if not args.keep_prefix_cache_across_runs:
                online.core.block_manager.reset_prefix_cache()
            scheduler = online
        else:
            scheduler = OfflineScheduler(engine)  # a fresh KV cache each run, as the seeds
        if tracer is not None and measured_last:
            tracer.clear()
            tracer.attach(scheduler.core)
        try:
            with OtherLoad() as load:
                r = (
                    run_online(scheduler, work)
                    if mode == "online"
                    else run_offline(scheduler, work)
                )
            r["other_cpu_cores"] = load.cores
            return r
        finally:
            if tracer is not None:
                tracer.detach()

    for _ in range(warmup_runs):
        once(False)
    runs = []
    for i in range(repeat_runs):
        r = once(i == repeat_runs - 1)
        r["run"] = i
        runs.append(r)
        if args.print_per_run:
            report_run(mode, r)
    summary = summarize_runs(runs)
    print_summary(mode, summary, warmup_runs, repeat_runs)
    worst = OtherLoad()
    worst.cores = max((r["other_cpu_cores"] or 0.0 for r in runs), default=None)
    worst.warn(f"the {mode} runs")
    return {
        "mode": mode,
        "warmup_runs": warmup_runs,
        "measured_runs": repeat_runs,
        "runs": runs,
        "summary": summary,
    }


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _main(args)
    except (ValueError, FileNotFoundError, OSError) as e:
        print(f"benchmark_scheduler: error: {e}", file=sys.stderr)
        return 1


def _main(args: argparse.Namespace) -> int:
    from roseinfer.bench.trace import StepTracer
    from roseinfer.engine import InferenceEngine

    if args.max_new_tokens < 1:
        raise ValueError("--max-new-tokens must be >= 1")
    if args.num_requests is not None and args.num_requests < 1:
        raise ValueError("--num-requests must be >= 1")
    texts, source = prompt_texts(args)
    engine = InferenceEngine(EngineConfig.from_args(args))
    work = build_workload(args, engine, texts, source)
    modes = ["naive", "online", "offline"] if args.mode == "all" else [args.mode]
    print(
        f"[benchmark_scheduler] model={engine.loaded.name} dtype={str(engine.loaded.dtype).removeprefix('torch.')} "
        f"device={engine.device} workload: {work.description}, max_new_tokens={args.max_new_tokens}"
        f"{' ignore_eos' if args.ignore_eos else ''}",
        file=sys.stderr,
    )
    want_trace = bool(args.trace or args.trace_json)
    results = []
    for mode in modes:
        tracer = StepTracer() if want_trace and mode != "naive" else None
        res = benchmark_mode(mode, engine, work, args, tracer)
        if tracer is not None:
            res["trace_summary"] = tracer.summary()
            suffix = "" if len(modes) == 1 or mode == modes[-1] else f".{mode}"
            if args.trace:
                path = _with_suffix(args.trace, suffix)
                tracer.plot(path, title=f"benchmark_scheduler {mode}: {work.description}")
                print(f"[benchmark_scheduler] wrote trace plot {path}", file=sys.stderr)
            if args.trace_json:
                path = _with_suffix(args.trace_json, suffix)
                tracer.save_json(path)
                print(f"[benchmark_scheduler] wrote trace {path}", file=sys.stderr)
        results.append(res)
    if args.json:
        doc = {
            "benchmark": "scheduler",
            "model": engine.loaded.name,
            "dtype": str(engine.loaded.dtype).removeprefix("torch."),
            "device": engine.device,
            "workload": work.description,
            "machine": machine_info(),
            "args": jsonable_args(args),
            "results": results,
        }
        text = json.dumps(doc, indent=1)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text)
    return 0


def _with_suffix(path: str, suffix: str) -> str:
    if not suffix:
        return path
    stem, dot, ext = path.rpartition(".")
    return f"{stem}{suffix}.{ext}" if dot else path + suffix


if __name__ == "__main__":
    sys.exit(main())
