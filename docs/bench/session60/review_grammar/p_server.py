"""Served (tiny random llama, <think> </think> <tool_call> </tool_call> added as text): json_object,
tool_choice required / named, cut inside the thinking, streamed vs not."""
from server_util import *
import sys
parser, port = sys.argv[1], int(sys.argv[2])
T = {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
     "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False}}}
with serve(port, parser) as http:
    think, close = tid(http, "<think>"), tid(http, "</think>")
    bias = {str(think): 8, str(close): 5}
    cases = {
        "json_object": dict(response_format={"type": "json_object"}, max_tokens=60),
        "json_object cut in thinking": dict(response_format={"type": "json_object"}, max_tokens=3, logit_bias={str(think): 8}),
        "tools required": dict(tools=[T], tool_choice="required", max_tokens=120),
        "tools named": dict(tools=[T], tool_choice={"type": "function", "function": {"name": "add"}}, max_tokens=120),
        "tools required cut in thinking": dict(tools=[T], tool_choice="required", max_tokens=3, logit_bias={str(think): 8}),
        "choice": dict(structured_outputs={"choice": ["yes", "no"]}, max_tokens=40),
    }
    for name, extra in cases.items():
        stats = {"ok": 0, "mismatch": 0, "thought": 0, "status": set()}
        for seed in range(6):
            body = {"messages": [{"role": "user", "content": "hi"}], "seed": seed, "temperature": 1.0,
                    "logit_bias": bias, **extra}
            r = http.post("/v1/chat/completions", json=body)
            stats["status"].add(r.status_code)
            if r.status_code != 200:
                print(name, seed, r.status_code, r.text[:200]); continue
            j = r.json(); ch = j["choices"][0]; msg = ch["message"]
            calls = [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in msg.get("tool_calls") or []]
            sj, sfinish, scalls, susage = stream_join(http, body)
            same = (sj.get("reasoning"), sj.get("content") or None, sfinish, scalls) == (msg.get("reasoning"), msg.get("content") or None, ch["finish_reason"], calls)
            stats["ok" if same else "mismatch"] += 1
            stats["thought"] += msg.get("reasoning") is not None
            if not same or seed < 2:
                print(f"  [{name} seed {seed}] finish={ch['finish_reason']} reasoning={msg.get('reasoning')!r:.60} content={msg.get('content')!r:.60} calls={calls} "
                      f"rtok={j['usage'].get('completion_tokens_details')}")
                if not same:
                    print(f"     STREAM: finish={sfinish} {sj} calls={scalls} usage={susage.get('completion_tokens_details') if susage else None}")
        print(parser, name, stats)
