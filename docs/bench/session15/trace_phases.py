"""Where `roseinfer bench throughput --trace-json F` spent its steps: prefill-only, mixed
(prefill chunks with decodes) and decode-only steps, and the decode-only steps' median time by
batch size.

    python docs/bench/session15/trace_phases.py docs/bench/session15/throughput_int8_kv8_trace.json
"""

import collections
import json
import statistics
import sys


def main() -> None:
    steps = json.load(open(sys.argv[1]))["steps"]
    kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0, 0])
    for s in steps:
        p, d = s["num_prefill_tokens"], s["num_decode_tokens"]
        k = kinds["mixed" if p and d else "prefill" if p else "decode"]
        k[0] += 1
        k[1] += s["dt"]
        k[2] += p
        k[3] += d
    for name, (n, seconds, p, d) in kinds.items():
        print(f"{name}: {n} steps, {seconds:.2f} s, {p} prompt and {d} decode tokens")
    by_batch = collections.defaultdict(list)
    for s in steps:
        if not s["num_prefill_tokens"]:
            by_batch[s["num_decode_tokens"] // 8 * 8].append(s["dt"] * 1e3)
    for b in sorted(by_batch):
        print(
            f"decode batch {b}-{b + 7}: {len(by_batch[b])} steps, median {statistics.median(by_batch[b]):.1f} ms"
        )


if __name__ == "__main__":
    main()
