"""Bytes of output state one one-choice request holds from the moment it is submitted (the
note's ~1.4 KB behind the 2,048-choice cap): 20,000 `RequestState`s over the tiny test llama's
tokenizer, measured with tracemalloc.

    .venv/bin/python docs/bench/session52/limits/state_bytes.py
"""

import sys
import tempfile
import tracemalloc

sys.path.insert(0, "tests")
from conftest import make_tiny_model  # noqa: E402

from roseinfer.config import EngineConfig  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402
from roseinfer.output.processor import RequestState  # noqa: E402
from roseinfer.sampling_params import SamplingParams  # noqa: E402

path = make_tiny_model("llama", tempfile.mkdtemp() + "/m")
core = InferenceEngine(EngineConfig(model=path, dtype="float32", num_kv_blocks=16)).new_core()
params = SamplingParams(max_tokens=1)
tracemalloc.start()
states = [RequestState(f"r{i}", [65], params, core.tokenizer, core.stop_token_ids)
          for i in range(20000)]
used, _ = tracemalloc.get_traced_memory()
print(f"{used / len(states):.0f} bytes per one-choice request state")
