"""An opt-in per-step trace of the engine loop, to see continuous batching and chunked prefill.

    tracer = StepTracer()
    tracer.attach(llm.engine)        # wraps engine.step() on this instance only
    llm.generate(...)
    tracer.detach()
    tracer.save_json("trace.json")
    tracer.plot("trace.png")

Each row is one `LLMEngine.step()`: its start time and wall time, and `core.last_step` after it
(running and waiting counts, tokens in the step and how many of them were prompt tokens,
KV blocks in use, the prefix cache's cumulative hit rate, preemptions). Recording costs two
`perf_counter()` calls and one small dict per step; nothing is recorded unless attached.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

STAT_FIELDS = (
    "num_running",
    "num_waiting",
    "num_batched_tokens",
    "num_prefill_tokens",
    "num_used_blocks",
    "num_blocks",
    "prefix_hit_rate",
    "num_preempted",
)


def _stats_dict(stats: Any) -> dict:
    if stats is None:
        return {}
    if dataclasses.is_dataclass(stats) and not isinstance(stats, type):
        return dataclasses.asdict(stats)
    return {k: getattr(stats, k) for k in STAT_FIELDS if hasattr(stats, k)}


class StepTracer:
    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._t0: float | None = None
        self._core: Any = None

    # ---- recording ---------------------------------------------------------------------------
    def attach(self, core: Any) -> StepTracer:
        """Record every `core.step()` from now on (an instance attribute shadows the method)."""
        if self._core is not None:
            raise RuntimeError("tracer is already attached")
        original = core.step

        def traced_step(*args, **kwargs):
            start = time.perf_counter()
            outputs = original(*args, **kwargs)
            end = time.perf_counter()
            self.record(
                start,
                end,
                getattr(core, "last_step", None),
                len(outputs) if outputs is not None else 0,
            )
            return outputs

        core.step = traced_step
        self._core = core
        return self

    def detach(self) -> None:
        if self._core is not None:
            self._core.__dict__.pop("step", None)
            self._core = None

    def __enter__(self) -> StepTracer:
        return self

    def __exit__(self, *exc) -> None:
        self.detach()

    def record(self, start: float, end: float, stats: Any, num_outputs: int = 0) -> None:
        """Add one step (also usable by loops that call step() themselves)."""
        if self._t0 is None:
            self._t0 = start
        row = {
            "step": len(self.rows),
            "t": start - self._t0,
            "dt": end - start,
            "num_outputs": num_outputs,
        }
        row.update(_stats_dict(stats))
        batched = row.get("num_batched_tokens", 0)
        prefill = row.get("num_prefill_tokens", 0)
        row["num_decode_tokens"] = max(0, batched - prefill)
        self.rows.append(row)

    def clear(self) -> None:
        self.rows = []
        self._t0 = None

    # ---- export ------------------------------------------------------------------------------
    def summary(self) -> dict:
        rows = self.rows
        if not rows:
            return {"num_steps": 0}
        dts = [r["dt"] for r in rows]

        def col(key: str) -> list:
            return [r.get(key, 0) for r in rows]

        prefill, decode = col("num_prefill_tokens"), col("num_decode_tokens")
        return {
            "num_steps": len(rows),
            "wall_time_s": rows[-1]["t"] + rows[-1]["dt"],
            "step_time_s": sum(dts),
            "mean_step_ms": 1000 * sum(dts) / len(dts),
            "max_step_ms": 1000 * max(dts),
            "max_running": max(col("num_running")),
            "max_waiting": max(col("num_waiting")),
            "prefill_tokens": sum(prefill),
            "decode_tokens": sum(decode),
            "mixed_steps": sum(1 for p, d in zip(prefill, decode, strict=True) if p and d),
            "max_used_blocks": max(col("num_used_blocks")),
            "num_blocks": rows[-1].get("num_blocks", 0),
            "preemptions": sum(col("num_preempted")),
            "final_prefix_hit_rate": rows[-1].get("prefix_hit_rate", 0.0),
        }

    def to_dict(self) -> dict:
        return {"summary": self.summary(), "steps": self.rows}

    def save_json(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=1)

    def plot(self, path: str, title: str | None = None) -> None:
        plot_trace(self.rows, path, title)


def plot_trace(rows: list[dict], path: str, title: str | None = None) -> None:
    """Four panels over wall time: step time; running/waiting; prefill and decode tokens
    stacked; KV blocks in use (with the prefix cache's cumulative hit rate)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(4, 1, figsize=(11, 9), sharex=True, constrained_layout=True)
    if not rows:
        axes[0].text(
            0.5, 0.5, "no steps recorded", ha="center", va="center", transform=axes[0].transAxes
        )
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return
    edges = [r["t"] for r in rows] + [rows[-1]["t"] + rows[-1]["dt"]]

    def col(key: str) -> list:
        return [r.get(key, 0) for r in rows]

    ax = axes[0]
    ax.stairs([1000 * d for d in col("dt")], edges, color="tab:gray", fill=True, alpha=0.6)
    ax.set_ylabel("step time (ms)")

    ax = axes[1]
    ax.stairs(col("num_running"), edges, label="running", color="tab:blue", linewidth=1.5)
    ax.stairs(col("num_waiting"), edges, label="waiting", color="tab:orange", linewidth=1.5)
    ax.set_ylabel("requests")
    ax.legend(loc="upper right")

    ax = axes[2]
    prefill, decode = col("num_prefill_tokens"), col("num_decode_tokens")
    total = [p + d for p, d in zip(prefill, decode, strict=True)]
    ax.stairs(decode, edges, fill=True, color="tab:green", alpha=0.7, label="decode tokens")
    ax.stairs(
        total, edges, baseline=decode, fill=True, color="tab:red", alpha=0.7, label="prefill tokens"
    )
    ax.set_ylabel("tokens in step")
    ax.legend(loc="upper right")

    ax = axes[3]
    used = col("num_used_blocks")
    num_blocks = rows[-1].get("num_blocks", 0)
    ax.stairs(
        used,
        edges,
        fill=True,
        color="tab:purple",
        alpha=0.6,
        label=f"KV blocks used (of {num_blocks})",
    )
    if num_blocks and max(used) > 0.5 * num_blocks:  # show the capacity only when it is close
        ax.axhline(num_blocks, color="tab:purple", linestyle="--", linewidth=1, label="KV capacity")
    ax.set_ylabel("KV blocks")
    ax.set_xlabel("time (s)")
    ax.legend(loc="upper left")
    hit = col("prefix_hit_rate")
    if any(hit):
        ax2 = ax.twinx()
        ax2.stairs(
            [100 * h for h in hit], edges, color="black", linewidth=1, label="prefix hit rate"
        )
        ax2.set_ylabel("prefix hit rate (%)")
        ax2.set_ylim(0, 100)
        ax2.legend(loc="upper right")

    s = StepTracer()
    s.rows = rows
    summ = s.summary()
    head = title or "engine steps"
    fig.suptitle(
        f"{head}\n{summ['num_steps']} steps, {summ['prefill_tokens']} prefill + {summ['decode_tokens']} decode "
        f"tokens, {summ['mixed_steps']} mixed steps, {summ['preemptions']} preemptions"
    )
    fig.savefig(path, dpi=110)
    plt.close(fig)
