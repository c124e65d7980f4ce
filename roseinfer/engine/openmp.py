"""Letting go of a thread's OpenMP worker threads before another thread takes over the model.

GNU OpenMP (libgomp, which PyTorch's Linux wheels bundle) keeps a pool of worker threads for
each thread that has run a parallel region, and while the pools' threads together outnumber
the CPUs, a thread waiting for work sleeps after a hundred spins instead of ~300,000 (libgomp's
"throttled" spin count). Then each parallel region the model's thread starts first wakes a
sleeping worker: 302 regions in a 2,000-token prompt's step, 2 in a decode step. The thread
that loaded a model has run parallel regions and keeps its pool, so an engine stepped on
another thread (the `EngineClient`'s own) ran a 2,000-token prompt and a one-stream decode
step ~5 % slower until that pool went (BENCHMARKS.md, session 73). Under LLVM's or Intel's runtime nothing is done: the
throttling measured is libgomp's, and their `omp_pause_resource_all` acts on the whole runtime,
not on the calling thread's pool.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["release_openmp_pool"]

_OMP_PAUSE_SOFT = 1  # OpenMP 5.0's omp_pause_soft


def release_openmp_pool() -> bool:
    """End the calling thread's OpenMP worker threads (`omp_pause_resource_all`, soft) where
    the process runs GNU OpenMP; the thread's next parallel region starts new ones. Call it
    while no parallel region runs (OpenMP leaves the result unspecified otherwise). Returns
    whether the runtime let them go."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        process = ctypes.CDLL(None)  # the symbols of what the process has loaded (torch's too)
        pause = process.omp_pause_resource_all
    except (OSError, AttributeError):  # no OpenMP runtime loaded
        return False
    if hasattr(process, "__kmpc_fork_call"):  # LLVM's or Intel's runtime (also exports GOMP_*)
        return False
    pause.argtypes = [ctypes.c_int]
    pause.restype = ctypes.c_int
    return pause(_OMP_PAUSE_SOFT) == 0
