"""The kernels' choices by the CPU's maker (roseinfer/kernels/vec.h; BENCHMARKS.md, session 61):

- `prefetch_once_pays`: weights a linear reads once asked for with prefetchnta on AMD CPUs, where
  it keeps L2 for the step's code and activations; with prefetcht1 on Intel's, where
  prefetchnta's lines skip L2 and leave L3. The sums are the same, bit for bit.
- `bf16_pairs_by_fma`: `dpbf16_linear` multiplies by fp32 FMAs on widened weights on Intel CPUs,
  whose vdpbf16ps runs at half their FMAs' products, and the prefill attention takes its fp32
  tile there; by vdpbf16ps (the pairs tile) on AMD's.

`$ROSEINFER_PREFETCH_ONCE` (nta, l2) and `$ROSEINFER_BF16_PAIRS` (dpbf16, fma) override them;
the other maker's path runs here under them, so that both are tested on either host."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from roseinfer.kernels import build, load_cpu_kernels

REPO = Path(__file__).resolve().parents[1]

# In a subprocess: the two choices, then the packed linears' outputs at 1, 8 and 32 rows (the
# rows that read each weight once) into the file named by argv[1].
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
print(k.prefetch_once_pays(), k.bf16_pairs_by_fma())
"""

# The tests of dpbf16_linear, the layers built on it, and the prefill attention's choice of tile.
DPBF16_TESTS = (
    "tests/test_dpbf16_linear.py",
    "tests/test_gated_linear.py",
    "tests/test_kernels.py::test_prefill_tiles_where_they_apply",
    "tests/test_kernels.py::test_bf16_prefill_rounds_its_weights_to_bf16_where_the_cpu_has_avx512_bf16",
)


@pytest.fixture(scope="module")
def kernels():
    k = load_cpu_kernels()
    if k is None:
        pytest.skip("no C++ kernels on this machine")
    if not (k.dpbf16_linear_available() or k.vnni_int8_linear_available()):
        pytest.skip("neither AVX512-BF16 nor AVX512-VNNI here: no kernel makes these choices")
    return k


def run(env_choices: dict[str, str], *args: str, timeout_s: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in build.MAKER_CHOICES}
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env={**env, **env_choices}, capture_output=True,
        text=True, timeout=timeout_s,
    )  # fmt: skip


def probe(tmp_path: Path, choice: str) -> tuple[str, dict[str, torch.Tensor]]:
    path = tmp_path / f"{choice}.pt"
    done = run({"ROSEINFER_PREFETCH_ONCE": choice}, "-c", PROBE, str(path), timeout_s=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1], torch.load(path)


def cpu_vendor() -> str:
    with open("/proc/cpuinfo") as f:
        return next((line.split(":")[1].strip() for line in f if line.startswith("vendor_id")), "")


def test_the_choices_follow_the_cpu_maker(kernels) -> None:
    on_amd = cpu_vendor() == "AuthenticAMD"
    assert kernels.prefetch_once_pays() == on_amd
    assert kernels.bf16_pairs_by_fma() == (not on_amd)


def test_the_prefetch_override_is_taken_and_the_sums_do_not_change(kernels, tmp_path) -> None:
    nta, nta_out = probe(tmp_path, "nta")
    l2, l2_out = probe(tmp_path, "l2")
    assert (nta.split()[0], l2.split()[0]) == ("True", "False")
    assert nta_out.keys() == l2_out.keys() and nta_out
    for name, y in nta_out.items():
        assert torch.equal(y, l2_out[name]), name


def test_the_other_makers_bf16_products_pass_the_dpbf16_tests(kernels) -> None:
    """The vdpbf16ps path on Intel hosts, the FMA path on AMD's: the same tests in a subprocess
    under the override (~5 s once the kernels are built)."""
    if not kernels.dpbf16_linear_available():
        pytest.skip("no AVX512-BF16 on this CPU: no dpbf16_linear")
    other = "dpbf16" if kernels.bf16_pairs_by_fma() else "fma"
    done = run({"ROSEINFER_BF16_PAIRS": other}, "-m", "pytest", "-q", *DPBF16_TESTS, timeout_s=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


@pytest.mark.parametrize(
    "name,value", [("ROSEINFER_PREFETCH_ONCE", "t0"), ("ROSEINFER_BF16_PAIRS", "amx")]
)
def test_an_unknown_choice_stops_the_import_naming_it(name: str, value: str) -> None:
    load = "from roseinfer.kernels import load_cpu_kernels; load_cpu_kernels()"
    done = run({name: value}, "-c", load, timeout_s=120)
    assert done.returncode != 0
    expected = " or ".join(build.MAKER_CHOICES[name])
    assert f"{name}={value!r}: expected {expected}" in done.stderr
