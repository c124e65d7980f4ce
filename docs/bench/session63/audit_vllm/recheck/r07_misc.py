"""7. chat top_logprobs 0 without logprobs; mm_payload "tensors"/"none"; include_reasoning on /v1/responses."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, text_of, verdict

G = {"model": MODEL, "temperature": 0, "max_tokens": 6}
for label, body in [("top_logprobs 0, no logprobs", {**G, "messages": MSG, "top_logprobs": 0}),
                    ("top_logprobs 0, logprobs false", {**G, "messages": MSG, "top_logprobs": 0, "logprobs": False}),
                    ("top_logprobs null", {**G, "messages": MSG, "top_logprobs": None}),
                    ("top_logprobs 0, logprobs true", {**G, "messages": MSG, "top_logprobs": 0, "logprobs": True}),
                    ("top_logprobs 2, no logprobs", {**G, "messages": MSG, "top_logprobs": 2})]:
    r = both(CHAT, body, n=500, label=label)
    f = lambda j: (text_of(j), j["choices"][0].get("logprobs")) if isinstance(j, dict) and "choices" in j else j  # noqa: E731
    verdict(label, (r["vllm"][0], f(r["vllm"][1])), (r["rose"][0], f(r["rose"][1])))

for mp in ("tensors", "none", "bogus"):
    for path, body in [(CHAT, {**G, "messages": MSG}), (COMP, {**G, "prompt": PROMPT}),
                       ("/v1/responses", {"model": MODEL, "input": "What is the capital of France?",
                                          "temperature": 0, "max_output_tokens": 16})]:
        r = both(path, {**body, "mm_payload": mp}, n=300, label=f"{path} mm_payload={mp}")
        tv = text_of(r["vllm"][1]) if path != "/v1/responses" else (r["vllm"][1].get("output_text") if isinstance(r["vllm"][1], dict) else None)
        tr = text_of(r["rose"][1]) if path != "/v1/responses" else (r["rose"][1].get("output_text") if isinstance(r["rose"][1], dict) else None)
        verdict(f"{path} mm_payload={mp} (status)", r["vllm"][0], r["rose"][0])


def out_items(j):
    if not isinstance(j, dict):
        return j
    return {"status": j.get("status"), "types": [o.get("type") for o in j.get("output", [])],
            "text": [c.get("text") for o in j.get("output", []) if o.get("type") == "message" for c in o.get("content", [])],
            "usage": j.get("usage")}


for ir in (True, False):
    r = both("/v1/responses", {"model": MODEL, "input": "What is the capital of France?", "temperature": 0,
                               "max_output_tokens": 16, "include_reasoning": ir}, n=600, label=f"responses include_reasoning={ir}")
    verdict(f"responses include_reasoning={ir}", (r["vllm"][0], out_items(r["vllm"][1])), (r["rose"][0], out_items(r["rose"][1])))
