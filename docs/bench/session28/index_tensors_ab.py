"""The runner's index tensors through `torch.frombuffer` over an `array` (and the decode kernel's
indices used as they are in all-decode steps, no slices) against `torch.tensor` of lists and
three slices: the two forms of `ModelRunner.prepare` and `KernelPagedAttention.prepare`
swapped in step by step on one engine core.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/index_tensors_ab.py int8|bf16 BATCH STEPS [old|new]

With `old` or `new` as the last argument, the methods of that form run alone (the other form is
read from `git show 1ef2d54:...` when the tree holds the new one).
"""

import os
import statistics
import subprocess
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

import roseinfer.backends.cpu_attention as cpu_attention  # noqa: E402
import roseinfer.engine.model_runner as model_runner  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402

BASE = "1ef2d54"


def methods_at(commit: str) -> tuple[object, object]:
    """ModelRunner.prepare and KernelPagedAttention.prepare as they were at `commit`."""
    found = []
    for module, cls, path in (
        (model_runner, "ModelRunner", "roseinfer/engine/model_runner.py"),
        (cpu_attention, "KernelPagedAttention", "roseinfer/backends/cpu_attention.py"),
    ):
        source = subprocess.run(
            ["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
        ).stdout
        namespace = dict(vars(module))
        exec(compile(source, path, "exec"), namespace)  # noqa: S102
        found.append(namespace[cls].prepare)
    return found[0], found[1]


mode, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
options = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(
    InferenceEngine(model="smollm2", **options), batch, context=70, max_new_tokens=2 * steps + 40
)
runner, attention = core.runner, core.runner.backend.attention
forms = {
    "old": methods_at(BASE),
    "new": (model_runner.ModelRunner.prepare, cpu_attention.KernelPagedAttention.prepare),
}


def use(form: str) -> None:
    run_prepare, attention_prepare = forms[form]
    runner.prepare = types.MethodType(run_prepare, runner)
    attention.prepare = types.MethodType(attention_prepare, attention)


for _ in range(10):
    core.step()
times: dict[str, list[float]] = {"old": [], "new": []}
for i in range(steps):
    for form in ("old", "new") if i % 2 else ("new", "old"):
        use(form)
        start = time.perf_counter()
        core.step()
        times[form].append(time.perf_counter() - start)
a, b = (statistics.median(times[f]) * 1e3 for f in ("old", "new"))
print(f"{mode} batch {batch}: old {a:.3f} ms, new {b:.3f} ms ({(b / a - 1) * 100:+.1f} %)")
