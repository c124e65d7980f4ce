"""8. Edge cases across the fields: a character split over tokens (emoji) in a stream with return_token_ids and
continuous usage; the same fields on /v1/responses (skip_special_tokens + logit_bias, include_stop_str_in_output + stop)."""
from rc import CHAT, COMP, MODEL, both, both_stream, joined, verdict

EM = "Emoji party: 🎉"
SO = {"include_usage": True, "continuous_usage_stats": True}
for label, path, body in [
    ("comp emoji", COMP, {"model": MODEL, "prompt": EM, "temperature": 0, "max_tokens": 7}),
    ("chat emoji", CHAT, {"model": MODEL, "messages": [{"role": "user", "content": "Reply with three emojis: 🎉"}],
                          "temperature": 0, "max_tokens": 7}),
]:
    b = {**body, "return_token_ids": True, "stream": True, "stream_options": SO}
    r = both_stream(path, b, label=label, maxchunks=14)
    for key in ("text", "token_ids"):
        verdict(f"{label} joined {key}", joined(r["vllm"][1], key), joined(r["rose"][1], key))
    per = lambda ch: [(c["choices"][0].get("token_ids") if c.get("choices") else None,  # noqa: E731
                       (c.get("usage") or {}).get("completion_tokens")) for c in ch if isinstance(c, dict)]
    verdict(f"{label} per chunk (token_ids, usage.completion_tokens)", per(r["vllm"][1]), per(r["rose"][1]))


def resp(j):
    if not isinstance(j, dict):
        return j
    if j.get("error"):
        return j["error"].get("message")
    return [c.get("text") for o in j.get("output", []) if o.get("type") == "message" for c in o.get("content", [])]


R = {"model": MODEL, "input": "What is the capital of France?", "temperature": 0, "max_output_tokens": 12}
for label, body in [
    ("responses plain", R),
    ("responses logit_bias <|im_start|> +12", {**R, "logit_bias": {"1": 12}}),
    ("responses logit_bias +12, skip_special_tokens false", {**R, "logit_bias": {"1": 12}, "skip_special_tokens": False}),
    ("responses stop ' is'", {**R, "stop": [" is"]}),
    ("responses stop ' is' + include_stop_str_in_output", {**R, "stop": [" is"], "include_stop_str_in_output": True}),
]:
    r = both("/v1/responses", body, n=300, label=label)
    verdict(label, (r["vllm"][0], resp(r["vllm"][1])), (r["rose"][0], resp(r["rose"][1])))
