"""The server's periodic status line (`--log-stats-interval`), as vLLM's, for its log readers:

    Avg prompt throughput: 412.0 tokens/s, Avg generation throughput: 88.5 tokens/s,
    Running: 4 reqs, Waiting: 0 reqs, KV cache usage: 12.5%, Prefix cache hit rate: 40.0%

(one line). Throughputs are over the interval; the rest as the last engine step left them (the
hit rate since start). Everything comes from the Prometheus metrics the engine thread keeps
(`ServerMetrics.snapshot()`), read on a thread of its own. An idle server stays quiet: a line is
logged only for an interval in which tokens were counted or requests ran or waited.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from roseinfer.server.metrics import MetricsSnapshot, ServerMetrics

logger = logging.getLogger("roseinfer.server.stats")


class StatsLogger:
    def __init__(
        self,
        metrics: ServerMetrics,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`interval` seconds between lines (> 0, finite)."""
        if not (math.isfinite(interval) and interval > 0):
            raise ValueError(f"stats interval must be a positive number of seconds, got {interval}")
        self.metrics, self.interval, self.clock = metrics, interval, clock
        self._last: MetricsSnapshot = metrics.snapshot()
        self._last_time = clock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="roseinfer-stats", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(1.0)

    def log_once(self) -> str | None:
        """Log the line for the time since the last call (or since creation) and return it;
        None, and nothing logged, if nothing happened."""
        now, snap = self.clock(), self.metrics.snapshot()
        last, elapsed = self._last, max(now - self._last_time, 1e-9)
        self._last, self._last_time = snap, now
        prompt = snap.prompt_tokens - last.prompt_tokens
        generated = snap.generation_tokens - last.generation_tokens
        if not (prompt or generated or snap.running or snap.waiting):
            return None
        line = (
            f"Avg prompt throughput: {prompt / elapsed:.1f} tokens/s, "
            f"Avg generation throughput: {generated / elapsed:.1f} tokens/s, "
            f"Running: {snap.running} reqs, Waiting: {snap.waiting} reqs, "
            f"KV cache usage: {snap.kv_cache_usage:.1%}, "
            f"Prefix cache hit rate: {snap.prefix_hit_rate:.1%}"
        )
        logger.info(line)
        return line

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.log_once()
