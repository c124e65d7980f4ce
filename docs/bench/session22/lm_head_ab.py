"""SmolLM2's tied LM head (49152 x 576) through small_batch_linear at two revisions, in turns
(kernel_ab.py's build of int8_linear.cpp; 40 turns, medians), from the repository root:

    .venv/bin/python docs/bench/session22/lm_head_ab.py 6b05c0a 427cdd9 4,8,16,20,24 bfloat16,float32
"""

import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from kernel_ab import build, turns  # noqa: E402

revs, rows, dts = sys.argv[1:3], [int(r) for r in sys.argv[3].split(",")], sys.argv[4].split(",")
with tempfile.TemporaryDirectory() as tmp:
    mods = {rev: build("linears", rev, tmp) for rev in revs}
    for dt in dts:
        w = (torch.randn(49152, 576) * 0.02).to(getattr(torch, dt))
        for m in rows:
            x = torch.randn(m, 576).to(w.dtype)
            res = turns(mods, {"lm": lambda mod, x=x, w=w: mod.small_batch_linear(x, w, None)}, 40)
            print(
                f"{dt} rows {m:3d}: "
                + "  ".join(f"{rev} {res[(rev, 'lm')] * 1e3:6.2f} ms" for rev in mods),
                flush=True,
            )
