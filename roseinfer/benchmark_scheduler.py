"""The seeds' entry point, kept: `python -m roseinfer.benchmark_scheduler ...` (same flags, same
summary lines) runs the scheduler benchmark, which lives in `roseinfer.bench.scheduler`."""

from __future__ import annotations

import sys

from roseinfer.bench.scheduler import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
