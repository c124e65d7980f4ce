"""A/B of session 27's Python change (`4eaa028`: the sampler's finiteness check on Python floats,
no row gather before the LM head when every row samples) against the files before it, on one
engine core at one batch size, the two forms of `Sampler.__call__`/`_sample` and
`ModelRunner._logits` swapped in step by step (the rest of the code is shared).

    PYTHONPATH=. .venv/bin/python docs/bench/session27/sampler_ab.py int8 1 [--steps 300]
"""

import argparse
import collections
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

import roseinfer.engine.model_runner as runner_module  # noqa: E402
import roseinfer.layers.sampler as sampler_module  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402

BEFORE = "a471650"


def module_at(commit: str, path: str, name: str):
    """`path` as it was at `commit`, imported as module `name`."""
    text = subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    file = os.path.join(tempfile.mkdtemp(), f"{name}.py")
    with open(file, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["int8", "bf16"])
    parser.add_argument("batch", type=int)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    old_sampler = module_at(BEFORE, "roseinfer/layers/sampler.py", "before_sampler")
    old_runner = module_at(BEFORE, "roseinfer/engine/model_runner.py", "before_runner")
    forms = {
        "before": {
            (sampler_module.Sampler, "__call__"): old_sampler.Sampler.__dict__["__call__"],
            (sampler_module.Sampler, "_sample"): old_sampler.Sampler.__dict__["_sample"],
            (runner_module.ModelRunner, "_logits"): old_runner.ModelRunner.__dict__["_logits"],
        },
        "after": {
            (sampler_module.Sampler, "__call__"): sampler_module.Sampler.__dict__["__call__"],
            (sampler_module.Sampler, "_sample"): sampler_module.Sampler.__dict__["_sample"],
            (runner_module.ModelRunner, "_logits"): runner_module.ModelRunner.__dict__["_logits"],
        },
    }
    options = {"quantization": "int8"} if args.mode == "int8" else {"dtype": "bfloat16"}
    core = decoding_core(InferenceEngine(model="smollm2", **options), args.batch, context=70,
                         max_new_tokens=2 * args.steps + 40)  # fmt: skip
    for _ in range(10):
        core.step()
    times = collections.defaultdict(list)
    for i in range(args.steps):
        for form in ("before", "after") if i % 2 else ("after", "before"):
            for (cls, attr), fn in forms[form].items():
                setattr(cls, attr, fn)
            start = time.perf_counter()
            core.step()
            times[form].append(time.perf_counter() - start)
    a, b = (statistics.median(times[f]) * 1e3 for f in ("before", "after"))
    print(f"{args.mode} batch {args.batch}: before {a:.3f} ms, after {b:.3f} ms "
          f"({b - a:+.3f} ms, {(b / a - 1) * 100:+.1f} %)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
