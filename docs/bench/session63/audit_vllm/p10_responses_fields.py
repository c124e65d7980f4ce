"""/v1/responses: each field vLLM's ResponsesRequest accepts, on both servers (plus a few OpenAI ones)."""
import json
from common import post, MODEL

B = {"model": MODEL, "input": "What is the capital of France?", "max_output_tokens": 12, "temperature": 0}
def text(j):
    try:
        return [(o.get("type"), [c.get("text") for c in o.get("content") or []] if o.get("type") == "message" else {k: o.get(k) for k in ("name", "arguments")}) for o in j["output"]], j.get("status"), (j.get("usage") or {}).get("output_tokens")
    except Exception:
        return str(j)[:300]
def R(label, **kw):
    body = {**B, **kw}
    out = {}
    for s in ("vllm", "rose"):
        st, j, _ = post(s, "/v1/responses", body)
        out[s] = (st, text(j) if st == 200 else (j.get("error", {}).get("message") if isinstance(j, dict) and isinstance(j.get("error"), dict) else str(j)[:300]))
    same = "SAME" if json.dumps(out["vllm"]) == json.dumps(out["rose"]) else "DIFF"
    print(f"=== [{same}] {label}: {json.dumps(kw)[:200]}\n   vllm: {json.dumps(out['vllm'], ensure_ascii=False)[:500]}\n   rose: {json.dumps(out['rose'], ensure_ascii=False)[:500]}")

R("baseline")
R("input as message list", input=[{"role": "user", "content": "What is the capital of France?"}])
R("input with input_text parts", input=[{"role": "user", "content": [{"type": "input_text", "text": "What is the capital of France?"}]}])
R("instructions", instructions="Answer in French.")
R("stop", stop=["Paris"])
R("stop_token_ids", stop_token_ids=[30])
R("top_k 1 temp 1", top_k=1, temperature=1.0, seed=1)
R("min_p", min_p=0.5)
R("repetition_penalty", repetition_penalty=2.0)
R("presence_penalty", presence_penalty=2.0)
R("frequency_penalty", frequency_penalty=2.0)
R("logit_bias", logit_bias={"7042": -100})
R("ignore_eos", ignore_eos=True)
R("seed", seed=3, temperature=1.0)
R("text.format json_schema", text={"format": {"type": "json_schema", "name": "c", "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True}}, max_output_tokens=24)
R("text.format json_object", text={"format": {"type": "json_object"}}, max_output_tokens=24)
R("structured_outputs choice", structured_outputs={"choice": ["yes", "no"]})
R("top_logprobs 2", top_logprobs=2, include=["message.output_text.logprobs"])
R("tools function (responses shape), tool_choice required", tools=[{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}, "strict": True}], tool_choice="required", max_output_tokens=48, input="Weather in Paris?")
R("reasoning effort low", reasoning={"effort": "low"})
R("reasoning null", reasoning=None)
R("include_reasoning false", include_reasoning=False)
R("include_stop_str_in_output", include_stop_str_in_output=True, stop=["."])
R("skip_special_tokens false", skip_special_tokens=False)
R("chat_template_kwargs", chat_template_kwargs={"foo": 1})
R("truncation auto", truncation="auto")
R("parallel_tool_calls false", parallel_tool_calls=False)
R("max_tool_calls", max_tool_calls=1)
R("metadata", metadata={"a": "b"})
R("service_tier", service_tier="auto")
R("user", user="u")
R("prompt_cache_key", prompt_cache_key="k")
R("background false", background=False)
R("request_id", request_id="xyz")
R("cache_salt", cache_salt="x")
R("priority 0", priority=0)
R("top_p", top_p=0.5, temperature=1.0, seed=1)
R("max_output_tokens omitted", max_output_tokens=None)
R("stream false explicit", stream=False)
R("unknown field", frobnicate=1)
