"""Resident memory after loading SmolLM2 in bf16 (no KV cache yet) with `DPBF16_ROWS_ON_AMX` =
ROWS (0: no copy of the weights for `dpbf16_linear`).

    .venv/bin/python docs/bench/session65/resident.py 0; ... resident.py 2
"""

import sys

from roseinfer.backends import cpu_linear

cpu_linear.DPBF16_ROWS_ON_AMX = int(sys.argv[1])
from roseinfer.engine import InferenceEngine  # noqa: E402

engine = InferenceEngine(model="smollm2", dtype="bfloat16")
rss = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1e6
print(f"DPBF16_ROWS_ON_AMX={sys.argv[1]}: resident {rss:.2f} GB")
