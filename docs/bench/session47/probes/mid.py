import sys, time
sys.path.insert(0, "tests")
from conftest import make_tiny_model
from roseinfer import LLM
from roseinfer.config import SamplingParams, StructuredOutputs
d = make_tiny_model("llama", "/tmp/s47/g/tiny")
llm = LLM(model=d, dtype="float32", num_kv_blocks=256, max_num_seqs=32)
wide = "root ::= " + " | ".join(f'"c{i}x"' for i in range(5000))
choice = tuple(f"choice number {i}" for i in range(50000))
for name, spec in (("wide", StructuredOutputs(grammar=wide)), ("choice", StructuredOutputs(choice=choice))):
    for k in range(2):
        t = time.time()
        try:
            outs = llm.generate(["hi", "hello"], [SamplingParams(max_tokens=8, temperature=0, structured_outputs=spec), SamplingParams(max_tokens=8, temperature=0)], use_tqdm=False)
            o = outs[0].outputs[0]
            print(name, k, round(time.time()-t, 2), o.finish_reason, repr(o.text), (o.error or "")[:200], "| neighbour", outs[1].outputs[0].finish_reason)
        except Exception as e:
            print(name, k, round(time.time()-t, 2), "raised", type(e).__name__, str(e)[:200])
