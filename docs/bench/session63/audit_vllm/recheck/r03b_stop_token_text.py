"""3b. include_stop_str_in_output and a stop *token* (stop_token_ids, EOS): is the token's text kept?
vLLM's detokenizer (v1/engine/detokenizer.py:107) drops the stop token only when the flag is false."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, both_stream, joined, text_of, verdict

G = {"model": MODEL, "temperature": 0, "max_tokens": 40}
cases = [
    ("comp stop_token_ids [30] ('.')", COMP, {**G, "prompt": PROMPT, "stop_token_ids": [30]}),
    ("chat stop_token_ids [30] ('.')", CHAT, {**G, "messages": MSG, "stop_token_ids": [30]}),
    ("chat EOS", CHAT, {**G, "messages": MSG}),
    ("comp EOS", COMP, {**G, "prompt": PROMPT}),
]
for label, path, body in cases:
    for opts in ({"include_stop_str_in_output": True},
                 {"include_stop_str_in_output": True, "skip_special_tokens": False},
                 {"skip_special_tokens": False}):
        b = {**body, **opts, "return_token_ids": True}
        r = both(path, b, n=400, label=f"{label} {opts}")
        verdict(f"{label} {opts} text", text_of(r["vllm"][1]), text_of(r["rose"][1]))
        rs = both_stream(path, {**b, "stream": True}, label=f"{label} {opts}", maxchunks=3)
        verdict(f"{label} {opts} streamed text", joined(rs["vllm"][1], "text"), joined(rs["rose"][1], "text"))
