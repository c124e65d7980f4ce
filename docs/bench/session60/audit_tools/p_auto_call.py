# tool_choice auto where the model does call (seed 3): message shape, streamed vs not, ptc true vs false
from common import *
import json
sysm = {"role": "system", "content": "Always answer by calling the tools. Call get_weather for every city mentioned."}
base = [sysm, {"role": "user", "content": "What's the weather in Paris and in Rome?"}]
for seed in [3]:
  for ptc in [False, True]:
    body = {"model": M, "messages": base, "tools": [WEATHER, TIME], "tool_choice": "auto", "parallel_tool_calls": ptc,
            "max_tokens": 100, "temperature": 0.9, "seed": seed, "logprobs": True}
    j = post("/v1/chat/completions", body).json()
    c = j["choices"][0]
    show(f"auto ptc={ptc} seed={seed} message", (c["finish_reason"], c["message"]))
    print("   logprob tokens:", "".join(x["token"] for x in c["logprobs"]["content"]) if c["logprobs"] else None)
    st, lines = sse("/v1/chat/completions", dict(body, stream=True))
    print("   stream:", [l for l in lines if l][:4], "...", [l for l in lines if l][-3:])
