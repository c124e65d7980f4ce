"""How the linears ask for weights they read once (`prefetch_once_pays`, roseinfer/kernels/vec.h):
prefetchnta on AMD CPUs, where it keeps L2 for the step's code and activations, prefetcht1 on
Intel's, where prefetchnta's lines skip L2 and leave L3 (BENCHMARKS.md, session 61).
`$ROSEINFER_PREFETCH_ONCE` (nta, l2) overrides it for A/B runs; either way the sums are the
same, bit for bit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from roseinfer.kernels import load_cpu_kernels

REPO = Path(__file__).resolve().parents[1]

# In a subprocess: whether it asks with prefetchnta, then the packed linears' outputs at 1, 8 and
# 32 rows (the rows that read each weight once) into the file named by argv[1].
PROBE = """
import sys, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
torch.manual_seed(0)
w = torch.randn(96, 576).bfloat16()
scale = (w.float().abs().amax(1) / 127).bfloat16()
q = torch.round(w.float() / scale.float()[:, None]).clamp(-127, 127).to(torch.int8)
out = {}
for rows in (1, 8, 32):
    x = torch.randn(rows, 576).bfloat16()
    if k.dpbf16_linear_available():
        out[f"dpbf16_{rows}"] = k.dpbf16_linear(x, k.dpbf16_pack_weight(w))
    if k.vnni_int8_linear_available():
        out[f"vnni_{rows}"] = k.vnni_int8_linear(x, k.vnni_pack_weight(q), scale)
torch.save(out, sys.argv[1])
print(k.prefetch_once_pays())
"""


@pytest.fixture(scope="module")
def kernels():
    k = load_cpu_kernels()
    if k is None:
        pytest.skip("no C++ kernels on this machine")
    if not (k.dpbf16_linear_available() or k.vnni_int8_linear_available()):
        pytest.skip("neither AVX512-BF16 nor AVX512-VNNI here: no linear asks for weights once")
    return k


def probe(tmp_path: Path, choice: str | None) -> tuple[str, dict[str, torch.Tensor]]:
    env = {k: v for k, v in os.environ.items() if k != "ROSEINFER_PREFETCH_ONCE"}
    if choice is not None:
        env["ROSEINFER_PREFETCH_ONCE"] = choice
    path = tmp_path / f"{choice}.pt"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(path)], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1], torch.load(path)


def cpu_vendor() -> str:
    with open("/proc/cpuinfo") as f:
        return next((line.split(":")[1].strip() for line in f if line.startswith("vendor_id")), "")


def test_the_choice_follows_the_cpu_maker_and_the_override(kernels, tmp_path: Path) -> None:
    on_amd = cpu_vendor() == "AuthenticAMD"
    assert kernels.prefetch_once_pays() == on_amd
    nta, nta_out = probe(tmp_path, "nta")
    l2, l2_out = probe(tmp_path, "l2")
    assert (nta, l2) == ("True", "False")
    assert nta_out.keys() == l2_out.keys() and nta_out
    for name, y in nta_out.items():
        assert torch.equal(y, l2_out[name]), name


def test_an_unknown_choice_stops_the_import_naming_it() -> None:
    env = {**os.environ, "ROSEINFER_PREFETCH_ONCE": "t0"}
    load = "from roseinfer.kernels import load_cpu_kernels; load_cpu_kernels()"
    done = subprocess.run(
        [sys.executable, "-c", load], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "ROSEINFER_PREFETCH_ONCE='t0': expected nta or l2" in done.stderr
