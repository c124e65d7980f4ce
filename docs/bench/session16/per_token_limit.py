"""Prefill steps with few keys in all: every token through the decode kernel (one query each,
the decoder stack running the step as one C++ call) against the chunks through the prefill
kernel, by `PER_TOKEN_MAX_KEYS` set to 10**9 (always per token) or 0 (never), in turns. Each case
is prompts added together and run to their first token (one step when they fit the token
budget), new prompts each time; median of 4 rounds after a warm-up, ms.

    PYTHONPATH=. .venv/bin/python docs/bench/session16/per_token_limit.py
"""

import statistics
import time

import roseinfer.backends.cpu_attention as cpu_attention
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

MODES = {"fp32": ({}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}
CASES = {"7x70": (7, 70), "16x32": (16, 32), "2x200": (2, 200), "1x300": (1, 300),
         "1x320": (1, 320), "1x512": (1, 512)}  # fmt: skip
LIMITS = {"per token": 10**9, "prefill kernel": 0}


def keys(n: int, length: int) -> int:
    return n * length * (length + 1) // 2


cores = {
    m: InferenceEngine(model="smollm2", **o).new_core(kv_cache_memory=1.0, kv_cache_dtype=kv)
    for m, (o, kv) in MODES.items()
}
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
times: dict[tuple[str, str, str], list[float]] = {}
i = 0
for rnd in range(5):  # the first round warms up
    for m, core in cores.items():
        for case, (n, length) in CASES.items():
            for limit_name, limit in LIMITS.items():
                cpu_attention.PER_TOKEN_MAX_KEYS = limit
                for _ in range(n):
                    i += 1
                    prompt = [100 + (i * 7919 + 31 * j) % 40000 for j in range(length)]
                    core.add_request(f"{i}", prompt, params)
                start = time.perf_counter()
                while core.has_unfinished():
                    core.step()
                if rnd:
                    times.setdefault((m, case, limit_name), []).append(time.perf_counter() - start)
for m in MODES:
    for case, (n, length) in CASES.items():
        row = ", ".join(
            f"{name} {statistics.median(times[m, case, name]) * 1e3:.1f} ms" for name in LIMITS
        )
        print(f"{m} {case} ({keys(n, length)} keys): {row}", flush=True)
