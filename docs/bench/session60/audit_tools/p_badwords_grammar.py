# bad_words ["yes","no"] with structured_outputs.choice ["yes","no"]: which tokens spelled the answer?
from common import *
for w in ["yes", "no", " no"]:
    print(repr(w), post("/tokenize", {"model": M, "prompt": w, "add_special_tokens": False}).json()["tokens"])
for bw in [["yes", "no"], None]:
    body = {"model": M, "messages": [{"role": "user", "content": "A tree as JSON"}], "max_tokens": 10, "temperature": 0, "structured_outputs": {"choice": ["yes", "no"]}, "logprobs": True}
    if bw: body["bad_words"] = bw
    j = post("/v1/chat/completions", body).json()
    print("bad_words", bw, "->", j["choices"][0]["message"]["content"], [(t["token"]) for t in j["choices"][0]["logprobs"]["content"]])
