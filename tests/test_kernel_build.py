"""The C++ kernels' build machinery (`roseinfer/kernels/build.py`), without a real build: torch's
`load` is replaced by a fake, and ninja runs `sleep` commands."""

from __future__ import annotations

import logging
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from torch.utils import cpp_extension

from roseinfer.kernels import build
from roseinfer.kernels.build import KERNELS, KernelSources

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KernelSources:
    """A one-file extension, built under a private $TORCH_EXTENSIONS_DIR by a fake `load` that
    checks what the real one would trip on and writes the library."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cpp").write_text('#include "k.h"\n')
    (src / "k.h").write_text("// header\n")
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))

    def fake_load(name: str, sources: list[str], build_directory: str, **_: object) -> object:
        assert not os.path.exists(os.path.join(build_directory, "lock")), "torch would hang here"
        assert isinstance(cpp_extension.subprocess, build._SubprocessDyingWithUs)
        assert all(s.startswith(build_directory) for s in sources)  # the copies, not the checkout
        Path(build_directory, f"{name}.so").write_bytes(b"")
        return types.ModuleType(name)

    monkeypatch.setattr(cpp_extension, "load", fake_load)
    return KernelSources(src_dir=str(src), sources=("k.cpp",), headers=("k.h",))


def test_build_key_follows_content_not_path(tmp_path: Path) -> None:
    copies = []
    for name in ("a", "b", "c"):
        shutil.copytree(KERNELS.src_dir, tmp_path / name, ignore=shutil.ignore_patterns("*.py*"))
        copies.append(replace(KERNELS, src_dir=str(tmp_path / name)))
    assert build.build_key(copies[0]) == build.build_key(copies[1]) == build.build_key(KERNELS)
    header = tmp_path / "c" / "vec.h"
    data = bytearray(header.read_bytes())
    data[-2] ^= 1
    header.write_bytes(bytes(data))
    assert build.build_key(copies[2]) != build.build_key(copies[0])


def test_build_key_follows_the_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """$CXX picks torch's compiler: another one gets a build of its own."""
    keys = []
    for cxx in (None, "/usr/bin/g++", "/opt/gcc/bin/g++"):
        if cxx is None:
            monkeypatch.delenv("CXX", raising=False)
        else:
            monkeypatch.setenv("CXX", cxx)
        build.build_key.cache_clear()
        keys.append(build.build_key(KERNELS))
    build.build_key.cache_clear()
    assert len(set(keys)) == 3


def test_stale_torch_lock_is_removed(spec: KernelSources, caplog: pytest.LogCaptureFixture) -> None:
    directory = build.build_dir(spec)
    os.makedirs(directory)
    Path(directory, "lock").write_text("")  # what a build killed inside torch's `load` leaves
    assert not build.kernels_are_built(spec)
    with caplog.at_level(logging.INFO, logger=build.__name__):
        assert build.load_kernels(spec).__name__ == f"roseinfer_cpu_kernels_{build.build_key(spec)}"
    assert "removing a stale build lock" in caplog.text
    assert "compiling the C++ kernels" in caplog.text
    assert build.kernels_are_built(spec)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=build.__name__):
        build.load_kernels(spec)
    assert caplog.text == ""  # a cached build loads without a word


def test_waiter_times_out_on_a_live_holder(
    spec: KernelSources, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    lock = build.build_dir(spec) + ".lock"
    os.makedirs(os.path.dirname(lock), exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, lock], stdout=subprocess.PIPE, text=True
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        monkeypatch.setenv(build.TIMEOUT_ENV, "1")
        started = time.monotonic()
        with pytest.raises(TimeoutError, match=f"pid {holder.pid} .* delete {lock}"):
            build.load_kernels(spec)
        assert 1 <= time.monotonic() - started < 10
        assert f"waiting for another process building the C++ kernels (pid {holder.pid}" in (
            caplog.text
        )
    finally:
        holder.kill()  # the flock goes with it: the next load needs nothing removed
        holder.wait()
    build.load_kernels(spec)
    assert build.kernels_are_built(spec)


_HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, f"{os.getpid()}\\n".encode())
print("locked", flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 kernels only")
def test_load_cpu_kernels_falls_back_on_a_build_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from roseinfer.kernels import load_cpu_kernels

    def timed_out() -> None:
        raise TimeoutError("gave up waiting; delete /x/y.lock")

    monkeypatch.setattr(build, "load_kernels", timed_out)
    assert load_cpu_kernels.__wrapped__() is None
    assert "delete /x/y.lock); using the plain PyTorch path" in caplog.text


# SIGINT as at a terminal: a process started in the background by a non-interactive shell (a CI
# runner, `cmd &`) inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler.
_BUILD = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from torch.utils import cpp_extension
from roseinfer.kernels.build import _ninja_dies_with_us
with _ninja_dies_with_us(cpp_extension):
    cpp_extension._run_ninja_build(sys.argv[1], False, "building")
"""


@pytest.mark.skipif(shutil.which("ninja") is None or sys.platform != "linux", reason="no ninja")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_build_leaves_no_compiler(tmp_path: Path, sig: signal.Signals) -> None:
    """torch's ninja step, run as a build runs it, with two `sleep`s for compilers; the Python
    process is SIGKILLed (OOM, `kill -9`) or interrupted (SIGINT to it alone)."""
    marker = f"600.{os.getpid()}{sig.value}"
    (tmp_path / "build.ninja").write_text(
        f"rule slow\n  command = sleep {marker}\nbuild a: slow\nbuild b: slow\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "MAX_JOBS": "2"}
    builder = subprocess.Popen([sys.executable, "-c", _BUILD, str(tmp_path)], env=env)
    try:
        assert _wait_for(lambda: len(_running(marker)) >= 2, 60), "the sleeps never started"
        builder.send_signal(sig)
        builder.wait(10)
        assert _wait_for(lambda: not _running(marker), 10), _running(marker)
    finally:
        builder.kill()
        builder.wait()
        for pid in _running(marker):  # what this test started, should the guard fail
            os.kill(pid, signal.SIGKILL)


def _running(marker: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path("/proc", entry, "cmdline").read_bytes():
                pids.append(int(entry))
        except OSError:  # exited meanwhile
            pass
    return pids


def _wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_sources_include_atens_headers_not_torchs_whole_api() -> None:
    """`<torch/extension.h>` (autograd, nn, pybind11) took ~17 s to parse in each of the
    kernels' files, most of a build's time (BENCHMARKS.md, session 58): they take ATen's
    (`aten.h`), and only bindings.cpp torch's pybind11 header."""
    spec = build.NATIVE_KERNELS
    for name in spec.sources + spec.headers:
        text = Path(spec.src_dir, name).read_text()
        includes = [line for line in text.splitlines() if line.startswith("#include <torch/")]
        wanted = ["#include <torch/csrc/utils/pybind.h>"] if name == "bindings.cpp" else []
        assert includes == wanted, name
