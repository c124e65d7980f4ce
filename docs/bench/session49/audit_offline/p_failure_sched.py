from common import *
from roseinfer.compat import InferenceEngine, OnlineScheduler
from roseinfer.config import EngineConfig
from roseinfer import SamplingParams
from roseinfer.sampling_params import StructuredOutputs
eng = InferenceEngine(EngineConfig(model=M, dtype="float32", num_kv_blocks=64))
bad = SamplingParams(temperature=0, max_tokens=5, structured_outputs=StructuredOutputs(regex="[ab]{3}"), allowed_token_ids=[104])
on = OnlineScheduler(eng)
r = on.add_request("Hello", params=bad)
for _ in range(10):
    if not on.has_unfinished(): break
    on.step()
print("finished:", on.pop_finished_ids(), "generated:", on.get_generated_ids(r), "response:", repr(on.pop_response(r)))
