import time, roseinfer
print(roseinfer.__file__)
t=time.time()
from roseinfer import LLM, SamplingParams
llm = LLM("smollm2", dtype="float32")
print("load", time.time()-t, llm.config)
out = llm.generate("The capital of France is", SamplingParams(temperature=0, max_tokens=8), use_tqdm=False)
print(repr(out[0].text), out[0].outputs[0])
