"""`roseinfer bench serve`: load-test any OpenAI-compatible server (ours, vLLM, llama-server).

    roseinfer bench serve --base-url http://127.0.0.1:8000/v1 --num-prompts 32 \\
        --random-input-len 70 --random-output-len 128 --concurrency 1,4,16,32 \\
        --json serve.json --plot serve.png

What it sends: streaming `POST {base-url}/completions` (or `/chat/completions` with
`--endpoint-type chat`) with only OpenAI-standard fields (`model`, `prompt`/`messages`,
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
import random
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from roseinfer.bench.http import ConnectionPool
from roseinfer.bench.machine import OtherLoad, machine_info
from roseinfer.bench.metrics import describe, jsonable_args

WORDS = (
    "the of and to in is was that for on it with as his he by at from her this be are had not but or an "
    "which you one were all we she they there their has been if would who will more when so no time up "
    "out can said about what into some other than them could only its new these two may first any then "
    "do like very my over such our also most made after where way many years before must through back "
    "much good well people world house music water river city night morning light story garden window"
).split()


# ---- prompts ----------------------------------------------------------------------------------
@dataclass
class PromptSpec:
    prompt: str
    prompt_len: int  # our estimate; the server's usage wins when it reports one
    output_len: int


def load_tokenizer(spec: str | None):
    """A roseinfer Tokenizer: 'smollm2' (default), a .gguf file or a HF model directory; None for 'none'."""
    if spec is None or spec.lower() == "none":
        return None
    from roseinfer.tokenizer import Tokenizer

    if spec == "smollm2":
        from roseinfer.loader import smollm2_path

        return Tokenizer.from_gguf(smollm2_path())
    if spec.endswith(".gguf"):
        return Tokenizer.from_gguf(spec)
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
    num: int, input_len: int, output_len: int, range_ratio: float, seed: int, tok
) -> list[PromptSpec]:
    from roseinfer.bench.workload import length_range

    in_lo, in_hi = length_range(input_len, range_ratio)
    out_lo, out_hi = length_range(output_len, range_ratio)
    rng = random.Random(seed)
    pool = None
    if tok is not None:
        special = tok.special_token_ids
        pool = [i for i in range(tok.vocab_size) if i not in special]
    specs = []
    for _ in range(num):
        n_in, n_out = rng.randint(in_lo, in_hi), rng.randint(out_lo, out_hi)
        if tok is not None:
            text, n = synthetic_prompt(tok, rng, n_in, pool)
        else:
            text, n = " ".join(rng.choice(WORDS) for _ in range(n_in)), n_in
        specs.append(PromptSpec(text, n, n_out))
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


# ---- one request ------------------------------------------------------------------------------
@dataclass
class RequestResult:
    success: bool = False
    prompt_len: int = 0
    output_tokens: int = 0
    ttft: float = 0.0  # s
    latency: float = 0.0  # s
    itl: list[float] = field(default_factory=list)  # s
    text: str = ""
    error: str = ""
    usage: bool = False  # output_tokens came from the server's usage


@dataclass
class ServeConfig:
    base_url: str
    model: str
    endpoint_type: str = "completions"
    ignore_eos: bool = True
    include_usage: bool = True
    temperature: float = 0.0
    extra_body: dict = field(default_factory=dict)
    api_key: str | None = None
    timeout: float = 600.0

    @property
    def url(self) -> str:
        path = "/chat/completions" if self.endpoint_type == "chat" else "/completions"
        return self.base_url.rstrip("/") + path

    @property
    def path(self) -> str:
        """The URL's path (what the request line names)."""
        return urlsplit(self.url).path

    def payload(self, spec: PromptSpec) -> dict:
        body: dict = {
            "model": self.model,
            "max_tokens": spec.output_len,
            "temperature": self.temperature,
            "stream": True,
        }
        if self.endpoint_type == "chat":
            body["messages"] = [{"role": "user", "content": spec.prompt}]
        else:
            body["prompt"] = spec.prompt
        if self.include_usage:
            body["stream_options"] = {"include_usage": True}
        if self.ignore_eos:
            body["ignore_eos"] = True
        body.update(self.extra_body)
        return body

    def headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers


