"""Build the C++ kernels once per machine, under a lock that cannot hang.

torch's `cpp_extension.load` alone names the build directory by the extension's name, writes the
sources' absolute paths into `build.ninja` (a checkout at another path rebuilds every object) and
serializes builders with a `lock` file that a killed build leaves behind for the next start to
wait on forever. Here the directory is named by a hash of what the library depends on, with the
sources copied into it (checkouts with the same sources share one build, a changed byte gets a
new one); builders serialize on `flock`, which dies with its holder, so a torch `lock` found by
the holder is stale; and ninja, which kills its compilers on SIGTERM, gets SIGTERM when we die.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import hashlib
import logging
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import torch

logger = logging.getLogger(__name__)

TIMEOUT_ENV = "ROSEINFER_KERNEL_BUILD_TIMEOUT"  # seconds to wait for another process's build
_DEFAULT_TIMEOUT_S = 15 * 60
_BUILT_MARKER = "roseinfer_built"  # written once the library has been built and imported


@dataclass(frozen=True)
class KernelSources:
    """What a build compiles: files in `src_dir`, and the flags they are compiled with."""

    src_dir: str
    sources: tuple[str, ...]
    headers: tuple[str, ...]
    cflags: tuple[str, ...] = ("-O3", "-march=native", "-fopenmp")
    ldflags: tuple[str, ...] = ("-fopenmp",)
    name: str = "roseinfer_cpu_kernels"


NATIVE_KERNELS = KernelSources(
    src_dir=os.path.dirname(os.path.abspath(__file__)),
    sources=(
        "bindings.cpp", "paged_attention.cpp", "prefill_attention.cpp", "fused_ops.cpp",
        "sampling.cpp",
        "int8_linear.cpp", "amx_linear.cpp", "vnni_linear.cpp", "dpbf16_linear.cpp",
        "decode_stack.cpp", "parallel.cpp",
    ),
    headers=(
        "aten.h", "vec.h", "lane_rows.h", "decode_stack.h", "ops.h", "attention_kv.h", "attention_avx512.h",
        "attention_avx512_pairs.h", "attention_amx.h", "attention_avx2.h", "attention_tasks.h", "prefill_attention.h",
        "prefill_dpbf16.h", "tile_tasks.h", "rotary.h", "parallel.h", "amx.h", "prefill_amx.h", "line_storage.h",
    ),
)  # fmt: skip

ISA_ENV = "ROSEINFER_KERNEL_ISA"


@dataclass(frozen=True)
class IsaBuild:
    """A build for a narrower instruction set than this CPU's: the compiler flags that take
    extensions away from -march=native, the CPU flags the build still needs, the prefixes of
    those the process then acts as if the CPU lacked (`cpu_flags`), and the environment that
    makes a process act further as such a host does (the suite's runs of the build set it):
    aten's `ATEN_CPU_CAPABILITY`, and the choices by the CPU's maker (`MAKER_CHOICES`) that such
    hosts make."""

    off: tuple[str, ...]
    needs: tuple[str, ...]
    hides: tuple[str, ...]
    host_env: tuple[tuple[str, str], ...]


# The narrower builds exist so that the suite runs other hosts' paths: compiled at -O1, the same
# intrinsics and so the same paths, in ~25 % less time (a clean clone's suite pays both builds,
# 72 → 54 s each on 2 cores; their tests take the same 17 s: BENCHMARKS.md, session 62).
_ISA_OPT = "-O1"
# GCC 12 keeps __AMX_BF16__ and __AMX_INT8__ defined without amx-tile: each goes by name.
_NO_AMX = ("-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16")
_AVX512 = ("avx512f", "avx512bw", "avx512vl", "avx512dq")
# So that the paths of other hosts run and are tested here: "avx2" as on CPUs without AVX-512
# (AMD Zen 2 and 3), "avx512" as on those with AVX-512 but without AVX512-BF16, VNNI or AMX
# (Intel Skylake-SP), "avx512_bf16" as on AMD's with AVX512-BF16 and VNNI but without AMX (Zen 4
# and 5: bf16 linears by `dpbf16_linear`'s vdpbf16ps, int8 by `vnni_int8_linear`, the prefill
# attention's pairs tile; on an AMX host otherwise only the kernels' own tests call them, not
# the engine's layers and backends).
ISA_BUILDS = {
    "avx512_bf16": IsaBuild(
        off=_NO_AMX, needs=(*_AVX512, "avx512_bf16", "avx512_vnni"), hides=("amx",),
        host_env=(("ATEN_CPU_CAPABILITY", "avx512"), ("ROSEINFER_BF16_PAIRS", "dpbf16"),
                  ("ROSEINFER_PREFETCH_ONCE", "nta")),
    ),
    "avx512": IsaBuild(
        off=("-mno-avx512bf16", "-mno-avx512vnni", *_NO_AMX), needs=_AVX512,
        hides=("avx512_bf16", "avx512_vnni", "amx"), host_env=(("ATEN_CPU_CAPABILITY", "avx512"),),
    ),
    "avx2": IsaBuild(
        off=("-mno-avx512f", *_NO_AMX), needs=("avx2", "fma", "f16c"), hides=("avx512", "amx"),
        host_env=(("ATEN_CPU_CAPABILITY", "avx2"),),
    ),
}  # fmt: skip


def kernel_sources(isa: str) -> KernelSources:
    """The kernels built for `isa` ("native" or a key of ISA_BUILDS) on this CPU; ValueError
    where the value is unknown or this CPU cannot run such a build."""
    if isa == "native":
        return NATIVE_KERNELS
    if isa not in ISA_BUILDS:
        raise ValueError(f"{ISA_ENV}={isa!r}: expected native, {', '.join(ISA_BUILDS)}")
    build = ISA_BUILDS[isa]
    flags = _cpu_flag_names()
    missing = [flag for flag in build.needs if flag not in flags]
    if missing:
        raise ValueError(f"{ISA_ENV}={isa}: this CPU lacks {', '.join(missing)}")
    return replace(
        NATIVE_KERNELS,
        cflags=tuple(_ISA_OPT if f == "-O3" else f for f in NATIVE_KERNELS.cflags) + build.off,
        name=f"{NATIVE_KERNELS.name}_{isa}",
    )


def _cpu_flags() -> str:
    # `-march=native` code faults on a CPU without the same extensions (a home directory shared
    # between machines), so the CPU's feature flags join the key.
    try:
        with open("/proc/cpuinfo") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return ""


def _cpu_flag_names() -> list[str]:
    return _cpu_flags().partition(":")[2].split()


# The build this process loads: $ROSEINFER_KERNEL_ISA, read once (a bad value stops the import).
ISA = os.environ.get(ISA_ENV) or "native"
KERNELS = kernel_sources(ISA)

# Choices the kernels make by the CPU's maker, read by the kernels themselves (`vec.h`'s
# `prefetch_once_pays` and `bf16_pairs_by_fma`), which these variables override for A/B runs. A
# value they do not know stops the import, naming it, rather than leaving the maker's choice in
# place unnoticed.
MAKER_CHOICES = {
    "ROSEINFER_PREFETCH_ONCE": ("nta", "l2"),
    "ROSEINFER_BF16_PAIRS": ("dpbf16", "fma"),
}
for _name, _values in MAKER_CHOICES.items():
    if os.environ.get(_name, "") not in ("", *_values):
        raise ValueError(f"{_name}={os.environ[_name]!r}: expected {' or '.join(_values)}")


def cpu_flags() -> frozenset[str]:
    """This CPU's feature flags as the process's kernel build sees them: an ISA build hides
    those it takes away, so that what is chosen from them (`--dtype auto`) is what a host of
    that kind would choose."""
    hides = ISA_BUILDS[ISA].hides if ISA in ISA_BUILDS else ()
    return frozenset(flag for flag in _cpu_flag_names() if not flag.startswith(hides))


@functools.cache
def build_key(spec: KernelSources = KERNELS) -> str:
    """Hash of everything the built library depends on, and nothing that depends on the path."""
    digest = hashlib.sha256()
    for name in spec.sources + spec.headers:
        data = _read(os.path.join(spec.src_dir, name))
        digest.update(f"{name}:{len(data)}:".encode() + data)
    # torch's install path and Python's include dir are in ninja's compile commands: a second
    # virtualenv sharing this directory would otherwise make ninja rebuild on every switch. The
    # compiler torch's builder takes ($CXX) too: a build by one that links libstdc++ statically
    # crashes (README, "C++ kernels"), and setting another must not load it again.
    context = (
        spec.cflags, spec.ldflags, torch.__version__, os.path.dirname(torch.__file__),
        sys.version, sysconfig.get_paths()["include"], _cpu_flags(), os.environ.get("CXX", ""),
    )  # fmt: skip
    digest.update(repr(context).encode())
    return digest.hexdigest()[:16]


def build_dir(spec: KernelSources = KERNELS) -> str:
    """`$TORCH_EXTENSIONS_DIR/<name>_<key>` (torch's default root when the variable is unset)."""
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if not root:  # the key holds the Python version that torch's default root adds as py311_cpu
        from torch.utils.cpp_extension import get_default_build_root

        root = get_default_build_root()
    return os.path.join(root, f"{spec.name}_{build_key(spec)}")


def kernels_are_built(spec: KernelSources = KERNELS) -> bool:
    """Whether loading the kernels only imports a cached library (else it compiles, minutes)."""
    directory = build_dir(spec)
    library = os.path.join(directory, f"{spec.name}_{build_key(spec)}.so")
    return os.path.exists(os.path.join(directory, _BUILT_MARKER)) and os.path.exists(library)


def load_kernels(spec: KernelSources = KERNELS) -> ModuleType:
    """Build (once per machine) and import the extension; raises where it cannot be built."""
    from torch.utils import cpp_extension

    directory = build_dir(spec)
    os.makedirs(directory, exist_ok=True)
    with build_lock(directory + ".lock"):
        stale = os.path.join(directory, "lock")  # torch's FileBaton; no live builder holds it
        if os.path.exists(stale):
            logger.warning("removing a stale build lock left by a killed kernel build: %s", stale)
            os.remove(stale)
        built = kernels_are_built(spec)
        if not built:
            logger.info("compiling the C++ kernels (first run on this machine, ~1 min)")
        sources = _copy_sources(spec, os.path.join(directory, "src"))
        with _ninja_dies_with_us(cpp_extension):
            module = cpp_extension.load(
                name=f"{spec.name}_{build_key(spec)}",
                sources=[s for s in sources if s.endswith(".cpp")],
                extra_cflags=list(spec.cflags),
                extra_ldflags=list(spec.ldflags),
                build_directory=directory,
                verbose=False,
            )
        if not built:
            with open(os.path.join(directory, _BUILT_MARKER), "w") as f:
                f.write(f"{module.__name__}\n")
    logger.debug("loaded the C++ kernels from %s", directory)
    return module


def _copy_sources(spec: KernelSources, dest: str) -> list[str]:
    """Copy the sources into the build directory, each rewritten only where it differs (ninja
    rebuilds what is newer than its object; a copy cut short by a kill differs too)."""
    os.makedirs(dest, exist_ok=True)
    paths = [os.path.join(dest, name) for name in spec.sources + spec.headers]
    for name, path in zip(spec.sources + spec.headers, paths, strict=True):
        data = _read(os.path.join(spec.src_dir, name))
        if not os.path.exists(path) or _read(path) != data:
            with open(path + ".tmp", "wb") as f:
                f.write(data)
            os.replace(path + ".tmp", path)
    return paths


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@contextmanager
def build_lock(path: str, poll_s: float = 0.5) -> Iterator[None]:
    """Hold an exclusive `flock` on `path`, waiting at most `$ROSEINFER_KERNEL_BUILD_TIMEOUT`
    seconds for another holder. The file stays: unlinking it would let a waiter lock the old
    inode while a newcomer locks a new file, and both would build at once."""
    timeout_s = float(os.environ.get(TIMEOUT_ENV) or _DEFAULT_TIMEOUT_S)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by ninja: dies with us
    try:
        start = time.monotonic()
        next_note = start
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                if waited >= timeout_s:
                    raise TimeoutError(
                        f"gave up after {waited:.0f} s waiting for pid {holder} to build the "
                        f"C++ kernels: end that process if it is stuck, or delete {path} "
                        f"(set {TIMEOUT_ENV}=<seconds> to wait longer)"
                    ) from None
                if time.monotonic() >= next_note:  # say so now, then once a minute
                    logger.warning(
                        "waiting for another process building the C++ kernels "
                        "(pid %s, %.0f s so far, lock: %s)", holder, waited, path,
                    )  # fmt: skip
                    next_note += 60
                time.sleep(poll_s)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # for a waiter's messages
        yield
    finally:
        os.close(fd)  # releases the flock


_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


class _SubprocessDyingWithUs:
    """`subprocess` as torch's `cpp_extension` sees it during a build: `run` (ninja) gets SIGTERM
    when this process dies, and when this process is interrupted. SIGTERM, not `run`'s SIGKILL:
    ninja then kills each compiler's process group before exiting, where a SIGKILLed ninja would
    leave them running. The death signal follows the thread that forked ninja, which sits here
    until ninja exits, so it fires exactly when the process dies."""

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    @staticmethod
    def run(cmd: Any, *, check: bool = False, **kwargs: Any) -> subprocess.CompletedProcess:
        parent, libc = os.getpid(), _libc
        assert libc is not None  # `_ninja_dies_with_us` installs this class on Linux only

        def die_with_parent() -> None:  # in the forked child before exec: keep it to syscalls
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
            if os.getppid() != parent:  # the parent died before prctl took effect
                os.kill(os.getpid(), signal.SIGTERM)

        with subprocess.Popen(cmd, preexec_fn=die_with_parent, **kwargs) as proc:
            try:
                out, err = proc.communicate()
            except BaseException:  # KeyboardInterrupt, SystemExit from a signal handler
                proc.terminate()
                proc.wait()
                raise
        if check and proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, cmd, out, err)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@contextmanager
def _ninja_dies_with_us(cpp_extension: ModuleType) -> Iterator[None]:
    if _libc is None or getattr(cpp_extension, "subprocess", None) is not subprocess:
        yield  # not Linux, or a torch that runs ninja another way: build without the guard
        return
    setattr(cpp_extension, "subprocess", _SubprocessDyingWithUs())  # noqa: B010 (a module's)
    try:
        yield
    finally:
        setattr(cpp_extension, "subprocess", subprocess)  # noqa: B010
