# tools under "auto" where the answer calls: the stream's opening delta content is null without logprobs,
# but "" with logprobs (README: "null where the answer calls, as OpenAI's"); and the calls must still stream
from common import *
import json
sysm = {"role": "system", "content": "Always answer by calling the tools. Call get_weather for every city mentioned."}
base = [sysm, {"role": "user", "content": "What's the weather in Paris and in Rome?"}]
for lp in [False, True]:
    body = {"model": M, "messages": base, "tools": [WEATHER, TIME], "tool_choice": "auto", "parallel_tool_calls": False,
            "max_tokens": 100, "temperature": 0.9, "seed": 3, "logprobs": lp, "stream": True}
    st, lines = sse("/v1/chat/completions", body)
    ch = [json.loads(l[6:]) for l in lines if l.startswith("data: {")]
    print(f"== logprobs={lp}: opening delta = {ch[0]['choices'][0]['delta']}")
    print("   tool_call deltas:", [c["choices"][0]["delta"]["tool_calls"] for c in ch if c["choices"][0]["delta"].get("tool_calls")])
    print("   content deltas:", [c["choices"][0]["delta"].get("content") for c in ch[1:] if "content" in c["choices"][0]["delta"]])
    print("   finish:", ch[-1]["choices"][0]["finish_reason"])
j = post("/v1/chat/completions", dict(body, stream=False)).json()
print("== non-stream message:", j["choices"][0]["message"])
