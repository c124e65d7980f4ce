"""Weights in 2 MB pages (`roseinfer/layers/huge_pages.py`): the memory is what a tensor's would
be (values, shape, no overlap), starts on a 2 MB boundary, and is marked for huge pages; the
`cpu` backend's linears keep their packed weights there."""

from __future__ import annotations

import mmap
import sys

import pytest
import torch
from torch import nn

from roseinfer.layers.huge_pages import HUGE_PAGE, HugePageArena, huge_page_zeros

linux_only = pytest.mark.skipif(
    not hasattr(mmap, "MADV_HUGEPAGE"), reason="MADV_HUGEPAGE is Linux's: plain tensors elsewhere"
)


def advised_for_huge_pages(address: int) -> bool:
    """Whether the mapping holding `address` carries MADV_HUGEPAGE (smaps' VmFlags `hg`)."""
    with open("/proc/self/smaps") as f:
        inside = False
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start <= address < end
            elif inside and head == "VmFlags:":
                return "hg" in line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@linux_only
def test_huge_page_zeros_is_a_zeroed_tensor_on_a_2mb_boundary_advised_for_huge_pages() -> None:
    t = huge_page_zeros((3, 1000, 700), torch.bfloat16)
    assert t.shape == (3, 1000, 700) and t.dtype == torch.bfloat16 and t.is_contiguous()
    assert t.count_nonzero() == 0
    assert t.data_ptr() % HUGE_PAGE == 0
    assert advised_for_huge_pages(t.data_ptr())
    t.fill_(1.5)  # writable, all of it
    assert float(t.float().sum()) == 1.5 * t.numel()


def test_huge_page_zeros_of_nothing_is_an_empty_tensor() -> None:
    assert huge_page_zeros((0, 4), torch.float32).shape == (0, 4)


@linux_only
def test_the_arena_copies_tensors_side_by_side_into_advised_memory() -> None:
    arena = HugePageArena(chunk_bytes=4 << 20)
    sources = [torch.randn(300, 576).bfloat16(), torch.randint(-127, 128, (1000, 1000), dtype=torch.int8),
               torch.randn(5).float()]  # fmt: skip
    copies = [arena.copy(t) for t in sources]
    for source, copy in zip(sources, copies, strict=True):
        assert copy.shape == source.shape and copy.dtype == source.dtype
        assert torch.equal(copy, source) and arena.holds(copy) and not arena.holds(source)
        assert copy.data_ptr() % 64 == 0 and advised_for_huge_pages(copy.data_ptr())
    spans = sorted(  # no two overlap
        (c.data_ptr(), c.data_ptr() + c.numel() * c.element_size()) for c in copies
    )
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:], strict=False))
    # One after another in the first chunk; a tensor larger than a chunk (6 MB against 4) gets
    # a chunk of its own.
    assert copies[1].data_ptr() - copies[0].data_ptr() == 300 * 576 * 2
    big = arena.copy(torch.ones(3 << 20, dtype=torch.int16))
    assert big.data_ptr() % HUGE_PAGE == 0 and int(big.sum()) == 3 << 20
    sources[0].zero_()  # the copies are their own memory
    assert copies[0].count_nonzero() > 0


@pytest.mark.skipif(sys.platform != "linux", reason="the C++ kernels build on Linux")
def test_the_cpu_backends_linears_keep_their_packed_weights_in_its_arena() -> None:
    from roseinfer.backends import BackendOptions, CpuBackend, Quantization
    from roseinfer.kernels import load_cpu_kernels

    kernels = load_cpu_kernels()
    if kernels is None:
        pytest.skip("the C++ kernels did not build here")
    backend = CpuBackend(BackendOptions(device=torch.device("cpu")), kernels)  # type: ignore[arg-type]
    torch.manual_seed(0)
    linear = nn.Linear(128, 96, bias=False).bfloat16()
    x = torch.randn(5, 128).bfloat16()
    for quantization in (Quantization.NONE, Quantization.INT8):
        layer = backend.make_linear(linear, quantization)
        packed = [
            t for name, t in vars(layer).items()
            if name in ("packed_weight", "tile_weight", "tile_qweight", "vnni_qweight")
            and t is not None
        ] + [b for name, b in layer.named_buffers() if name == "qweight" and b is not None]  # fmt: skip
        if not packed:  # this CPU's kernel for the layer keeps the model's own weight
            continue
        assert all(backend.weights.holds(t) for t in packed), quantization
        reference = x.float() @ linear.weight.detach().float().T
        tolerance = 0.05 if quantization is Quantization.INT8 else 0.02
        assert torch.allclose(
            layer(x).float(), reference, atol=tolerance * float(reference.abs().max())
        )
