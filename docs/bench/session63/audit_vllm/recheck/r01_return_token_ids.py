"""1. return_token_ids: true — ids and where they appear (chat/completions, stream or not, n=2, echo, stop)."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, both_stream, joined, verdict

G = {"model": MODEL, "temperature": 0, "max_tokens": 8, "return_token_ids": True}
# vLLM refuses n>1 with greedy; temperature 1 + top_k 1 is greedy in effect and allowed on both.
N2 = {"model": MODEL, "temperature": 1.0, "top_k": 1, "n": 2, "max_tokens": 6, "return_token_ids": True}


def pick(j, chat):
    if not isinstance(j, dict):
        return j
    out = {"TOP.prompt_token_ids": j.get("prompt_token_ids")}
    for c in j.get("choices", []):
        out[f"c{c['index']}"] = {
            "text": (c.get("message") or {}).get("content") if chat else c.get("text"),
            "prompt_token_ids": c.get("prompt_token_ids"),
            "token_ids": c.get("token_ids"),
            "finish": c.get("finish_reason"),
        }
    u = j.get("usage") or {}
    out["usage"] = (u.get("prompt_tokens"), u.get("completion_tokens"), u.get("total_tokens"))  # extra null detail keys ignored
    return out


for label, path, body, chat in [
    ("chat", CHAT, {**G, "messages": MSG}, True),
    ("comp", COMP, {**G, "prompt": PROMPT}, False),
    ("chat n2", CHAT, {**N2, "messages": MSG}, True),
    ("comp n2", COMP, {**N2, "prompt": PROMPT}, False),
    ("comp echo", COMP, {**G, "prompt": PROMPT, "echo": True}, False),
    ("comp stop", COMP, {**G, "prompt": PROMPT, "max_tokens": 16, "stop": ["answer"]}, False),
    ("chat stop", CHAT, {**G, "messages": MSG, "max_tokens": 16, "stop": [" is"]}, True),
    ("chat false", CHAT, {**G, "messages": MSG, "return_token_ids": False}, True),
]:
    r = both(path, body, n=900, label=label)
    verdict(label, pick(r["vllm"][1], chat), pick(r["rose"][1], chat))

for label, path, body in [
    ("chat", CHAT, {**G, "messages": MSG, "stream": True}),
    ("comp", COMP, {**G, "prompt": PROMPT, "stream": True}),
    ("chat n2", CHAT, {**N2, "messages": MSG, "stream": True}),
    ("comp n2", COMP, {**N2, "prompt": PROMPT, "stream": True}),
    ("comp echo", COMP, {**G, "prompt": PROMPT, "echo": True, "stream": True}),
    ("comp stop", COMP, {**G, "prompt": PROMPT, "max_tokens": 16, "stop": ["answer"], "stream": True}),
    ("chat stop", CHAT, {**G, "messages": MSG, "max_tokens": 16, "stop": [" is"], "stream": True}),
]:
    r = both_stream(path, body, label=label)
    v, s = r["vllm"][1], r["rose"][1]
    for key in ("text", "token_ids", "prompt_token_ids"):
        verdict(f"{label} joined {key}", joined(v, key), joined(s, key))
    tv = [c.get("prompt_token_ids") for c in v if isinstance(c, dict)]
    ts = [c.get("prompt_token_ids") for c in s if isinstance(c, dict)]
    verdict(f"{label} top-level prompt_token_ids per chunk", tv, ts)
