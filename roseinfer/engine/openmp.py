"""Letting go of a thread's OpenMP worker threads before another thread takes over the model.

GNU OpenMP (libgomp, which PyTorch's Linux wheels bundle) keeps a pool of worker threads for
each thread that has run a parallel region, and while the pools' threads together outnumber
the CPUs, a thread waiting for work sleeps after a hundred spins instead of ~300,000 (libgomp's
"throttled" spin count). Then each parallel region the model's thread starts first wakes a
sleeping worker: 302 `GOMP_parallel` regions in a 2,000-token prompt's step, 2 in a decode
step. The thread that loaded a model has run parallel regions and keeps its pool, so an
engine stepped on another thread (the `EngineClient`'s own) ran a 2,000-token prompt and a
one-stream decode step ~5 % slower until that pool went (BENCHMARKS.md, session 73). Only GNU
OpenMP is asked: the throttling measured is its own, and LLVM's and Intel's
`omp_pause_resource_all` act on the whole runtime, not on the calling thread's pool.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["gnu_openmp_runtimes", "release_openmp_pool"]

_OMP_PAUSE_SOFT = 1  # OpenMP 5.0's omp_pause_soft


def gnu_openmp_runtimes() -> list[str]:
    """The GNU OpenMP libraries this process has loaded, by their real paths (a `libgomp.so.1`
    that is LLVM's `libomp` under another name shows as libomp), from /proc/self/maps: [] where
    there is none or no such file (not Linux)."""
    paths: set[str] = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:  # address, perms, offset, device, inode, path
                fields = line.split(None, 5)
                if len(fields) == 6 and "libgomp" in fields[5]:
                    paths.add(fields[5].strip())
    except OSError:
        return []
    return sorted(p for p in paths if os.path.basename(p).startswith("libgomp"))


def release_openmp_pool() -> bool:
    """End the calling thread's OpenMP worker threads (`omp_pause_resource_all`, soft) in each
    GNU OpenMP runtime loaded (PyTorch's); the thread's next parallel region starts new ones.
    Call it while no parallel region runs (OpenMP leaves the result unspecified otherwise).
    Returns whether a runtime let them go."""
    released = False
    for path in gnu_openmp_runtimes():
        try:  # the loaded library itself, not a second copy
            runtime = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            pause = runtime.omp_pause_resource_all
        except (OSError, AttributeError):  # unloaded since, or older than OpenMP 5.0
            continue
        pause.argtypes = [ctypes.c_int]
        pause.restype = ctypes.c_int
        released |= pause(_OMP_PAUSE_SOFT) == 0
    return released
