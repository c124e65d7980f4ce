"""Progress bars that suit where they are read: tqdm's bar on a terminal, plain lines elsewhere.

tqdm redraws its bar with carriage returns; in a log file or a pipe (a server under systemd,
`2> log`) those frames pile up as one garbled line. Off a terminal the same calls print whole
lines instead: one when a stage (the description) changes, at most one count line per `interval` seconds,
and the count when done.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Protocol, TextIO

from tqdm import tqdm


class Progress(Protocol):
    """What roseinfer calls on a progress bar (a subset of tqdm's interface)."""

    def update(self, n: float | None = 1) -> bool | None: ...
    def set_description(self, desc: str | None = None, refresh: bool | None = True) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Progress: ...
    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None: ...


def progress(
    total: int,
    desc: str,
    unit: str = "it",
    *,
    delay: float = 0.0,
    leave: bool = True,
    disable: bool = False,
    file: TextIO | None = None,
) -> Progress:
    """A tqdm bar on `file` (default: stderr) if it is a terminal, else a `LineProgress`.
    `delay`: nothing is shown before that many seconds (work that ends sooner stays silent);
    `leave=False`: a terminal's bar is erased when closed, and no last line is printed."""
    out = file if file is not None else sys.stderr
    if is_terminal(out):
        bar: Progress = tqdm(total=total, desc=desc, unit=unit, delay=delay, leave=leave,
                             disable=disable, file=out)  # fmt: skip
        return bar
    return LineProgress(total, desc, unit, delay=delay, leave=leave, disable=disable, file=out)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed file
        return False


class LineProgress:
    """tqdm's calls, printed as whole lines `desc [n/total unit, elapsed]`."""

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str = "it",
        *,
        delay: float = 0.0,
        leave: bool = True,
        disable: bool = False,
        file: TextIO | None = None,
        interval: float = 10.0,
    ) -> None:
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self.delay, self.leave, self.disable, self.interval = delay, leave, disable, interval
        self.file = file
        self._start = time.monotonic()
        self._last_time: float | None = None  # when the last line was printed
        self._last_line: tuple[str, int] | None = None  # (desc, n) it showed
        self._closed = False
        if delay <= 0:
            self._print()

    def update(self, n: float | None = 1) -> bool | None:
        self.n += int(n or 0)
        now = time.monotonic()
        if self._last_time is None or now - self._last_time >= self.interval:
            return self._print()
        return None

    def set_description(self, desc: str | None = None, refresh: bool | None = True) -> None:
        self.desc = desc or ""
        self._print()

    def close(self) -> None:
        if not self._closed and self.leave and self._last_line != (self.desc, self.n):
            self._print()
        self._closed = True

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _print(self) -> bool:
        now = time.monotonic()
        if self.disable or self._closed or now - self._start < self.delay:
            return False
        out = self.file if self.file is not None else sys.stderr
        elapsed = now - self._start
        print(f"{self.desc} [{self.n}/{self.total} {self.unit}, {elapsed:.1f}s]", file=out,
              flush=True)  # fmt: skip
        self._last_time, self._last_line = now, (self.desc, self.n)
        return True
