from h import *
def t(label, fn, b):
    s, j = fn(dict(b))
    if s == 200:
        if "choices" in j:
            out = [(c.get("text", (c.get("message") or {}).get("content")), c["finish_reason"]) for c in j["choices"]]
        else: out = j
        show(label, [s, out])
    else: show(label, [s, j.get("error", j) if isinstance(j, dict) else j])
P = "The capital of France is"
# stop with n>1 completions
t("stop n3", comp, {"prompt":P,"n":3,"seed":3,"max_tokens":20,"stop":[","," and"]})
# n_cmpl
t("n_cmpl 2", comp, {"prompt":P,"n_cmpl":2,"max_tokens":3,"seed":4})
t("n_cmpl 2 n 3", comp, {"prompt":P,"n_cmpl":2,"n":3,"max_tokens":3})
# seed -1
t("seed -1", comp, {"prompt":P,"seed":-1,"max_tokens":4})
# best_of
t("best_of 2 n1", comp, {"prompt":P,"best_of":2,"max_tokens":4})
t("best_of 1 n1", comp, {"prompt":P,"best_of":1,"max_tokens":4})
t("best_of chat", chat, {"best_of":1,"max_tokens":4})
# stream_interval without stream
t("stream_interval no stream", comp, {"prompt":P,"stream_interval":3,"max_tokens":3})
t("stream_interval 0", comp, {"prompt":P,"stream_interval":0,"max_tokens":3})
# echo with chat refused
t("chat echo true", chat, {"echo":True})
# top_logprobs 0 with logprobs
s,j = chat({"logprobs":True,"top_logprobs":0,"max_tokens":2}); show("top_logprobs 0", j["choices"][0]["logprobs"])
s,j = chat({"logprobs":True,"max_tokens":2}); show("logprobs no top", j["choices"][0]["logprobs"])
# stream_options include_usage false
s,ch = stream("/v1/completions", {"prompt":P,"max_tokens":2,"stream_options":{"include_usage":False}}); show("include_usage false", ch)
s,ch = stream("/v1/completions", {"prompt":P,"max_tokens":2,"stream_options":{}}); show("stream_options {}", ch[:1])
t("stream_options null", comp, {"stream_options":None,"max_tokens":2})
t("stream_options cont false", comp, {"stream":True,"stream_options":{"continuous_usage_stats":False},"max_tokens":2} if False else {"stream_options":{"continuous_usage_stats":False},"max_tokens":2})
# min_tokens and echo only
t("echo0 min_tokens 1", comp, {"echo":True,"max_tokens":0,"min_tokens":1})
t("echo0 min_tokens 0", comp, {"echo":True,"max_tokens":0,"min_tokens":0})
# moderation / prompt_cache_options
t("moderation", chat, {"moderation":{"model":"omni-moderation-latest"},"max_tokens":2})
t("prompt_cache_options", chat, {"prompt_cache_options":{"mode":"explicit"},"max_tokens":2})
t("breakpoint part", chat, {"messages":[{"role":"user","content":[{"type":"text","text":"hi","prompt_cache_breakpoint":{"mode":"explicit"}}]}],"max_tokens":2})
t("verbosity medium", chat, {"verbosity":"medium","max_tokens":2})
t("reasoning_effort none", chat, {"reasoning_effort":"none","max_tokens":2})
t("reasoning_effort none comp", comp, {"reasoning_effort":"none","max_tokens":2})
