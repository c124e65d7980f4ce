"""Decode-only steps of `offline_ab.sh`'s traces, by checkout and mode: the median step time per
batch bucket over all rounds (the steps of every round pooled), and the decode-only total.

    python docs/bench/session17/decode_steps.py /tmp/traces
"""

import collections
import glob
import json
import os
import statistics
import sys


def main() -> None:
    pooled: dict[tuple[str, str], dict[int, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    totals: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
        _, tree, mode = os.path.basename(path)[:-5].split("_", 2)
        steps = json.load(open(path))["steps"]
        decode = [s for s in steps if not s["num_prefill_tokens"]]
        totals[(mode, tree)].append(sum(s["dt"] for s in decode))
        for s in decode:
            pooled[(mode, tree)][s["num_decode_tokens"] // 16 * 16].append(s["dt"] * 1e3)
    for mode, tree in sorted(pooled):
        buckets = pooled[(mode, tree)]
        cells = [
            f"{b}-{b + 15}: {statistics.median(v):6.1f} ms ({len(v)})"
            for b, v in sorted(buckets.items())
        ]
        runs = ", ".join(f"{t:.2f}" for t in totals[(mode, tree)])
        print(f"{mode:9} {tree:8} decode-only s per run [{runs}] | " + " | ".join(cells))


if __name__ == "__main__":
    main()
