"""One DRY row's cost a step (`DryState.penalties`, CPU): the first call on a sequence (its runs
by the Z-algorithm) and the mean of 50 steps after it, one token appended each, for windows of
random tokens (vocabularies of 49,152 and 2,000), a loop of one 200-token run, and one token
repeated; breakers: a single-token one every 97th id.

    .venv/bin/python docs/bench/session65/dry_step.py
"""

import random
import time

import torch

from roseinfer.dry_params import DryPenalty
from roseinfer.layers.dry import DryBreakers, DryState

rng = random.Random(0)
cases = [(500, 49152, ""), (4000, 49152, ""), (4000, 2000, ""), (4000, 49152, "loop200"),
         (4000, 49152, "same"), (8000, 49152, "same")]  # fmt: skip
for n, vocab, kind in cases:
    toks = [rng.randrange(vocab) for _ in range(n)]
    if kind == "loop200":
        toks = toks[:200] * (n // 200)
    if kind == "same":
        toks = [7] * n
    breakers = DryBreakers({t: ((),) for t in range(0, 49152, 97) if t != 7})
    state = DryState(DryPenalty(0.8), breakers, torch.device("cpu"))
    start = time.perf_counter()
    state.penalties(toks)
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(50):
        new = toks[-200] if kind == "loop200" else 7 if kind == "same" else rng.randrange(vocab)
        toks.append(new)
        state.penalties(toks)
    step = (time.perf_counter() - start) / 50
    print(
        f"{n} tokens, vocab {vocab} {kind}: first {first * 1e3:.1f} ms, then {step * 1e6:.0f} µs/step"
    )
