"""torch.profiler breakdown of decode steps (which ops the step's time goes to).

.venv/bin/python benchmarks/profile_step.py --batch-size 32 [--quantization int8] [--enforce-eager]
"""

from __future__ import annotations

import argparse

from decoding import decoding_core
from torch.profiler import ProfilerActivity, profile

from roseinfer.engine import InferenceEngine


def main() -> None:
    parser = argparse.ArgumentParser(
        allow_abbrev=False,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quantization", default="none")
    parser.add_argument("--enforce-eager", action="store_true")
    args = parser.parse_args()
    engine = InferenceEngine(
        dtype="bfloat16", quantization=args.quantization, enforce_eager=args.enforce_eager
    )
    core = decoding_core(engine, args.batch_size)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(args.steps):
            core.step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=20))


if __name__ == "__main__":
    main()
