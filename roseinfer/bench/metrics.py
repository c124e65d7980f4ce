"""Small statistics helpers shared by the benchmarks (no numpy needed)."""

from __future__ import annotations

import math
from collections.abc import Sequence

PERCENTILES = (50, 90, 99)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile with linear interpolation (numpy's default); 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def std(values: Sequence[float]) -> float:
    """Population standard deviation (as numpy.std)."""
    if not values:
        return 0.0
    m = mean(values)
    return math.sqrt(sum((x - m) ** 2 for x in values) / len(values))


def describe(
    values: Sequence[float], name: str, unit_scale: float = 1000.0, suffix: str = "_ms"
) -> dict:
    """vLLM-style keys: mean_<name>_ms, median_<name>_ms, std_<name>_ms, p90_<name>_ms, p99_<name>_ms."""
    xs = [v * unit_scale for v in values]
    out = {
        f"mean_{name}{suffix}": mean(xs),
        f"median_{name}{suffix}": percentile(xs, 50),
        f"std_{name}{suffix}": std(xs),
    }
    for p in PERCENTILES:
        if p != 50:
            out[f"p{p}_{name}{suffix}"] = percentile(xs, p)
    return out


def jsonable_args(args) -> dict:
    """An argparse namespace as JSON-friendly values (inf as "inf"; callables, secrets and
    private `_names` dropped)."""
    out = {}
    for k, v in vars(args).items():
        if callable(v) or k in ("api_key", "func") or k.startswith("_"):
            continue
        if isinstance(v, float) and math.isinf(v):
            v = "inf"
        out[k] = v
    return out
