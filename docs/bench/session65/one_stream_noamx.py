"""benchmarks/one_stream.py with the bf16 linears forced off AMX (`amx_linear_available` patched
to False: the dpbf16 path at every row count) when $NOAMX is 1."""

import os
import runpy
import sys

sys.path.insert(0, "benchmarks")
import roseinfer.kernels as K

m = K.load_cpu_kernels()
if os.environ.get("NOAMX") == "1":
    m.amx_linear_available = lambda: False
sys.argv = ["one_stream.py"] + sys.argv[1:]
runpy.run_path("benchmarks/one_stream.py", run_name="__main__")
