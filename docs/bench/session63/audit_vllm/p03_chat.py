"""/v1/chat/completions fields, same body to both servers."""
import json
from common import both, keydiff, MODEL

U = [{"role": "user", "content": "What is the capital of France?"}]
B = {"model": MODEL, "messages": U, "max_tokens": 8, "temperature": 0}
def C(label, width=600, **kw):
    body = dict(B); body.update(kw)
    for k in [k for k, v in kw.items() if v == "__DEL__"]:
        body.pop(k)
    return both("/v1/chat/completions", body, label=label, n=width)

r = C("plain", width=1500)
print("plain keydiff", keydiff(r["vllm"][1], r["rose"][1]))
C("system+user", messages=[{"role": "system", "content": "Answer in French."}] + U)
C("developer role", messages=[{"role": "developer", "content": "Answer in French."}] + U)
C("multi-turn", messages=U + [{"role": "assistant", "content": "Paris."}, {"role": "user", "content": "And of Spain?"}])
r = C("logprobs top 2", logprobs=True, top_logprobs=2, max_tokens=2, width=1500)
print("logprobs keydiff", keydiff(r["vllm"][1], r["rose"][1]))
C("top_logprobs without logprobs", top_logprobs=2, max_tokens=2)
C("n=2 seed", width=1000, **{"n": 2, "seed": 3, "temperature": 1.0})
C("max_completion_tokens 3", max_completion_tokens=3, max_tokens="__DEL__")
C("max_tokens and max_completion_tokens differ", max_completion_tokens=3, max_tokens=5)
C("max_tokens omitted", max_tokens="__DEL__")
C("stop list", stop=["Paris", "\n"])
C("response_format json_object", response_format={"type": "json_object"}, max_tokens=24)
C("response_format json_schema strict", response_format={"type": "json_schema", "json_schema": {"name": "cap", "strict": True, "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}}, max_tokens=24)
C("response_format json_schema strict, not closed", response_format={"type": "json_schema", "json_schema": {"name": "cap", "strict": True, "schema": {"type": "object", "properties": {"city": {"type": "string"}}}}}, max_tokens=24)
C("response_format text", response_format={"type": "text"})
C("add_generation_prompt false", add_generation_prompt=False)
C("continue_final_message", add_generation_prompt=False, continue_final_message=True, messages=U + [{"role": "assistant", "content": "The capital of France is"}])
C("echo true", echo=True, add_generation_prompt=False, continue_final_message=True, messages=U + [{"role": "assistant", "content": "The capital of France is"}])
C("chat_template_kwargs unknown var", chat_template_kwargs={"foo": 1})
C("chat_template_kwargs enable_thinking", chat_template_kwargs={"enable_thinking": False})
C("documents", documents=[{"title": "a", "text": "Paris is big."}])
C("add_special_tokens true", add_special_tokens=True)
C("add_special_tokens false", add_special_tokens=False)
for f, v in [("user", "u1"), ("metadata", {"a": "b"}), ("store", True), ("store", False), ("service_tier", "auto"),
             ("prediction", {"type": "content", "content": "Paris"}), ("modalities", ["text"]), ("modalities", ["text", "audio"]),
             ("audio", {"voice": "alloy", "format": "wav"}), ("web_search_options", {}), ("reasoning_effort", "low"),
             ("reasoning_effort", "none"), ("verbosity", "low"), ("verbosity", "medium"), ("prompt_cache_key", "k"), ("safety_identifier", "s"),
             ("prompt_cache_retention", "24h"), ("parallel_tool_calls", False), ("tool_choice", "none"), ("tool_choice", "auto"),
             ("functions", [{"name": "f", "parameters": {"type": "object", "properties": {}}}]), ("function_call", "auto"),
             ("logit_bias", {"7042": -100}), ("top_k", 1), ("min_p", 0.1), ("repetition_penalty", 1.2), ("min_tokens", 3),
             ("ignore_eos", True), ("skip_special_tokens", False), ("include_stop_str_in_output", True), ("return_token_ids", True),
             ("prompt_logprobs", 1), ("truncate_prompt_tokens", 5), ("structured_outputs", {"choice": ["yes", "no"]}),
             ("guided_choice", ["yes", "no"]), ("request_id", "myid"), ("include_reasoning", False), ("mm_payload", "none")]:
    C(f"{f}={json.dumps(v)}", **{f: v})
C("content parts text", messages=[{"role": "user", "content": [{"type": "text", "text": "What is the capital"}, {"type": "text", "text": "of France?"}]}])
C("content part image_url", messages=[{"role": "user", "content": [{"type": "text", "text": "Describe"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}])
C("name on user", messages=[{"role": "user", "name": "bob", "content": "What is the capital of France?"}])
C("name on assistant", messages=U + [{"role": "assistant", "name": "bot", "content": "Paris."}, {"role": "user", "content": "Thanks"}])
TC = [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]
C("assistant tool_calls + tool msg", messages=[{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": None, "tool_calls": TC},
  {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 20C"}], max_tokens=16)
C("tool msg wrong id", messages=[{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": None, "tool_calls": TC},
  {"role": "tool", "tool_call_id": "call_X", "content": "sunny"}], max_tokens=8)
C("empty messages", messages=[])
C("assistant content empty string last", messages=U + [{"role": "assistant", "content": ""}])