def _chunk_text(choice: dict) -> str:
    if "text" in choice:
        return choice.get("text") or ""
    delta = choice.get("delta") or {}
    return delta.get("content") or ""


async def send_request(pool: ConnectionPool, cfg: ServeConfig, spec: PromptSpec) -> RequestResult:
    """Stream one request; never raises (failures are results with success=False)."""
    out = RequestResult(prompt_len=spec.prompt_len)
    chunks = 0
    body = json.dumps(cfg.payload(spec)).encode()
    start = time.perf_counter()
    last = start
    try:
        async with (
            asyncio.timeout(cfg.timeout),
            pool.request("POST", cfg.path, body, cfg.headers()) as resp,
        ):
            if resp.status != 200:
                text = (await resp.read()).decode("utf-8", "replace")
                out.error = f"HTTP {resp.status}: {text[:300]}"
                return out
            done = False
            async for line in resp.lines():
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue  # blank lines, SSE comments, event: lines
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    continue  # read to the end, so the connection can be reused
                chunk = json.loads(data)
                if chunk.get("error"):
                    out.error = f"server error: {json.dumps(chunk['error'])[:300]}"
                    return out
                usage = chunk.get("usage")
                if usage and usage.get("completion_tokens") is not None:
                    out.output_tokens = int(usage["completion_tokens"])
                    out.usage = True
                    if usage.get("prompt_tokens"):
                        out.prompt_len = int(usage["prompt_tokens"])
                for choice in chunk.get("choices") or ():
                    text = _chunk_text(choice)
                    if not text:
                        continue
                    now = time.perf_counter()
                    if chunks == 0:
                        out.ttft = now - start
                    else:
                        out.itl.append(now - last)
                    last = now
                    chunks += 1
                    out.text += text
            out.latency = time.perf_counter() - start
            if not out.usage:
                out.output_tokens = chunks
            if not done and not out.usage:
                out.error = "stream ended without [DONE]"
                return out
            if chunks == 0:
                out.error = "no text received"
                return out
            out.success = True
    except TimeoutError:
        out.error = f"timed out after {cfg.timeout:g} s"
    except Exception as e:  # connection refused, bad JSON: a failed request, not a crash
        out.error = f"{type(e).__name__}: {e}"
    return out


# ---- one benchmark ----------------------------------------------------------------------------
def arrival_gaps(num: int, request_rate: float, seed: int) -> list[float]:
    """Seconds to wait before each request: 0 for the first, then exponential gaps (Poisson)."""
    if math.isinf(request_rate) or request_rate <= 0:
        return [0.0] * num
    rng = random.Random(seed)
    return [0.0] + [rng.expovariate(request_rate) for _ in range(num - 1)]


async def run_benchmark(
    cfg: ServeConfig,
    specs: list[PromptSpec],
    concurrency: int | None,
    request_rate: float = math.inf,
    seed: int = 0,
    progress: bool = True,
    desc: str = "",
) -> dict:
    from tqdm import tqdm

    sem = asyncio.Semaphore(concurrency or len(specs))
    bar = tqdm(
        total=len(specs), desc=desc or "requests", unit="req", disable=not progress, file=sys.stderr
    )
    pool = ConnectionPool(cfg.base_url)

    async def limited(spec: PromptSpec) -> RequestResult:
        async with sem:
            res = await send_request(pool, cfg, spec)
        bar.update(1)
        return res

    try:
        start = time.perf_counter()
        tasks = []
        for spec, gap in zip(specs, arrival_gaps(len(specs), request_rate, seed), strict=True):
            if gap > 0:
                await asyncio.sleep(gap)
            tasks.append(asyncio.create_task(limited(spec)))
        results = await asyncio.gather(*tasks)
        duration = time.perf_counter() - start
    finally:
        await pool.close()
    bar.close()
    return compute_metrics(results, duration, concurrency, request_rate)


