"""Prometheus metrics of one server, on a private registry (so one process can hold several apps).

Gauges are set by the engine thread after each step; counters and histograms are updated as
requests arrive, produce tokens and finish. All times are seconds, measured from when the
handler submitted the request (so TTFT includes queueing).

    roseinfer_num_requests_running          requests in the running batch
    roseinfer_num_requests_waiting          requests queued, not running yet
    roseinfer_kv_cache_used_blocks          KV blocks held by requests
    roseinfer_kv_cache_cached_free_blocks   free blocks still holding prefix-cache contents
    roseinfer_kv_cache_total_blocks         KV blocks in the cache
    roseinfer_kv_cache_usage_ratio          used / total
    roseinfer_prefix_cache_hit_rate         prompt tokens served from the prefix cache / looked up
    roseinfer_prompt_tokens_total           prompt tokens of accepted requests
    roseinfer_generation_tokens_total       generated tokens
    roseinfer_requests_finished_total       by finished_reason (stop, length, abort, error)
    roseinfer_time_to_first_token_seconds   histogram
    roseinfer_time_per_output_token_seconds histogram, per request: (last - first) / (tokens - 1)
    roseinfer_e2e_request_latency_seconds   histogram, requests that finished with stop or length
    roseinfer_num_preemptions_total         sequences preempted (their blocks taken back)

With a model name (the server's), each of these that vLLM also exports is exported a second time
under vLLM's name, labelled `model_name` as vLLM's are, so that dashboards and alerts written for
vLLM read this server unchanged (`VLLM_NAMES`; the same samples, nothing measured twice).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.metrics_core import Metric

from roseinfer.engine.llm_engine import EngineStats

TTFT_BUCKETS = (
    0.005,
    0.01,
    0.02,
    0.04,
    0.06,
    0.08,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    2.5,
    5.0,
    7.5,
    10.0,
    20.0,
    40.0,
)
TPOT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0)
E2E_BUCKETS = (
    0.1,
    0.3,
    0.5,
    0.8,
    1.0,
    1.5,
    2.0,
    2.5,
    5.0,
    10.0,
    15.0,
    20.0,
    30.0,
    60.0,
    120.0,
    300.0,
)


# Ours -> vLLM's (V1) name, where the two count the same thing. vLLM's kv_cache_usage_perc is a
# fraction too (1: full); its request_time_per_output_token_seconds is ours, per request; its
# e2e latency also counts aborted requests, ours those that finished with stop or length.
VLLM_NAMES = {
    "num_requests_running": "vllm:num_requests_running",
    "num_requests_waiting": "vllm:num_requests_waiting",
    "kv_cache_usage_ratio": "vllm:kv_cache_usage_perc",
    "prompt_tokens": "vllm:prompt_tokens",
    "generation_tokens": "vllm:generation_tokens",
    "requests_finished": "vllm:request_success",
    "num_preemptions": "vllm:num_preemptions",
    "time_to_first_token_seconds": "vllm:time_to_first_token_seconds",
    "time_per_output_token_seconds": "vllm:request_time_per_output_token_seconds",
    "e2e_request_latency_seconds": "vllm:e2e_request_latency_seconds",
}


class VllmNames:
    """A collector that yields those of `metrics` named in `VLLM_NAMES` again under vLLM's
    names, with a `model_name` label, read at each scrape."""

    def __init__(self, metrics: list[Gauge | Counter | Histogram], model_name: str) -> None:
        self.metrics = metrics
        self.model_name = model_name

    def describe(self) -> list[Metric]:
        return []  # (nothing to check against the registry's own names: all are vLLM's)

    def collect(self) -> Iterator[Metric]:
        for family in (f for metric in self.metrics for f in metric.collect()):
            name = family.name.removeprefix("roseinfer_")
            theirs = VLLM_NAMES.get(name)
            if theirs is None or family.name == name:
                continue
            copy = Metric(theirs, family.documentation, family.type)
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue  # (vLLM's families have none)
                labels = {**sample.labels, "model_name": self.model_name}
                copy.add_sample(theirs + sample.name[len(family.name) :], labels, sample.value)
            yield copy


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """The figures of the periodic status line (`stats_log.py`), as a scrape would read them."""

    prompt_tokens: float  # totals since start
    generation_tokens: float
    running: int  # the last step's
    waiting: int
    kv_cache_usage: float  # 0..1
    prefix_hit_rate: float  # 0..1, since start


class ServerMetrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(
        self, registry: CollectorRegistry | None = None, model_name: str | None = None
    ) -> None:
        """`model_name`: export vLLM's names too (`VllmNames`), labelled with it."""
        self.registry = r = registry or CollectorRegistry()
        p = "roseinfer_"
        self.running = Gauge(
            p + "num_requests_running", "Requests in the running batch.", registry=r
        )
        self.waiting = Gauge(
            p + "num_requests_waiting", "Requests queued, not running yet.", registry=r
        )
        self.used_blocks = Gauge(
            p + "kv_cache_used_blocks", "KV-cache blocks held by requests.", registry=r
        )
        self.cached_free_blocks = Gauge(
            p + "kv_cache_cached_free_blocks",
            "Free KV-cache blocks still holding prefix-cache contents.",
            registry=r,
        )
        self.total_blocks = Gauge(
            p + "kv_cache_total_blocks", "KV-cache blocks in total.", registry=r
        )
        self.usage = Gauge(p + "kv_cache_usage_ratio", "Used KV-cache blocks / total.", registry=r)
        self.prefix_hit_rate = Gauge(
            p + "prefix_cache_hit_rate", "Prefix-cache hit rate (tokens).", registry=r
        )
        self.prompt_tokens = Counter(
            p + "prompt_tokens", "Prompt tokens of accepted requests.", registry=r
        )
        self.generation_tokens = Counter(p + "generation_tokens", "Generated tokens.", registry=r)
        self.finished = Counter(
            p + "requests_finished", "Finished requests by reason.", ["finished_reason"], registry=r
        )
        self.ttft = Histogram(
            p + "time_to_first_token_seconds",
            "Time to first token.",
            buckets=TTFT_BUCKETS,
            registry=r,
        )
        self.tpot = Histogram(
            p + "time_per_output_token_seconds", "Time per output token after the first.", buckets=TPOT_BUCKETS,
            registry=r,
        )  # fmt: skip
        self.e2e = Histogram(
            p + "e2e_request_latency_seconds",
            "End-to-end request latency.",
            buckets=E2E_BUCKETS,
            registry=r,
        )
        self.preemptions = Counter(
            p + "num_preemptions", "Sequences preempted (their KV blocks taken back).", registry=r
        )
        self._preemptions_seen = 0
        if model_name is not None:
            ours = [m for m in vars(self).values() if isinstance(m, Gauge | Counter | Histogram)]
            r.register(VllmNames(ours, model_name))

    # ---- called by the engine thread -----------------------------------------------------
    def on_stats(
        self, stats: EngineStats, num_pending: int, cached_free_blocks: int | None
    ) -> None:
        self.running.set(stats.num_running)
        self.waiting.set(stats.num_waiting + num_pending)
        self.used_blocks.set(stats.num_used_blocks)
        self.total_blocks.set(stats.num_blocks)
        self.usage.set(stats.num_used_blocks / stats.num_blocks if stats.num_blocks else 0.0)
        self.prefix_hit_rate.set(stats.prefix_hit_rate)
        if stats.num_preemptions_total > self._preemptions_seen:
            self.preemptions.inc(stats.num_preemptions_total - self._preemptions_seen)
            self._preemptions_seen = stats.num_preemptions_total
        if cached_free_blocks is not None:
            self.cached_free_blocks.set(cached_free_blocks)

    def on_request_added(self, num_prompt_tokens: int) -> None:
        self.prompt_tokens.inc(num_prompt_tokens)

    def on_generated_tokens(self, n: int) -> None:
        self.generation_tokens.inc(n)

    def on_first_token(self, ttft: float) -> None:
        self.ttft.observe(ttft)

    def on_finished(
        self,
        reason: str,
        submit_time: float,
        first_token_time: float | None,
        finish_time: float,
        num_tokens: int,
    ) -> None:
        self.finished.labels(finished_reason=reason).inc()
        if reason not in ("stop", "length"):
            return
        self.e2e.observe(finish_time - submit_time)
        if first_token_time is not None and num_tokens > 1:
            self.tpot.observe((finish_time - first_token_time) / (num_tokens - 1))

    # ---- read by any thread ---------------------------------------------------------------
    def snapshot(self) -> MetricsSnapshot:
        def value(name: str) -> float:
            return self.registry.get_sample_value("roseinfer_" + name) or 0.0

        return MetricsSnapshot(
            prompt_tokens=value("prompt_tokens_total"),
            generation_tokens=value("generation_tokens_total"),
            running=int(value("num_requests_running")),
            waiting=int(value("num_requests_waiting")),
            kv_cache_usage=value("kv_cache_usage_ratio"),
            prefix_hit_rate=value("prefix_cache_hit_rate"),
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
