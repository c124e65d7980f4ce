"""Timed runs of the seeds' scheduler benchmark (`roseinfer.bench.scheduler`) and the seeds'
summary lines: one run through `OnlineScheduler`, `OfflineScheduler` or plain `generate_ids`."""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING

from roseinfer.bench.metrics import mean, percentile
from roseinfer.bench.scheduler_workload import Workload

if TYPE_CHECKING:
    from roseinfer import InferenceEngine, OfflineScheduler, OnlineScheduler


def run_online(scheduler: OnlineScheduler, work: Workload) -> dict:
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


def run_offline(scheduler: OfflineScheduler, work: Workload) -> dict:
    t0 = time.perf_counter()
    rids = [
        scheduler.add_request(prompt_token_ids=ids, params=work.params) for ids in work.prompt_ids
    ]
    t1 = time.perf_counter()
    scheduler.run()
    t2 = time.perf_counter()
    completion = sum(len(scheduler.get_generated_ids(r)) for r in rids)
    return _run_result(work, t1 - t0, t2 - t1, completion)


def run_naive(engine: InferenceEngine, work: Workload) -> dict:
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
