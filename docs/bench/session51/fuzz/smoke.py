import time
t=time.time()
from roseinfer import LLM, SamplingParams
from roseinfer.sampling_params import StructuredOutputs
M="/tmp/s47/audit/tinysmol"
llm = LLM(model=M, dtype="float32", block_size=4, num_kv_blocks=40, max_num_seqs=8, max_num_batched_tokens=16)
print("load", time.time()-t, llm.engine.runner.backend, llm.config.attention_backend)
t=time.time()
outs = llm.generate(["Hello world, this is a test of things"]*10, SamplingParams(max_tokens=30, temperature=0, ignore_eos=True), use_tqdm=False)
print("gen", time.time()-t, outs[0].outputs[0].token_ids[:10], outs[0].text[:80])
print(llm.engine.block_manager.num_used_blocks)
t=time.time()
o = llm.generate(["Hi"], SamplingParams(max_tokens=30, structured_outputs=StructuredOutputs(json={"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}), temperature=0), use_tqdm=False)
print(time.time()-t, repr(o[0].text), o[0].finish_reason)
llm2 = LLM(model=M, dtype="float32", enforce_eager=True, loaded=None)
print(llm2.engine.runner.backend)
