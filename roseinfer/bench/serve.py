"""`roseinfer bench serve`: load-test any OpenAI-compatible server (ours, vLLM, llama-server).

    roseinfer bench serve --base-url http://127.0.0.1:8000/v1 --num-prompts 32 \\
        --random-input-len 70 --random-output-len 128 --concurrency 1,4,16,32 \\
        --json serve.json --plot serve.png

What it sends: streaming `POST {base-url}/completions` (or `/chat/completions` with
`--endpoint-type chat`, or llama.cpp's native `/completion` at the URL's root with
`--endpoint-type llamacpp`: `prompt`, `n_predict`, `temperature`, `stream`) with only
OpenAI-standard fields (`model`, `prompt`/`messages`,
`max_tokens`, `temperature`, `stream`, `stream_options: {include_usage: true}`) plus
`ignore_eos: true` (vLLM, llama-server and roseinfer accept it; `--no-ignore-eos` drops it).
`--extra-body '{"min_tokens": 128}'` adds server-specific fields.

Load: N requests (`--num-prompts`), at most `--concurrency` in flight (a semaphore), arriving
at once or as a Poisson process of `--request-rate` requests/s (seeded exponential gaps).
`--concurrency 1,4,16,32` is a sweep: one benchmark per value, then a summary table and, with
`--plot`, throughput and latency percentiles against concurrency.

Prompts: `--dataset random` draws `--random-input-len` token ids (uniform length within
`--random-range-ratio`) from the non-special vocabulary of `--tokenizer` (default: SmolLM2's,
embedded in roseinfer) and decodes them; the server re-tokenizes that text, so its prompt length
is approximate (usually within a token or two; the server's `usage.prompt_tokens` is what is
reported when it sends usage). `--tokenizer none` uses random English words instead (about one
token each). `--dataset jsonl --dataset-path FILE`: one JSON per line, a string or
`{"prompt": ..., "output_len"|"max_tokens": ...}`. Each sweep point gets its own prompts
(seed + point index) so a prefix cache cannot reuse the previous point's prompts.

Metrics (vLLM's names, milliseconds): TTFT = request sent -> first chunk carrying text;
E2EL = request sent -> last chunk; ITL = gaps between successive text chunks;
TPOT = (E2EL - TTFT) / (output tokens - 1). Output tokens come from the server's `usage`
(`stream_options.include_usage`) when it sends one, else they are the number of text chunks.
Each reported as mean/median/std/p90/p99. Completed = HTTP 200 and a stream that ended well.
CPU: the cores this client, the `--server-pid` server and all other processes used during each
point (on a small machine the client's share is taken from the server, which is why the client
speaks HTTP through `roseinfer.bench.http`, ~40 µs per streamed chunk, not httpx, ~100 µs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys

from roseinfer.bench.machine import OtherLoad, machine_info
from roseinfer.bench.metrics import jsonable_args
from roseinfer.bench.serve_client import ServeConfig, discover_model, run_benchmark
from roseinfer.bench.serve_prompts import PromptSpec, jsonl_prompts, load_tokenizer, random_prompts
from roseinfer.bench.serve_report import plot_sweep, print_result, print_sweep_table


def parse_concurrency(text: str) -> list[int | None]:
    out: list[int | None] = []
    for part in text.split(","):
        part = part.strip().lower()
        if part in ("", "none", "inf", "0"):
            out.append(None)
            continue
        v = int(part)
        if v < 0:
            raise argparse.ArgumentTypeError(f"concurrency must be >= 0, got {v}")
        out.append(v)
    return out


def parse_int_list(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an integer or a comma list, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


# Named workloads (issue 22): defaults a flag given on the command line still overrides
# (`StoreGiven` notes the flags given, whatever their value).
PRESETS: dict[str, dict[str, object]] = {
    # ~2,000-token prompts one at a time: time to first token of a long prefill.
    "long-prompt": {"random_input_len": 2000, "random_output_len": 32, "concurrency": [1],
                    "num_prompts": [8], "temperature": 0.0},
    # the same 8 at once: prefill chunks of several sequences in each step.
    "long-prompt-8": {"random_input_len": 2000, "random_output_len": 32, "concurrency": [8],
                      "num_prompts": [16], "temperature": 0.0},
    # a 1,000-token system prompt shared by 32 requests with short questions: with the prefix
    # cache, time to first token should hardly depend on the prefix.
    "shared-prefix": {"random_prefix_len": 1000, "random_input_len": 24,
                      "random_output_len": 32, "concurrency": [32], "num_prompts": [64],
                      "temperature": 0.0},
}  # fmt: skip


GIVEN = "_given_flags"  # the namespace's set of the preset-able flags the command line gave


class StoreGiven(argparse.Action):
    """A flag a preset sets: stored, and noted as given, so that a `--preset` after it keeps it
    (whatever its value, the default's included)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:  # fmt: skip
        setattr(namespace, self.dest, values)
        setattr(namespace, GIVEN, getattr(namespace, GIVEN, frozenset()) | {self.dest})


class PresetAction(argparse.Action):
    """`--preset NAME`: its values for the flags the command line does not give (before or
    after it)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:  # fmt: skip
        if getattr(namespace, self.dest) not in (None, values):
            parser.error(f"--preset given twice ({getattr(namespace, self.dest)}, {values})")
        setattr(namespace, self.dest, values)
        given: frozenset[str] = getattr(namespace, GIVEN, frozenset())
        for name, value in PRESETS[str(values)].items():
            if name not in given:
                setattr(namespace, name, value)


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--preset",
        action=PresetAction,
        choices=sorted(PRESETS),
        default=None,
        help="a named workload: long-prompt (~2,000-token prompts, one at a time), "
        "long-prompt-8 (8 at once), shared-prefix (a 1,000-token prefix, 32 requests); a flag "
        "given as well, before or after it, keeps its value",
    )
    g = p.add_argument_group("server")
    g.add_argument("--base-url", default="http://127.0.0.1:8000/v1", help="the server's /v1 URL")
    g.add_argument(
        "--model", default=None, help="model name to send (default: the first of GET /models)"
    )
    g.add_argument(
        "--endpoint-type",
        default="completions",
        choices=["completions", "chat", "llamacpp"],
        help="llamacpp: llama.cpp's native POST /completion at the base URL's root (its "
        "n_predict; the last chunk's tokens_predicted counts the output)",
    )
    g.add_argument("--api-key", default=None, help="sent as a Bearer token (default: none)")
    g.add_argument(
        "--no-ignore-eos",
        dest="ignore_eos",
        action="store_false",
        help="do not send ignore_eos (for servers that reject unknown fields)",
    )
    g.add_argument(
        "--no-stream-usage",
        dest="include_usage",
        action="store_false",
        help="do not ask for stream_options.include_usage; count text chunks instead",
    )
    g.add_argument("--extra-body", default=None, help="JSON object merged into every request body")
    g.add_argument("--temperature", type=float, default=0.0, action=StoreGiven)
    g.add_argument("--request-timeout", type=float, default=600.0, help="seconds per request")
    d = p.add_argument_group("prompts")
    d.add_argument("--dataset", default="random", choices=["random", "jsonl"])
    d.add_argument("--dataset-path", default=None, help="the JSONL file for --dataset jsonl")
    d.add_argument("--random-input-len", type=int, default=70, action=StoreGiven)
    d.add_argument(
        "--random-output-len",
        type=int,
        default=128,
        action=StoreGiven,
        help="max_tokens (also for JSONL lines that give none)",
    )
    d.add_argument("--random-range-ratio", type=float, default=0.0)
    d.add_argument(
        "--random-prefix-len",
        type=int,
        default=0,
        action=StoreGiven,
        help="tokens of one random prefix every prompt starts with (default 0: none)",
    )
    d.add_argument(
        "--tokenizer",
        default="smollm2",
        help="tokenizer for synthetic prompts: smollm2, a .gguf, a HF dir, or 'none' (random words)",
    )
    d.add_argument("--seed", type=int, default=0)
    lo = p.add_argument_group("load")
    lo.add_argument(
        "--num-prompts",
        type=parse_int_list,
        default=[32],
        action=StoreGiven,
        help="requests per benchmark; a comma list pairs with a --concurrency sweep",
    )
    lo.add_argument(
        "--concurrency",
        "--max-concurrency",
        dest="concurrency",
        type=parse_concurrency,
        default=[None],
        action=StoreGiven,
        help="max requests in flight (0, inf or none: no limit); a comma list (1,4,16,32) is a "
        "sweep",
    )
    lo.add_argument(
        "--request-rate",
        type=float,
        default=math.inf,
        help="Poisson arrivals at this many requests/s (default inf: all at once)",
    )
    lo.add_argument(
        "--num-warmups", type=int, default=1, help="unmeasured requests first (default 1)"
    )
    lo.add_argument(
        "--server-pid",
        type=int,
        default=None,
        help="the server's process id, when local: its CPU is reported apart, not as other load",
    )
    o = p.add_argument_group("output")
    o.add_argument("--json", default=None, metavar="PATH", help="write config and results as JSON")
    o.add_argument(
        "--plot", default=None, metavar="PNG", help="plot throughput/latency against concurrency"
    )
    o.add_argument("--no-progress", action="store_true")


def check_flags(args: argparse.Namespace) -> None:
    """Flags that would be read and then not act: a ValueError naming them."""
    if not args.request_rate > 0:  # NaN too; inf (the default) sends them all at once
        raise ValueError(f"--request-rate must be > 0 (inf: all at once), got {args.request_rate}")
    if args.num_warmups < 0:
        raise ValueError(f"--num-warmups must be >= 0, got {args.num_warmups}")
    if args.dataset != "jsonl" and args.dataset_path is not None:
        raise ValueError("--dataset-path is read with --dataset jsonl only")
    if args.dataset == "jsonl":
        given: frozenset[str] = getattr(args, GIVEN, frozenset())
        unused = [f"--{name.replace('_', '-')}" for name in
                  ("random_input_len", "random_prefix_len") if name in given]  # fmt: skip
        if args.random_range_ratio != 0.0:
            unused.append("--random-range-ratio")
        if args.preset is not None:
            unused.append(f"--preset {args.preset}")
        if unused:
            raise ValueError(f"{', '.join(unused)}: random prompts' settings, unused with "
                             "--dataset jsonl")  # fmt: skip


def serve_main(args: argparse.Namespace) -> int:
    import datetime

    check_flags(args)
    extra = {}
    if args.extra_body:
        extra = json.loads(args.extra_body)
        if not isinstance(extra, dict):
            raise ValueError("--extra-body must be a JSON object")
    concurrencies = args.concurrency
    nums = args.num_prompts
    if len(nums) == 1:
        nums = nums * len(concurrencies)
    if len(nums) != len(concurrencies):
        raise ValueError(
            f"--num-prompts has {len(nums)} values for {len(concurrencies)} concurrency values"
        )
    try:
        # (llama.cpp's native API sits at the root; its server lists models under /v1 too)
        models_at = args.base_url.rstrip("/")
        if args.endpoint_type == "llamacpp":
            models_at = models_at.removesuffix("/v1") + "/v1"
        model = args.model or discover_model(models_at, args.api_key)
    except Exception as e:
        raise ValueError(
            f"cannot reach {args.base_url}/models ({type(e).__name__}: {e}); is the server up?"
        ) from e
    cfg = ServeConfig(
        base_url=args.base_url,
        model=model,
        endpoint_type=args.endpoint_type,
        ignore_eos=args.ignore_eos,
        include_usage=args.include_usage,
        temperature=args.temperature,
        extra_body=extra,
        api_key=args.api_key,
        timeout=args.request_timeout,
    )
    tok = None
    if args.dataset == "random" and args.tokenizer.lower() != "none" or args.dataset == "jsonl":
        tok = load_tokenizer(args.tokenizer)

    def prompts_for(point: int, num: int) -> list[PromptSpec]:
        if args.dataset == "jsonl":
            if not args.dataset_path:
                raise ValueError("--dataset jsonl needs --dataset-path")
            return jsonl_prompts(args.dataset_path, num, args.random_output_len, tok)
        return random_prompts(
            num,
            args.random_input_len,
            args.random_output_len,
            args.random_range_ratio,
            args.seed + point,
            tok,
            args.random_prefix_len,
        )

    if args.num_warmups > 0:
        warm = prompts_for(10_000, args.num_warmups)
        warm = [PromptSpec(w.prompt, w.prompt_len, min(w.output_len, 16)) for w in warm]
        res = asyncio.run(run_benchmark(cfg, warm, 1, progress=False))
        if res["completed"] == 0:
            errs = [e for e in res["errors"] if e]
            raise ValueError(
                f"warm-up request to {cfg.url} failed: {errs[0] if errs else 'unknown error'}"
            )

    results = []
    for i, (conc, num) in enumerate(zip(concurrencies, nums, strict=True)):
        specs = prompts_for(i, num)
        with OtherLoad(pids=(args.server_pid,) if args.server_pid else ()) as load:
            m = asyncio.run(
                run_benchmark(
                    cfg,
                    specs,
                    conc,
                    args.request_rate,
                    args.seed,
                    not args.no_progress,
                    desc=f"concurrency {conc or 'none'}",
                )
            )
        # CPU cores used by processes other than this client (and the --server-pid server), by
        # this client (on a small machine it takes CPU from the server), and by the server.
        m["other_cpu_cores"] = load.cores
        m["client_cpu_cores"] = load.own_cores
        m["server_cpu_cores"] = load.pid_cores
        print_result(m, args.base_url, model)
        if args.server_pid:
            load.warn(f"concurrency {conc or 'none'}")
        results.append(m)
    if len(results) > 1:
        print_sweep_table(results)
    workload = (
        f"{args.dataset_path} (jsonl)"
        if args.dataset == "jsonl"
        else f"random prompts ~{args.random_input_len} tokens"
        f"{f' after a shared {args.random_prefix_len}-token prefix' if args.random_prefix_len else ''}"
        f", {args.random_output_len} output tokens"
        f"{f' ±{args.random_range_ratio:.0%}' if args.random_range_ratio else ''}"
    )
    if args.plot:
        title = (
            f"{model} @ {args.base_url}\n{workload}{', ignore_eos' if args.ignore_eos else ''}, "
            f"{'/'.join(str(n) for n in nums)} requests per point"
        )
        plot_sweep(results, args.plot, title)
        print(f"[bench serve] wrote plot {args.plot}", file=sys.stderr)
    if args.json:
        config = jsonable_args(args)
        doc = {
            "benchmark": "serve",
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "base_url": args.base_url,
            "model": model,
            "workload": workload,
            "config": config,
            "machine": machine_info(),
            "results": results,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    failed = sum(m["failed"] for m in results)
    return 0 if failed == 0 else 1