def compute_metrics(
    results: list[RequestResult], duration: float, concurrency: int | None, request_rate: float
) -> dict:
    ok = [r for r in results if r.success]
    total_in = sum(r.prompt_len for r in ok)
    total_out = sum(r.output_tokens for r in ok)
    duration = max(duration, 1e-9)
    ttfts = [r.ttft for r in ok]
    tpots = [(r.latency - r.ttft) / (r.output_tokens - 1) for r in ok if r.output_tokens > 1]
    itls = [x for r in ok for x in r.itl]
    e2els = [r.latency for r in ok]
    m = {
        "max_concurrency": concurrency,
        "request_rate": "inf" if math.isinf(request_rate) else request_rate,
        "num_prompts": len(results),
        "duration": duration,
        "completed": len(ok),
        "failed": len(results) - len(ok),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": len(ok) / duration,
        "output_throughput": total_out / duration,
        "total_token_throughput": (total_in + total_out) / duration,
        "usage_reported": all(r.usage for r in ok) if ok else False,
    }
    m.update(describe(ttfts, "ttft"))
    m.update(describe(tpots, "tpot"))
    m.update(describe(itls, "itl"))
    m.update(describe(e2els, "e2el"))
    m["input_lens"] = [r.prompt_len for r in results]
    m["output_lens"] = [r.output_tokens for r in results]
    m["ttfts"] = [r.ttft for r in results]
    m["e2els"] = [r.latency for r in results]
    m["errors"] = [r.error for r in results]
    return m


def print_result(m: dict, base_url: str, model: str) -> None:
    def row(name: str, value) -> None:
        if isinstance(value, float):
            value = f"{value:.2f}"
        print(f"{name:<40}{value!s:<10}")

    print("{s:{c}^50}".format(s=" Serving Benchmark Result ", c="="))
    row("Base URL:", base_url)
    row("Model:", model)
    row("Maximum request concurrency:", m["max_concurrency"] or "none")
    row("Request rate configured (RPS):", m["request_rate"])
    row("Successful requests:", m["completed"])
    row("Failed requests:", m["failed"])
    row("Benchmark duration (s):", m["duration"])
    row("Total input tokens:", m["total_input_tokens"])
    row("Total generated tokens:", m["total_output_tokens"])
    row("Request throughput (req/s):", m["request_throughput"])
    row("Output token throughput (tok/s):", m["output_throughput"])
    row("Total Token throughput (tok/s):", m["total_token_throughput"])
    for key, name, header in (
        ("ttft", "TTFT", "Time to First Token"),
        ("tpot", "TPOT", "Time per Output Token (excl. 1st token)"),
        ("itl", "ITL", "Inter-token Latency"),
        ("e2el", "E2EL", "End-to-end Latency"),
    ):
        print("{s:{c}^50}".format(s=header, c="-"))
        row(f"Mean {name} (ms):", m[f"mean_{key}_ms"])
        row(f"Median {name} (ms):", m[f"median_{key}_ms"])
        row(f"P90 {name} (ms):", m[f"p90_{key}_ms"])
        row(f"P99 {name} (ms):", m[f"p99_{key}_ms"])
    # On a small machine the client's CPU is taken from the server's.
    cpu = [
        (name, m.get(key))
        for name, key in (
            ("Client CPU (cores):", "client_cpu_cores"),
            ("Server CPU (cores, --server-pid):", "server_cpu_cores"),
            ("Other processes' CPU (cores):", "other_cpu_cores"),
        )
        if m.get(key) is not None
    ]
    if cpu:
        print("{s:{c}^50}".format(s="CPU during the run", c="-"))
        for name, value in cpu:
            row(name, value)
    print("=" * 50)
    errors = [e for e in m["errors"] if e]
    if errors:
        print(f"First error: {errors[0]}")


