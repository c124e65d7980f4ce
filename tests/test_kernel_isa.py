"""The kernels built for a narrower instruction set than this CPU's (`$ROSEINFER_KERNEL_ISA`,
`roseinfer/kernels/build.py`): the paths of hosts without AVX-512, without AVX512-BF16 and VNNI,
or without AMX (AMD Zen 4 and 5) run and are tested on this one. The CI hosts have AVX-512, so
without these builds the AVX2 paths (AMD Zen 2 and 3) would run on no host of the suite, and on
an AMX host the engine's layers would never take the AVX512-BF16 hosts' kernels."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from roseinfer.kernels import build, load_cpu_kernels
from roseinfer.loader import resolve_dtype

REPO = Path(__file__).resolve().parents[1]

# The tests that load the kernels and check them against PyTorch, the reference backend and
# transformers (one build's run: ~15 s here, after the build's ~1 min).
KERNEL_TESTS = (
    "tests/test_kernels.py", "tests/test_gated_linear.py", "tests/test_kernel_out.py",
    "tests/test_decode_stack.py", "tests/test_linear.py", "tests/test_backends.py",
    "tests/test_model_parity.py",
)  # fmt: skip


def run_with_isa(isa: str, *args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, build.ISA_ENV: isa}
    if isa in build.ISA_BUILDS:
        # aten's own vectorised ops held to the same set, and the kernels' choices by the CPU's
        # maker made as on a host of that kind (`host_env`). oneDNN is left as it is:
        # ONEDNN_MAX_CPU_ISA=AVX2 refuses the bf16 weights that torch's own checks, which read
        # the CPU, let through.
        env.update(build.ISA_BUILDS[isa].host_env)
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=timeout_s,
    )  # fmt: skip


def test_an_isa_build_takes_extensions_away_from_native() -> None:
    native = build.kernel_sources("native")
    assert native == build.NATIVE_KERNELS
    for isa, wanted in build.ISA_BUILDS.items():
        if not set(wanted.needs) <= build.cpu_flags():
            continue
        spec = build.kernel_sources(isa)
        # The same flags at -O1 (these builds are the suite's, and compile ~25 % faster).
        assert (
            spec.cflags
            == tuple("-O1" if flag == "-O3" else flag for flag in native.cflags) + wanted.off
        )
        assert spec.name == f"{native.name}_{isa}" and spec.sources == native.sources
        assert build.build_key(spec) != build.build_key(native)


def test_an_isa_this_cpu_cannot_run_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_cpu_flags", lambda: "flags\t: fpu sse2 avx avx2 fma f16c")
    assert "-mno-avx512f" in build.kernel_sources("avx2").cflags
    with pytest.raises(ValueError, match="avx512: this CPU lacks avx512f, avx512bw"):
        build.kernel_sources("avx512")


def test_an_isa_build_hides_the_cpu_flags_it_takes_away(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--dtype auto` then chooses as on a host of that kind: fp32 without AVX512-BF16."""
    line = "flags\t: fpu avx2 fma f16c avx512f avx512bw avx512_vnni avx512_bf16 amx_tile amx_bf16"
    monkeypatch.setattr(build, "_cpu_flags", lambda: line)
    monkeypatch.setattr(build, "ISA", "native")
    assert "amx_bf16" in build.cpu_flags() and resolve_dtype("auto", "cpu") == torch.bfloat16
    monkeypatch.setattr(build, "ISA", "avx512_bf16")
    assert build.cpu_flags() == {
        "fpu", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16"
    }  # fmt: skip
    assert resolve_dtype("auto", "cpu") == torch.bfloat16
    monkeypatch.setattr(build, "ISA", "avx512")
    assert build.cpu_flags() == {"fpu", "avx2", "fma", "f16c", "avx512f", "avx512bw"}
    assert resolve_dtype("auto", "cpu") == torch.float32
    monkeypatch.setattr(build, "ISA", "avx2")
    assert build.cpu_flags() == {"fpu", "avx2", "fma", "f16c"}
    assert resolve_dtype("auto", "cpu") == torch.float32


def test_an_unknown_isa_stops_the_import_naming_it() -> None:
    """A value the build does not know is never a native build in disguise, nor the plain
    PyTorch path that a failed build falls back to."""
    with pytest.raises(ValueError, match="ROSEINFER_KERNEL_ISA='sse4': expected native, avx512"):
        build.kernel_sources("sse4")
    load = "from roseinfer.kernels import load_cpu_kernels; load_cpu_kernels()"
    done = run_with_isa("sse4", "-c", load, timeout_s=120)
    assert done.returncode != 0
    assert "ROSEINFER_KERNEL_ISA='sse4'" in done.stderr


@pytest.mark.parametrize("isa", list(build.ISA_BUILDS))
def test_the_kernel_tests_pass_in_a_narrower_build(isa: str) -> None:
    """The kernel, stack and parity tests in a subprocess whose kernels are built for `isa`: its
    paths are checked as on a host of that kind (the build's own vector width and kernels)."""
    wanted, flags = build.ISA_BUILDS[isa], build.cpu_flags()
    if not set(wanted.needs) <= flags:
        pytest.skip(
            f"this CPU, as this process's build sees it, lacks {sorted(set(wanted.needs) - flags)}"
        )
    if not any(flag.startswith(wanted.hides) for flag in flags):
        pytest.skip(f"this process's own build is already the {isa} one: the suite runs its paths")
    if load_cpu_kernels() is None:
        pytest.skip("no C++ kernels here (no compiler, or not x86-64): nothing to build narrower")
    compiler = os.environ.get("CXX") or shutil.which("c++") or "g++"
    takes = subprocess.run([compiler, "-march=native", *wanted.off, "-E", "-x", "c++", "-"],
                           input="", capture_output=True, text=True, timeout=60)  # fmt: skip
    if takes.returncode != 0:  # GCC before 11 knows no -mno-amx-*
        pytest.skip(f"{compiler} does not take {' '.join(wanted.off)}: {takes.stderr[:200]}")
    probe = (
        "from roseinfer.kernels import load_cpu_kernels; k = load_cpu_kernels(); "
        "print(k.vector_lanes(), k.dpbf16_linear_available(), k.vnni_int8_linear_available(), "
        "k.amx_linear_available()); from roseinfer.loader import resolve_dtype; "
        "print(resolve_dtype('auto', 'cpu'), k.bf16_pairs_by_fma(), k.prefetch_once_pays())"
    )
    built = run_with_isa(isa, "-c", probe, timeout_s=1200)  # the build, on a first run: minutes
    assert built.returncode == 0, built.stderr[-3000:]
    lanes = "8" if isa == "avx2" else "16"
    bf16 = isa == "avx512_bf16"  # AVX512-BF16 and VNNI kept, AMX taken away
    seen = built.stdout.split()
    assert seen[:5] == [
        lanes, str(bf16), str(bf16), "False", "torch.bfloat16" if bf16 else "torch.float32"
    ]  # fmt: skip
    if bf16:  # as on AMD's CPUs: vdpbf16ps products (the pairs tile), prefetchnta
        assert seen[5:] == ["False", "True"]
    # SmolLM2's own parity tests (a minute) left to the native build: the tiny models' parity
    # with transformers runs these paths all the same.
    tests = run_with_isa(isa, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not smollm2",
                         *KERNEL_TESTS, timeout_s=900)  # fmt: skip
    assert tests.returncode == 0, tests.stdout[-6000:]
    assert " passed" in tests.stdout.splitlines()[-1]
