"""2. stream_options {include_usage, continuous_usage_stats}: every chunk's usage, n=1 and n=2."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both_stream, verdict

SO = {"include_usage": True, "continuous_usage_stats": True}
G = {"model": MODEL, "temperature": 0, "max_tokens": 6, "stream": True, "stream_options": SO}
N2 = {"model": MODEL, "temperature": 1.0, "top_k": 1, "n": 2, "max_tokens": 4, "stream": True, "stream_options": SO}


def usages(chunks):
    out = []
    for c in chunks:
        if not isinstance(c, dict):
            continue
        u = c.get("usage")
        idx = [ch.get("index") for ch in c.get("choices", []) or []]
        out.append((idx, None if u is None else (u["prompt_tokens"], u["completion_tokens"], u["total_tokens"])))
    return out


for label, path, body in [
    ("chat", CHAT, {**G, "messages": MSG}),
    ("comp", COMP, {**G, "prompt": PROMPT}),
    ("chat n2", CHAT, {**N2, "messages": MSG}),
    ("comp n2", COMP, {**N2, "prompt": PROMPT}),
    ("comp echo", COMP, {**G, "prompt": PROMPT, "echo": True}),
    ("chat stop", CHAT, {**G, "messages": MSG, "max_tokens": 16, "stop": [" is"]}),
    ("chat continuous only (no include_usage)", CHAT,
     {**G, "messages": MSG, "stream_options": {"continuous_usage_stats": True}}),
    ("comp include_usage false + continuous", COMP,
     {**G, "prompt": PROMPT, "stream_options": {"include_usage": False, "continuous_usage_stats": True}}),
]:
    r = both_stream(path, body, label=label)
    verdict(f"{label} usage per chunk [(choice idx, usage)]", usages(r["vllm"][1]), usages(r["rose"][1]))
