"""5. add_special_tokens: completions false, chat true (SmolLM2's tokenizer adds no BOS: post_processor single = [A])."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, post, text_of, usage3, verdict

for s in ("vllm", "rose"):
    for ast in (True, False):
        print(s, f"/tokenize add_special_tokens={ast}",
              post(s, "/tokenize", {"model": MODEL, "prompt": PROMPT, "add_special_tokens": ast})[1])
G = {"model": MODEL, "temperature": 0, "max_tokens": 6, "return_token_ids": True}


def pick(j):
    if not isinstance(j, dict):
        return j
    c = j["choices"][0]
    return {"text": text_of(j), "prompt_ids": j.get("prompt_token_ids") or c.get("prompt_token_ids"),
            "usage": usage3(j)}


for label, path, base in [("comp", COMP, {**G, "prompt": PROMPT}), ("chat", CHAT, {**G, "messages": MSG}),
                          ("comp ids prompt", COMP, {**G, "prompt": [504, 3575, 282, 4649, 314]})]:
    for ast in (None, True, False):
        b = dict(base) if ast is None else {**base, "add_special_tokens": ast}
        r = both(path, b, n=300, label=f"{label} add_special_tokens={ast}")
        verdict(f"{label} add_special_tokens={ast}", pick(r["vllm"][1]), pick(r["rose"][1]))
for s in ("vllm", "rose"):
    for ast in (None, True, False):
        b = {"model": MODEL, "messages": MSG}
        if ast is not None:
            b["add_special_tokens"] = ast
        print(s, f"/tokenize messages add_special_tokens={ast}", post(s, "/tokenize", b)[1].get("count"))
