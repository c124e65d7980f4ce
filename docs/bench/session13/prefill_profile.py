"""Where the prefill of one ~2,000-token prompt goes, by call (cProfile's own time per function:
the C++ and aten calls are leaves, so their time is theirs alone), per mode. Session 13.

    .venv/bin/python docs/bench/session13/prefill_profile.py fp32 int8
"""

import cProfile
import pstats
import sys

from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

MODES = {
    "fp32": {},
    "bf16": {"dtype": "bfloat16"},
    "int8": {"quantization": "int8"},
}
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
for mode in sys.argv[1:]:
    core = InferenceEngine(model="smollm2", **MODES[mode]).new_core(kv_cache_memory=1.0)
    for r in range(2):  # the first prompt warms up
        core.add_request(str(r), [100 + (r * 7919 + 31 * j) % 40000 for j in range(2000)], params)
        profile = cProfile.Profile()
        profile.enable()
        while core.has_unfinished():
            core.step()
        profile.disable()
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
    print(f"{mode}: {total * 1000:.0f} ms in all")
    for (file, line, name), (_, calls, own, *_) in rows[:8]:
        where = name if file == "~" else f"{file.split('roseinfer/')[-1]}:{line} {name}"
        print(f"  {own * 1000:7.0f} ms {own / total:6.1%}  {calls:5d} calls  {where}")
