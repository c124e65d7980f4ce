"""`benchmarks/one_stream.py` with the int8 modes twice: through the kernel this CPU picks
(`amx_int8_linear` on AMX CPUs) and through `vnni_int8_linear` (what CPUs without AMX run),
each engine built once and stepped in turns in one process, so both see the same memory.
`KernelInt8Linear` is handed a view of the kernels that reports no AMX int8 while the "vnni"
engines are built; nothing else changes.

    PYTHONPATH=. python3 docs/bench/session35/vnni_one_stream.py --rounds 60 --model /tmp/smolfull
"""

import sys
from typing import Any

sys.path.insert(0, "benchmarks")
import one_stream  # noqa: E402

from roseinfer.backends import cpu_linear  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402


class NoAmxInt8:
    """The kernels, except that `amx_int8_linear_available()` is False."""

    def __init__(self, kernels: Any) -> None:
        self.kernels = kernels

    def amx_int8_linear_available(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernels, name)


vnni = False
plain_init = cpu_linear.KernelInt8Linear.__init__


def init(self: Any, linear: Any, kernels: Any, *args: Any, **kwargs: Any) -> None:
    plain_init(self, linear, NoAmxInt8(kernels) if vnni else kernels, *args, **kwargs)


cpu_linear.KernelInt8Linear.__init__ = init  # type: ignore[method-assign]


def engine(model: str, vnni_int8: bool = False, **options: Any) -> InferenceEngine:
    global vnni
    vnni = vnni_int8
    try:
        return InferenceEngine(model=model, **options)
    finally:
        vnni = False


one_stream.InferenceEngine = engine  # type: ignore[assignment]
one_stream.MODES = {
    "bf16": ({"dtype": "bfloat16"}, "auto", "bf16"),
    "int8 (CPU's pick)": ({"quantization": "int8"}, "auto", "int8"),
    "int8 vnni": ({"quantization": "int8", "vnni_int8": True}, "auto", "int8"),
    "int8+kv8 (CPU's pick)": ({"quantization": "int8"}, "int8", "int8"),
    "int8+kv8 vnni": ({"quantization": "int8", "vnni_int8": True}, "int8", "int8"),
}
one_stream.main()
