"""6. return_tokens_as_token_ids: true with logprobs (completions logprobs 2; chat logprobs + top_logprobs 2)."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, both_stream, trim, verdict

G = {"model": MODEL, "temperature": 0, "max_tokens": 4}
EMOJI = "Emoji party: 🎉"


def comp_lp(j):
    if not isinstance(j, dict):
        return j
    lp = j["choices"][0].get("logprobs") or {}
    return {"text": j["choices"][0].get("text"), "tokens": lp.get("tokens"), "text_offset": lp.get("text_offset"),
            "top_keys": [sorted((t or {}).keys()) for t in (lp.get("top_logprobs") or [])],
            "lp": [round(x, 3) if x is not None else None for x in (lp.get("token_logprobs") or [])]}


def chat_lp(j):
    if not isinstance(j, dict):
        return j
    c = (j["choices"][0].get("logprobs") or {}).get("content") or []
    return [{"token": e["token"], "bytes": e.get("bytes"), "lp": round(e["logprob"], 3),
             "top": [(t["token"], t.get("bytes")) for t in e.get("top_logprobs", [])]} for e in c]


for label, body in [("comp", {**G, "prompt": PROMPT, "logprobs": 2}),
                    ("comp echo", {**G, "prompt": PROMPT, "logprobs": 2, "echo": True, "max_tokens": 2}),
                    ("comp emoji", {**G, "prompt": EMOJI, "logprobs": 2, "max_tokens": 4}),
                    ("comp emoji echo", {**G, "prompt": EMOJI, "logprobs": 1, "echo": True, "max_tokens": 1})]:
    for flag in (True, False):
        r = both(COMP, {**body, "return_tokens_as_token_ids": flag}, n=500, label=f"{label} flag={flag}")
        verdict(f"{label} flag={flag}", comp_lp(r["vllm"][1]), comp_lp(r["rose"][1]))

for label, body in [("chat", {**G, "messages": MSG, "logprobs": True, "top_logprobs": 2}),
                    ("chat emoji", {**G, "messages": [{"role": "user", "content": "Reply with one emoji: 🎉"}],
                                    "logprobs": True, "top_logprobs": 2, "max_tokens": 4})]:
    for flag in (True, False):
        r = both(CHAT, {**body, "return_tokens_as_token_ids": flag}, n=500, label=f"{label} flag={flag}")
        verdict(f"{label} flag={flag}", chat_lp(r["vllm"][1]), chat_lp(r["rose"][1]))

# streamed
for label, path, body in [("comp stream", COMP, {**G, "prompt": PROMPT, "logprobs": 2}),
                          ("chat stream", CHAT, {**G, "messages": MSG, "logprobs": True, "top_logprobs": 2})]:
    rs = both_stream(path, {**body, "return_tokens_as_token_ids": True, "stream": True}, label=label, maxchunks=10)

# flag without logprobs: no effect expected
r = both(COMP, {**G, "prompt": PROMPT, "return_tokens_as_token_ids": True}, n=400, label="comp flag without logprobs")
r = both(CHAT, {**G, "messages": MSG, "return_tokens_as_token_ids": True}, n=400, label="chat flag without logprobs")
