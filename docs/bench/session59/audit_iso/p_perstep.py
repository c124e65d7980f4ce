"""Per-step cost one request adds to everybody: victim = a streamed greedy 60-token request;
its token gaps are measured alone, beside a 'plain' adversary (same n / max_tokens) and beside
the same adversary with one extra field. usage: p_perstep.py [names...]"""
import asyncio, json, statistics, sys, time
import httpx
from h import BASE

VICTIM = {"prompt": "The capital of France is", "max_tokens": 60, "temperature": 0, "ignore_eos": True, "stream": True}

async def victim(c):
    gaps, t0, last, text = [], time.perf_counter(), None, ""
    async with c.stream("POST", BASE + "/v1/completions", json=VICTIM, timeout=600) as r:
        async for line in r.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                now = time.perf_counter()
                if last is not None: gaps.append(now - last)
                last = now
                j = json.loads(line[6:]); text += j["choices"][0]["text"] if j.get("choices") else ""
    return text, time.perf_counter() - t0, statistics.median(gaps) * 1000, max(gaps) * 1000

def base(n, mt, **kw):
    b = {"prompt": "Hello there, how are", "max_tokens": mt, "temperature": 0.7, "seed": 1, "n": n, "ignore_eos": True}
    b.update(kw); return b

import os
N, MT = int(os.environ.get("N", 32)), int(os.environ.get("MT", 40))
CASES = {
  "plain": ("/v1/completions", base(N, MT)),
  "allowed_all": ("/v1/completions", base(N, MT, allowed_token_ids=list(range(49152)))),
  "allowed_dup": ("/v1/completions", base(N, MT, allowed_token_ids=[5] * 300000)),
  "bias_all": ("/v1/completions", base(N, MT, logit_bias={str(i): 0.01 for i in range(49152)})),
  "stop_ids_dup_min": ("/v1/completions", base(N, MT, stop_token_ids=[49151] * 300000, min_tokens=MT)),
  "bad_words_max": ("/v1/completions", base(N, MT, bad_words=[("w%d " % i) * 12 for i in range(1024)])),
  "logprobs20": ("/v1/completions", base(N, MT, logprobs=20)),
  "rep_pen_longprompt": ("/v1/completions", base(N, MT, prompt="word " * 1500, repetition_penalty=1.3, presence_penalty=1, frequency_penalty=1)),
  "json_enum": ("/v1/completions", base(N, MT, guided_json={"enum": ["v%d" % i for i in range(3000)]})),
  "regex_alt": ("/v1/completions", base(N, MT, guided_regex="(" + "|".join("w%d" % i for i in range(5000)) + ")+")),
  "stops64": ("/v1/completions", base(N, MT, stop=[("ab" * 128)[:255] + chr(65 + i % 26) for i in range(64)])),
  "infill_k1000": ("/completion", {"prompt": "def f(x):", "n_predict": MT, "n_cmpl": N, "samplers": ["top_k", "top_p", "infill"], "top_k": 1000, "top_p": 1.0, "temperature": 0.7, "seed": 1}),
  "llama_plain": ("/completion", {"prompt": "def f(x):", "n_predict": MT, "n_cmpl": N, "temperature": 0.7, "seed": 1, "ignore_eos": True}),
  "top_k_huge_p": ("/v1/completions", base(N, MT, top_k=49152, top_p=0.999999, min_p=1e-9)),
}

async def adv(c, path, body):
    t = time.perf_counter()
    r = await c.post(BASE + path, content=json.dumps(body).encode(), headers={"content-type": "application/json"}, timeout=600)
    return r.status_code, round(time.perf_counter() - t, 2), r.text[:150] if r.status_code != 200 else len(r.content)

async def main():
    names = sys.argv[1:] or list(CASES)
    async with httpx.AsyncClient(timeout=600) as c:
        alone = await victim(c)
        print(f"victim alone: total {alone[1]:.2f}s median gap {alone[2]:.1f}ms max {alone[3]:.1f}ms", flush=True)
        for name in names:
            path, body = CASES[name]
            async def late_victim():
                await asyncio.sleep(0.3); return await victim(c)
            v, a = await asyncio.gather(late_victim(), adv(c, path, body))
            same = v[0] == alone[0]
            print(f"{name:20s} adv={a} | victim total {v[1]:.2f}s median gap {v[2]:.1f}ms max {v[3]:.1f}ms identical={same}", flush=True)

if __name__ == "__main__":
    asyncio.run(main())
