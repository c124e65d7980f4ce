"""How busy the rest of the machine was while we measured (Linux; None elsewhere).

On a 2-core machine one other busy process halves what we measure, and OpenMP threads fighting
for the same cores can make a step 10x slower. `OtherLoad` compares the CPU time the whole machine
spent (/proc/stat) with the CPU time this process spent (getrusage) over the measured interval; the
difference is other processes' work, reported as average cores in use. Benchmarks record it in
their JSON and warn when it is high, so a number taken on a busy machine is not mistaken for one
taken on a quiet one.
"""

from __future__ import annotations

import math
import os
import resource
import sys
import time

WARN_CORES = 0.25


def _machine_busy_seconds() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _pid_seconds(pid: int) -> float:
    """CPU seconds of another process (all its threads), 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # fields[11:15] are utime, stime, cutime, cstime (the 14th-17th fields of the stat line)
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _own_seconds() -> float:
    # getrusage, not os.times: its clock ticks (10 ms) round a short sweep point to 0
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class OtherLoad:
    """with OtherLoad() as load: ...; load.cores -> other processes' average cores in use.

    `pids`: processes that belong to the measurement too (e.g. the server under test); their
    cores are `load.pid_cores`, this process's own (e.g. a load client's) `load.own_cores`."""

    def __init__(self, pids: tuple[int, ...] = ()) -> None:
        self.cores: float | None = None
        self.own_cores: float | None = None
        self.pid_cores: float | None = None
        self.pids = tuple(p for p in pids if p != os.getpid())  # ours is counted as our own
        self._start: tuple[float | None, float, float, float] | None = None

    def _pids_seconds(self) -> float:
        return sum(_pid_seconds(p) for p in self.pids)

    def __enter__(self) -> OtherLoad:
        self._start = (
            _machine_busy_seconds(),
            _own_seconds(),
            self._pids_seconds(),
            time.perf_counter(),
        )
        return self

    def __exit__(self, *exc) -> None:
        assert self._start is not None  # set by __enter__
        busy0, own0, pids0, t0 = self._start
        busy1, own1, pids1, t1 = (
            _machine_busy_seconds(),
            _own_seconds(),
            self._pids_seconds(),
            time.perf_counter(),
        )
        if t1 <= t0:
            return
        # A pid gone before the end reads 0: count it as having used nothing rather than < 0.
        own, pids, wall = own1 - own0, max(0.0, pids1 - pids0), t1 - t0
        self.own_cores = own / wall
        self.pid_cores = pids / wall if self.pids else None
        if busy0 is not None and busy1 is not None:
            self.cores = max(0.0, ((busy1 - busy0) - own - pids) / wall)

    def warn(self, what: str = "the measurement") -> None:
        if self.cores is not None and self.cores > WARN_CORES:
            print(
                f"warning: other processes kept {self.cores:.2f} of {os.cpu_count()} cores busy during {what}; "
                "numbers taken on a busy machine are not comparable",
                file=sys.stderr,
            )


def region_handoff_us() -> float | None:
    """µs per loop the CPU kernels hand between their threads right now, where this process has
    loaded them (`bench throughput`, `bench scheduler`; not `bench serve`'s client). On the AMD
    host it reads ~0.15 with its two CPUs in one core complex and ~0.6-0.85 in two, where memory
    reads ~70 GB/s instead of ~45 and one stream's step gains nothing from it (BENCHMARKS.md,
    session 45). None where the kernels are not loaded or run no region of two threads."""
    from roseinfer.kernels import load_cpu_kernels

    if load_cpu_kernels.cache_info().currsize == 0:  # never loaded here: do not build them now
        return None
    kernels = load_cpu_kernels()
    if kernels is None:
        return None
    ns = kernels.region_handoff_ns(2000)
    return None if math.isnan(ns) else round(ns / 1e3, 3)


def machine_info() -> dict:
    """CPU model, core count, memory, torch version: what BENCHMARKS.md writes next to numbers;
    where the CPU kernels are loaded, their threads' loop handoff at this moment
    (`region_handoff_us`)."""
    info: dict = {"cpu_count": os.cpu_count()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="ascii") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    except ImportError:
        return info
    handoff = region_handoff_us()
    if handoff is not None:
        info["region_handoff_us"] = handoff
    return info
