"""3. include_stop_str_in_output with stop strings found in the greedy output (plain runs first)."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, both_stream, joined, post, text_of, usage3, verdict

DOT = post("vllm", "/tokenize", {"model": MODEL, "prompt": "."})[1]["tokens"][-1]
print("id of '.':", DOT)

G = {"model": MODEL, "temperature": 0, "max_tokens": 24}
print("plain greedy runs (to find stop strings):")
for path, body in [(CHAT, {**G, "messages": MSG}), (COMP, {**G, "prompt": PROMPT})]:
    r = both(path, body, n=400)
    verdict("plain text", text_of(r["vllm"][1]), text_of(r["rose"][1]))

cases = [
    ("chat ' is' (whole token)", CHAT, {**G, "messages": MSG, "stop": [" is"]}),
    ("chat 'Par' (ends mid-token)", CHAT, {**G, "messages": MSG, "stop": ["Par"]}),
    ("comp 'answer'", COMP, {**G, "prompt": PROMPT, "stop": ["answer"]}),
    ("comp 'nsw' (inside a token)", COMP, {**G, "prompt": PROMPT, "stop": ["nsw"]}),
    ("comp '\\n\\n' + two stops", COMP, {**G, "prompt": PROMPT, "stop": ["zzz", "\n\n"]}),
    ("comp stop_token_ids (no text)", COMP, {**G, "prompt": PROMPT, "stop_token_ids": [DOT]}),
]
for label, path, body in cases:
    for inc in (False, True):
        b = {**body, "include_stop_str_in_output": inc}
        r = both(path, b, n=500, label=f"{label} include={inc}")
        tv, tr = text_of(r["vllm"][1]), text_of(r["rose"][1])
        fv = r["vllm"][1]["choices"][0] if isinstance(r["vllm"][1], dict) else None
        fr = r["rose"][1]["choices"][0] if isinstance(r["rose"][1], dict) else None
        verdict(f"{label} include={inc} (text, finish, stop_reason, usage)",
                (tv, fv and fv.get("finish_reason"), fv and fv.get("stop_reason"), usage3(r["vllm"][1])),
                (tr, fr and fr.get("finish_reason"), fr and fr.get("stop_reason"), usage3(r["rose"][1])))
        rs = both_stream(path, {**b, "stream": True}, label=f"{label} include={inc}")
        verdict(f"{label} include={inc} streamed joined text", joined(rs["vllm"][1], "text"), joined(rs["rose"][1], "text"))
        verdict(f"{label} include={inc} stream text == non-stream (vllm, rose)",
                joined(rs["vllm"][1], "text").get(0) == tv, joined(rs["rose"][1], "text").get(0) == tr)