def print_sweep_table(results: list[dict]) -> None:
    print()
    print("=== sweep ===")
    head = (
        f"{'concurrency':>11} {'ok/fail':>8} {'req/s':>7} {'out tok/s':>10} {'total tok/s':>11} "
        f"{'TTFT p50':>9} {'TTFT p99':>9} {'TPOT p50':>9} {'TPOT p99':>9} {'E2EL p50':>9}"
    )
    print(head)
    for m in results:
        print(
            f"{m['max_concurrency'] or 'none'!s:>11} {m['completed']:>4}/{m['failed']:<3} "
            f"{m['request_throughput']:>7.2f} {m['output_throughput']:>10.1f} {m['total_token_throughput']:>11.1f} "
            f"{m['median_ttft_ms']:>9.1f} {m['p99_ttft_ms']:>9.1f} {m['median_tpot_ms']:>9.1f} "
            f"{m['p99_tpot_ms']:>9.1f} {m['median_e2el_ms']:>9.1f}"
        )
    print("(latencies in ms)")


def plot_sweep(results: list[dict], path: str, title: str = "") -> None:
    """Throughput and TTFT/TPOT/E2EL p50 and p99 against concurrency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [m["max_concurrency"] or m["num_prompts"] for m in results]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), constrained_layout=True)

    def setup(ax, ylabel: str) -> None:
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.set_xlabel("max concurrency")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)

    ax = axes[0][0]
    ax.plot(xs, [m["output_throughput"] for m in results], "o-", label="output tok/s")
    ax.plot(
        xs,
        [m["total_token_throughput"] for m in results],
        "s--",
        label="total (prompt + output) tok/s",
    )
    setup(ax, "tokens/s")
    ax.set_title("throughput")
    ax.legend(loc="upper left")
    for ax, key, name in (
        (axes[0][1], "ttft", "TTFT"),
        (axes[1][0], "tpot", "TPOT"),
        (axes[1][1], "e2el", "E2EL"),
    ):
        ax.plot(xs, [m[f"median_{key}_ms"] for m in results], "o-", label=f"{name} p50")
        ax.plot(xs, [m[f"p99_{key}_ms"] for m in results], "s--", label=f"{name} p99")
        if key == "tpot":
            ax.plot(xs, [m["median_itl_ms"] for m in results], "^:", label="ITL p50")
        setup(ax, "ms")
        ax.set_title(name)
        ax.legend(loc="upper left")
    if title:
        fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---- CLI --------------------------------------------------------------------------------------
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


def add_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("server")
    g.add_argument("--base-url", default="http://127.0.0.1:8000/v1", help="the server's /v1 URL")
    g.add_argument(
        "--model", default=None, help="model name to send (default: the first of GET /models)"
    )
    g.add_argument("--endpoint-type", default="completions", choices=["completions", "chat"])
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
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--request-timeout", type=float, default=600.0, help="seconds per request")
    d = p.add_argument_group("prompts")
    d.add_argument("--dataset", default="random", choices=["random", "jsonl"])
    d.add_argument("--dataset-path", default=None, help="the JSONL file for --dataset jsonl")
    d.add_argument("--random-input-len", type=int, default=70)
    d.add_argument(
        "--random-output-len",
        type=int,
        default=128,
        help="max_tokens (also for JSONL lines that give none)",
    )
    d.add_argument("--random-range-ratio", type=float, default=0.0)
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
        help="requests per benchmark; a comma list pairs with a --concurrency sweep",
    )
    lo.add_argument(
        "--concurrency",
        "--max-concurrency",
        dest="concurrency",
        type=parse_concurrency,
        default=[None],
        help="max requests in flight; a comma list (1,4,16,32) is a sweep",
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


def discover_model(base_url: str, api_key: str | None) -> str:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/") + "/models"

    async def get() -> tuple[int, bytes]:
        pool = ConnectionPool(url)
        try:
            async with (
                asyncio.timeout(30.0),
                pool.request("GET", urlsplit(url).path, b"", headers) as r,
            ):
                return r.status, await r.read()
        finally:
            await pool.close()

    status, body = asyncio.run(get())
    if status != 200:
        raise ValueError(f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}")
    data = json.loads(body).get("data") or []
    if not data:
        raise ValueError(f"{base_url}/models lists no model; pass --model")
    return data[0]["id"]


def serve_main(args: argparse.Namespace) -> int:
    import datetime

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
        model = args.model or discover_model(args.base_url, args.api_key)
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
        else f"random prompts ~{args.random_input_len} tokens, {args.random_output_len} output tokens"
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
