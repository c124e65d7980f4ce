"""Greedy text equality: 5 chat + 5 completion prompts, 32 tokens, temperature 0, both servers.
Where the texts differ, print the first divergent position with both top-5 logprobs."""
import json
from common import post, MODEL

CHAT = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You are a terse assistant."}, {"role": "user", "content": "Name three primary colors."}],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "Tell me a fun fact about cats."}],
    [{"role": "user", "content": "Explain what a CPU does in one sentence."}],
]
COMP = ["The capital of France is", "Once upon a time", "def fibonacci(n):", "1, 2, 3, 4,", "The quick brown fox"]

def cmp(kind, body, get_tokens):
    r = {}
    for s in ("vllm", "rose"):
        st, j, dt = post(s, "/v1/chat/completions" if kind == "chat" else "/v1/completions", body)
        r[s] = (st, j, dt)
    tv, tr = (get_tokens(r[s][1]) for s in ("vllm", "rose"))
    same = [t[0] for t in tv] == [t[0] for t in tr]
    textv = r["vllm"][1]["choices"][0].get("message", {}).get("content") if kind == "chat" else r["vllm"][1]["choices"][0]["text"]
    textr = r["rose"][1]["choices"][0].get("message", {}).get("content") if kind == "chat" else r["rose"][1]["choices"][0]["text"]
    print(f"{kind} same_text={textv == textr} same_tokens={same} vllm={r['vllm'][1]['usage']} rose={r['rose'][1]['usage']} t={r['vllm'][2]:.1f}/{r['rose'][2]:.1f}s")
    print("   vllm:", json.dumps(textv)[:200]); print("   rose:", json.dumps(textr)[:200])
    if not same:
        for i, (a, b) in enumerate(zip(tv, tr)):
            if a[0] != b[0]:
                print(f"   diverge at {i}: vllm {a} | rose {b}"); break
        else:
            print(f"   length differs: {len(tv)} vs {len(tr)}")
    # max abs logprob diff along the common prefix
    d = [abs(a[1] - b[1]) for a, b in zip(tv, tr) if a[0] == b[0]]
    print(f"   max |dlogprob| on common prefix: {max(d) if d else None:.2e}")

def chat_tokens(j):
    return [(c["token"], c["logprob"], [(t["token"], round(t["logprob"], 4)) for t in c["top_logprobs"]]) for c in j["choices"][0]["logprobs"]["content"]]

def comp_tokens(j):
    lp = j["choices"][0]["logprobs"]
    return [(t, l, sorted(((k, round(v, 4)) for k, v in top.items()), key=lambda x: -x[1])) for t, l, top in zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"])]

if __name__ == "__main__":
  for m in CHAT:
    cmp("chat", {"model": MODEL, "messages": m, "max_tokens": 32, "temperature": 0, "logprobs": True, "top_logprobs": 5}, chat_tokens)
  for p in COMP:
    cmp("comp", {"model": MODEL, "prompt": p, "max_tokens": 32, "temperature": 0, "logprobs": 5}, comp_tokens)
