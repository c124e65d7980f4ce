"""Results of `roseinfer bench serve`: vLLM-named metrics from the per-request results, the
printed result block and sweep table, and the sweep plot."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from roseinfer.bench.metrics import describe


@dataclass
class RequestResult:
    """One request as the load client saw it (`serve_client.send_request`)."""

    success: bool = False
    prompt_len: int = 0
    output_tokens: int = 0
    ttft: float = 0.0  # s
    latency: float = 0.0  # s
    itl: list[float] = field(default_factory=list)  # s
    text: str = ""
    error: str = ""
    usage: bool = False  # output_tokens came from the server's usage


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
    m: dict[str, Any] = {
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
