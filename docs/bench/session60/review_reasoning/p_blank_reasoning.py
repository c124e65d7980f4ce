# LOW: Qwen3's no-think answer ('<think>\n\n</think>\n\nAnswer', as with the /no_think soft
# switch) gives reasoning "\n\n" in chat and a Responses `reasoning` item of blank text
# (llama.cpp strips the reasoning and gives none; vLLM gives "\n\n" in chat too).
import sys; sys.path.insert(0, "/tmp/s60/review_reasoning")
from common import *
with client("qwen3") as h:
    ids = [tok(h, t)[0] for t in ("<think>", "\n", "</think>", "a")]
    for seed in range(300):
        body = {"messages": [{"role": "user", "content": "Q"}], "seed": seed, "temperature": 1.0, "max_tokens": 6, "allowed_token_ids": ids}
        raw = h.post("/v1/chat/completions", json={**body, "reasoning_format": "none"}).json()["choices"][0]["message"]["content"]
        if re.fullmatch(r"<think>\n+</think>\n*a.*", raw or "", re.S) if (re := __import__("re")) else False:
            break
    else:
        raise SystemExit("no seed")
    m = h.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]
    print("output", repr(raw)); print("chat reasoning=%r content=%r" % (m["reasoning"], m["content"]))
    st = join_chat(sse(h.post("/v1/chat/completions", json={**body, "stream": True}).text))
    print("chat stream:", st)
    bias = {str(i): 100 for i in ids}
    # Responses has no allowed_token_ids: reproduce the same text through chat-equivalent params is not possible; show the chat's Responses twin via input_tokens-free route
    r = None and 0

    import re as _re
    for seed in range(300):
        r = h.post("/v1/responses", json={"input": "Q", "seed": seed, "temperature": 1.0, "max_output_tokens": 6, "logit_bias": bias}).json()
        items = r["output"]
        if items and items[0]["type"] == "reasoning" and not items[0]["content"][0]["text"].strip():
            print("responses seed", seed, [(i["type"], i["content"]) for i in items], r["usage"]["output_tokens_details"]); break
    else:
        print("responses: no seed found")
