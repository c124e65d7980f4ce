from h import *
s, j, _ = comp(logprobs=0, stop="lobster"); c = j["choices"][0]; print(repr(c["text"]), c["logprobs"]["tokens"], c["finish_reason"], j["usage"])
s, j, _ = comp(logprobs=0, logit_bias={"2": 100}, max_tokens=3); c = j["choices"][0]; print(repr(c["text"]), c["logprobs"], c["finish_reason"], j["usage"])
s, j, _ = chat(logprobs=True, logit_bias={"2": 100}, max_tokens=3); c = j["choices"][0]; print(repr(c["message"]), c["logprobs"], c["finish_reason"], j["usage"])
s, j, _ = chat(logprobs=True, stop="े", max_tokens=5); c = j["choices"][0]; print(repr(c["message"]), [x["token"] for x in c["logprobs"]["content"]], c["finish_reason"])
s, ev = sse("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3, "logprobs": True, "logit_bias": {"2": 100}, "stream": True})
for e in ev: print("  ", short(e, 400))
s, ev = sse("/v1/completions", {"prompt": "hello world", "max_tokens": 8, "temperature": 0, "logprobs": 0, "stop": "lobster", "stream": True})
for e in ev: print("  ", short(e, 400))
