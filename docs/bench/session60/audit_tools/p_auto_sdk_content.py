# The SDK's stream helper gathers a tools-"auto" answer that calls: message.content is None without
# logprobs but "" with logprobs (non-streamed: None either way). README: the first delta's content is
# "null where the answer calls, as OpenAI's".
from common import *
sysm = {"role": "system", "content": "Always answer by calling the tools. Call get_weather for every city mentioned."}
base = [sysm, {"role": "user", "content": "What's the weather in Paris and in Rome?"}]
for lp in [False, True]:
    kw = dict(model=M, messages=base, tools=[WEATHER, TIME], tool_choice="auto", parallel_tool_calls=False, max_tokens=100, temperature=0.9, seed=3, logprobs=lp)
    with client.chat.completions.stream(**kw) as s:
        for _ in s: pass
        fc = s.get_final_completion()
    ns = client.chat.completions.create(**kw)
    print(f"logprobs={lp}: streamed content={fc.choices[0].message.content!r} calls={len(fc.choices[0].message.tool_calls or [])} | non-streamed content={ns.choices[0].message.content!r} calls={len(ns.choices[0].message.tool_calls or [])}")
