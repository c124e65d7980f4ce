from common import *
from roseinfer import SamplingParams
from roseinfer.sampling_params import StructuredOutputs
L = llm()
x = L.tokenizer.encode("x")
print("x ids", x)
bad = SamplingParams(temperature=0, max_tokens=5, structured_outputs=StructuredOutputs(regex="[ab]{3}"), allowed_token_ids=x)
good = SamplingParams(temperature=0, max_tokens=5)
ids = L.encode("Hello")
outs = L.generate([ids, ids, ids], [good, bad, good], use_tqdm=False)
for o in outs:
    c = o.outputs[0]; print("generate:", c.token_ids, c.finish_reason, repr(c.error))
pieces = list(L.stream(ids, bad))
print("stream of the failing request yielded:", pieces, "and raised nothing")
