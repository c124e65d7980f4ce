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

Layout: this module is the CLI and the driver; the prompts are built in `scheduler_workload`, the
timed runs and the summary lines are in `scheduler_runs`. `roseinfer/benchmark_scheduler.py`
stays as the seeds' entry point (`python -m roseinfer.benchmark_scheduler`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from roseinfer import InferenceEngine, OfflineScheduler, OnlineScheduler
from roseinfer.bench.machine import OtherLoad, machine_info
from roseinfer.bench.metrics import jsonable_args
from roseinfer.bench.scheduler_runs import (
    print_summary,
    report_run,
    run_naive,
    run_offline,
    run_online,
    summarize_runs,
)
from roseinfer.bench.scheduler_workload import Workload, build_workload, prompt_texts
from roseinfer.bench.trace import StepTracer
from roseinfer.bench.workload import length_range
from roseinfer.commands import set_help
from roseinfer.config import EngineConfig, add_engine_args


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        allow_abbrev=False,
        prog="python -m roseinfer.benchmark_scheduler",
        description="Benchmark the online/offline schedulers (the seeds' benchmark).",
    )
    g = p.add_argument_group("workload")
    g.add_argument(
        "--prompt", default=None, help="prompt repeated --num-requests times (default 'Hello')"
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
        default=None,
        help="with --random-input-len: prompt lengths uniform in [len*(1-r), len*(1+r)], "
        "0 <= r < 1 (default 0)",
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
    r.add_argument("--warmup-runs", type=int, default=1, help="unmeasured runs first (default 1)")
    r.add_argument("--repeat-runs", type=int, default=3, help="measured runs (default 3)")
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
        help="write runs and summaries as JSON ('-': stdout, and the summary lines to stderr)",
    )
    o.add_argument(
        "--trace", default=None, metavar="PNG", help="draw the last measured run's engine steps"
    )
    o.add_argument(
        "--trace-json", default=None, metavar="PATH", help="save the last measured run's steps"
    )
    # max_num_seqs=None: "not given", so that the seeds' alias below can be told apart from it
    # (`check_args` puts EngineConfig's default back).
    add_engine_args(p, max_num_seqs=None)
    set_help(p, "seed", "seed of the --random-input-len prompts and of sampling with "
                        "--do-sample (default 0)")  # fmt: skip
    p.add_argument(
        "--max-batch-size",
        type=int,
        default=None,
        help=f"the seeds' name of --max-num-seqs (default {ENGINE_DEFAULTS.max_num_seqs})",
    )
    return p


ENGINE_DEFAULTS = EngineConfig()


def check_args(args: argparse.Namespace) -> None:
    """The flags' values and combinations, before the model loads (ValueError naming them);
    resolves --max-batch-size into max_num_seqs."""
    if args.max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens must be >= 1, got {args.max_new_tokens}")
    if args.num_requests is not None and args.num_requests < 1:
        raise ValueError(f"--num-requests must be >= 1, got {args.num_requests}")
    if args.warmup_runs < 0:
        raise ValueError(f"--warmup-runs must be >= 0, got {args.warmup_runs}")
    if args.repeat_runs < 1:
        raise ValueError(f"--repeat-runs must be >= 1, got {args.repeat_runs}")
    sources = [flag for flag, value in (("--prompt", args.prompt), ("--prompts", args.prompts),
               ("--prompts-file", args.prompts_file), ("--random-input-len",
               args.random_input_len)) if value is not None]  # fmt: skip
    if len(sources) > 1:  # one would be used, the others dropped
        raise ValueError(f"{', '.join(sources)}: give one source of prompts")
    if args.keep_prefix_cache_across_runs and args.mode not in ("online", "all"):
        raise ValueError(f"--keep-prefix-cache-across-runs acts in online mode, not {args.mode}")
    traced = [flag for flag, value in (("--trace", args.trace), ("--trace-json", args.trace_json))
              if value is not None]  # fmt: skip
    if traced and args.mode == "naive":
        raise ValueError(f"{', '.join(traced)}: the naive mode runs no engine steps to trace")
    if args.random_input_len is None:
        if args.random_range_ratio is not None:
            raise ValueError("--random-range-ratio needs --random-input-len (random prompts)")
    else:
        try:
            length_range(args.random_input_len, args.random_range_ratio or 0.0)
        except ValueError as e:
            raise ValueError(f"--random-input-len/--random-range-ratio: {e}") from None
    seqs, alias = args.max_num_seqs, args.max_batch_size
    if seqs is not None and alias is not None and seqs != alias:
        raise ValueError(f"--max-batch-size {alias} and --max-num-seqs {seqs} differ: give one")
    args.max_num_seqs = next(
        (v for v in (seqs, alias) if v is not None), ENGINE_DEFAULTS.max_num_seqs
    )


# ---- driver -----------------------------------------------------------------------------------
def benchmark_mode(
    mode: str,
    engine: InferenceEngine,
    work: Workload,
    args: argparse.Namespace,
    tracer: StepTracer | None = None,
) -> dict:
    warmup_runs, repeat_runs = args.warmup_runs, args.repeat_runs
    online = OnlineScheduler(engine) if mode == "online" else None

    def once(measured_last: bool) -> dict:
        if mode == "naive":
            with OtherLoad() as load:
                r = run_naive(engine, work)
            r["other_cpu_cores"] = load.cores
            return r
        if online is not None:
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
    check_args(args)
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
    # --json -: stdout is the JSON alone, the summary lines go to stderr.
    with contextlib.redirect_stdout(sys.stderr if args.json == "-" else sys.stdout):
        for mode in modes:
            results.append(run_mode(mode, modes, engine, work, args, want_trace))
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


def run_mode(
    mode: str,
    modes: list[str],
    engine: InferenceEngine,
    work: Workload,
    args: argparse.Namespace,
    want_trace: bool,
) -> dict:
    """One mode's runs and summary lines, with its step trace when asked for."""
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
    return res


def _with_suffix(path: str, suffix: str) -> str:
    if not suffix:
        return path
    stem, dot, ext = path.rpartition(".")
    return f"{stem}{suffix}.{ext}" if dot else path + suffix


if __name__ == "__main__":
    sys.exit(main())
