"""The `cpu` backend's packed weights in 2 MB pages.

A decode step streams every weight from DRAM. In 4 KB pages that is a TLB miss every 4 KB and
hardware prefetchers that stop at each page's end; in 2 MB pages the 121 linears of a one-row
step ran 9 % faster in bf16 and 6.5 % in int8, and the engine's one-stream decode 4-8 % (bf16;
BENCHMARKS.md, session 26). Linux backs memory with 2 MB pages only where asked
(`transparent_hugepage` is `madvise` on most distributions, and PyTorch's allocator does not
ask), so the weights go into anonymous mappings marked `MADV_HUGEPAGE` before their first touch.
Where the OS has no such pages (THP off, not Linux) they are ordinary memory: the same values,
4 KB pages. The KV cache stays in PyTorch's memory: in 2 MB pages the offline benchmark ran 3-6 %
slower with its pages faulted as blocks were first used, and no faster written at allocation
(session 26).
"""

from __future__ import annotations

import math
import mmap

import torch

HUGE_PAGE = 2 << 20
_ALIGN = 64  # each tensor in an arena starts on a cache line


def huge_page_zeros(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """A zeroed contiguous CPU tensor whose memory is asked for in 2 MB pages: a fresh
    anonymous mapping (zero-filled by the OS; its pages become resident when first touched)."""
    nbytes = math.prod(shape) * dtype.itemsize
    advice = getattr(mmap, "MADV_HUGEPAGE", None)  # Linux only
    if nbytes == 0 or advice is None:
        return torch.zeros(shape, dtype=dtype)
    # One huge page more than the tensor lets it start on a 2 MB boundary; private, since a
    # shared anonymous mapping is shmem, which THP's `madvise` mode leaves in 4 KB pages.
    memory = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        memory.madvise(advice)
    except OSError:  # a kernel without transparent huge pages: 4 KB pages, same memory
        pass
    raw = torch.frombuffer(memory, dtype=torch.uint8)  # keeps the mapping alive
    offset = -raw.data_ptr() % HUGE_PAGE
    return raw[offset : offset + nbytes].view(dtype).view(shape)


class HugePageArena:
    """Copies of tensors laid out one after another in chunks of 2 MB pages: a model's weights
    are a hundred tensors of 0.3-4 MB, which pages of their own would round up by a third."""

    def __init__(self, chunk_bytes: int = 64 << 20) -> None:
        self.chunk_bytes = chunk_bytes
        self._chunk: torch.Tensor | None = None  # uint8, the chunk being filled
        self._used = 0  # its bytes handed out
        self._spans: list[tuple[int, int]] = []  # every chunk's [start, end) address

    def holds(self, t: torch.Tensor) -> bool:
        """Whether `t`'s memory lies in this arena."""
        return any(start <= t.data_ptr() < end for start, end in self._spans)

    def copy(self, t: torch.Tensor) -> torch.Tensor:
        """A contiguous copy of CPU tensor `t` in the arena (same shape, dtype and values)."""
        nbytes = t.numel() * t.element_size()
        if nbytes == 0:
            return t.clone()
        if self._chunk is None or self._used + nbytes > self._chunk.numel():
            # A new chunk; what is left of the old one was never touched, so never resident.
            self._chunk = huge_page_zeros((max(self.chunk_bytes, nbytes),), torch.uint8)
            self._used = 0
            start = self._chunk.data_ptr()
            self._spans.append((start, start + self._chunk.numel()))
        placed = self._chunk[self._used : self._used + nbytes].view(t.dtype).view(t.shape)
        placed.copy_(t)
        self._used += -(-nbytes // _ALIGN) * _ALIGN
        return placed
