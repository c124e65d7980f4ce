from h import *
import math
def t(label, fn, b):
    s, j = fn(dict(b))
    if s == 200:
        ch = j["choices"][0]
        lp = ch.get("logprobs")
        tops = None
        if lp and isinstance(lp, dict) and "top_logprobs" in lp and lp["top_logprobs"]:
            tops = [len(x) for x in lp["top_logprobs"]][:7]
            mass = [round(sum(math.exp(v) for v in x.values()),3) for x in lp["top_logprobs"]][:4]
        elif lp and lp.get("content"):
            tops = [len(x["top_logprobs"]) for x in lp["content"]][:7]
            mass = [round(sum(math.exp(y["logprob"]) for y in x["top_logprobs"]),3) for x in lp["content"]][:4]
        else: mass=None
        show(label, [s, j["usage"]["completion_tokens"], ch["finish_reason"], "tops", tops, "mass", mass])
    else: show(label, [s, j.get("error", j)])
M = "tinygc"
t("comp default", comp, {"prompt":"hello world","ignore_eos":True})
t("chat default", chat, {"ignore_eos":True})
t("comp max 20", comp, {"prompt":"hello world","max_tokens":20,"ignore_eos":True})
t("comp post_sampling default", comp, {"prompt":"hello world","logprobs":10,"post_sampling_probs":True,"ignore_eos":True})
t("comp post_sampling T1 top_k 0", comp, {"prompt":"hello world","logprobs":10,"post_sampling_probs":True,"temperature":1,"top_k":0,"top_p":1,"ignore_eos":True})
t("comp post_sampling temp null", comp, {"prompt":"hello world","logprobs":10,"post_sampling_probs":True,"temperature":None,"ignore_eos":True})
t("chat post_sampling default", chat, {"logprobs":True,"top_logprobs":10,"post_sampling_probs":True,"ignore_eos":True})
t("repeat_last_n 64", comp, {"prompt":"hello world","repeat_last_n":64})
t("repeat_last_n -1", comp, {"prompt":"hello world","repeat_last_n":-1})
t("repeat_last_n 64 rp 1", comp, {"prompt":"hello world","repeat_last_n":64,"repetition_penalty":1.0})
t("samplers temperature only", comp, {"prompt":"hello world","samplers":["temperature"],"logprobs":10,"post_sampling_probs":True,"ignore_eos":True})
t("min_tokens 10 default", comp, {"prompt":"hello world","min_tokens":10})
t("echo0", comp, {"prompt":"hello world","echo":True,"max_tokens":0})
s,j = comp({"prompt":"hello world","max_tokens":5,"temperature":0}); print(j["choices"][0]["text"])
