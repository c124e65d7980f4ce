"""Does each accepted field have its effect? Same request on both servers, compare the visible result.
Chat prompt 'What is the capital of France?' ends by itself after 8 tokens (EOS), which lets
min_tokens / ignore_eos / stop_token_ids show."""
import json
from common import post, stream, MODEL

U = [{"role": "user", "content": "What is the capital of France?"}]
CH = {"model": MODEL, "messages": U, "max_tokens": 16, "temperature": 0}
CO = {"model": MODEL, "prompt": "The capital of France is", "max_tokens": 8, "temperature": 0}

def run(label, path, body, view=None):
    out = {}
    for s in ("vllm", "rose"):
        st, j, _ = post(s, path, body)
        if st == 200:
            v = view(j) if view else [(c.get("message", {}).get("content") if "message" in c else c.get("text"), c["finish_reason"]) for c in j["choices"]]
            v = (v, j.get("usage", {}).get("completion_tokens"))
        else:
            v = (st, j.get("error", {}).get("message") if isinstance(j, dict) else j)
        out[s] = v
    same = "SAME" if json.dumps(out["vllm"]) == json.dumps(out["rose"]) else "DIFF"
    print(f"=== [{same}] {label}\n   vllm: {json.dumps(out['vllm'])[:600]}\n   rose: {json.dumps(out['rose'])[:600]}")

C, P = "/v1/chat/completions", "/v1/completions"
run("chat baseline", C, CH)
run("chat min_tokens 12", C, {**CH, "min_tokens": 12})
run("chat ignore_eos", C, {**CH, "ignore_eos": True})
run("chat stop_token_ids [30] ('.')", C, {**CH, "stop_token_ids": [30]})
run("chat stop 'France'", C, {**CH, "stop": "France"})
run("chat presence_penalty 2 + frequency 2", C, {**CH, "presence_penalty": 2, "frequency_penalty": 2, "max_tokens": 24, "messages": [{"role": "user", "content": "Count: 1, 2, 3, 4, 5"}]})
run("chat repetition_penalty 2", C, {**CH, "repetition_penalty": 2.0})
run("chat bad_words ['Paris']", C, {**CH, "bad_words": ["Paris"]})
run("chat allowed_token_ids", C, {**CH, "allowed_token_ids": [504, 3575, 7042, 30, 2]})
run("chat logit_bias +10 on ' Paris'", C, {**CH, "logit_bias": {"7042": 10}, "max_tokens": 4})
run("chat truncate_prompt_tokens 4", C, {**CH, "truncate_prompt_tokens": 4})
run("chat top_k 1 temp 1.5 seed 5", C, {**CH, "top_k": 1, "temperature": 1.5, "seed": 5})
run("chat top_p 1e-9 temp 1.5 seed 5", C, {**CH, "top_p": 1e-9, "temperature": 1.5, "seed": 5})
run("chat min_p 1.0 temp 1.5 seed 5", C, {**CH, "min_p": 1.0, "temperature": 1.5, "seed": 5})
run("chat request_id", C, {**CH, "request_id": "abc"}, view=lambda j: j["id"])
run("comp request_id", P, {**CO, "request_id": "abc"}, view=lambda j: j["id"])
run("chat top_logprobs 0", C, {**CH, "logprobs": True, "top_logprobs": 0, "max_tokens": 2}, view=lambda j: j["choices"][0]["logprobs"]["content"])
run("chat logprobs true no top_logprobs", C, {**CH, "logprobs": True, "max_tokens": 2}, view=lambda j: j["choices"][0]["logprobs"]["content"])
run("comp logprobs 0", P, {**CO, "logprobs": 0, "max_tokens": 2}, view=lambda j: j["choices"][0]["logprobs"])
run("chat prompt_logprobs 0 (where?)", C, {**CH, "prompt_logprobs": 0, "max_tokens": 1}, view=lambda j: {"top": str(j.get("prompt_logprobs"))[:200], "choice": str(j["choices"][0].get("prompt_logprobs"))[:100]})
run("comp stop + logprobs (tokens of the match kept?)", P, {**CO, "stop": ".", "logprobs": 0, "max_tokens": 8}, view=lambda j: (j["choices"][0]["text"], j["choices"][0]["logprobs"]["tokens"], j["choices"][0]["finish_reason"], j["usage"]))
run("comp stop multi-token 'is: 2'", P, {**CO, "stop": "is: 2", "max_tokens": 16})
run("comp max_tokens 0 echo usage", P, {**CO, "max_tokens": 0, "echo": True}, view=lambda j: (j["choices"][0]["text"], j["choices"][0]["finish_reason"], j["usage"]))
run("comp echo logprobs max_tokens 0", P, {**CO, "max_tokens": 0, "echo": True, "logprobs": 0}, view=lambda j: (j["choices"][0]["logprobs"]["tokens"], j["choices"][0]["logprobs"]["token_logprobs"][:3]))
run("chat n=2 usage", C, {**CH, "n": 2, "temperature": 1.0, "seed": 3}, view=lambda j: j["usage"])
run("chat seed repeat A", C, {**CH, "temperature": 1.0, "seed": 42})
run("chat seed repeat B", C, {**CH, "temperature": 1.0, "seed": 42})
run("chat structured_outputs grammar (lark)", C, {**CH, "structured_outputs": {"grammar": 'start: "yes" | "no"'}})
run("chat structured_outputs json_object true", C, {**CH, "structured_outputs": {"json_object": True}, "max_tokens": 12})
run("chat structured_outputs regex", C, {**CH, "structured_outputs": {"regex": "(Paris|Lyon)!"}})
run("chat response_format json_schema non-strict", C, {**CH, "max_tokens": 24, "response_format": {"type": "json_schema", "json_schema": {"name": "c", "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}})
run("chat stream_interval 3 (non-stream: no effect)", C, {**CH, "stream_interval": 3})
run("chat cache_salt", C, {**CH, "cache_salt": "x"})
run("chat continue_final_message", C, {**CH, "add_generation_prompt": False, "continue_final_message": True, "messages": U + [{"role": "assistant", "content": "The capital of France is"}]})
run("chat continue_final_message without add_generation_prompt false", C, {**CH, "continue_final_message": True, "messages": U + [{"role": "assistant", "content": "The capital of France is"}]})
run("chat continue_final_message last msg user", C, {**CH, "add_generation_prompt": False, "continue_final_message": True})
run("chat max_tokens huge 100000", C, {**CH, "max_tokens": 100000})
run("chat max_completion_tokens huge 100000", C, {**CH, "max_tokens": None, "max_completion_tokens": 100000})
