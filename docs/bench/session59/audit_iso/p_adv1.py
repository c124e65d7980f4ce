"""Each adversarial body runs concurrently with the 6 greedy reference requests."""
import asyncio, json, sys, time
import httpx
from h import *

def B(**kw):
    b = {"prompt": "Hello there, how are", "max_tokens": 16, "temperature": 0}
    b.update(kw); return b

ADV = [
  ("regex a{1000000}", "/v1/completions", B(guided_regex="a{1000000}")),
  ("regex empty lang", "/v1/completions", B(guided_regex="[^\\s\\S]")),
  ("regex empty", "/v1/completions", B(guided_regex="")),
  ("regex lookahead", "/v1/completions", B(guided_regex="(?=a)b")),
  ("regex backref", "/v1/completions", B(guided_regex="(a)\\1")),
  ("regex huge alt", "/v1/completions", B(guided_regex="|".join("w%d" % i for i in range(20000)))),
  ("regex nested rep", "/v1/completions", B(guided_regex="((a{1,50}){1,50}){1,50}")),
  ("json minLength big", "/v1/completions", B(guided_json={"type":"string","minLength":100000})),
  ("json maxItems", "/v1/completions", B(guided_json={"type":"array","minItems":5000,"items":{"type":"integer"}})),
  ("json recursive", "/v1/completions", B(guided_json={"$ref":"#/$defs/a","$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"required":["x"]}}})),
  ("json impossible", "/v1/completions", B(guided_json={"allOf":[{"type":"string"},{"type":"integer"}]})),
  ("json enum huge", "/v1/completions", B(guided_json={"enum":["v%d" % i for i in range(30000)]})),
  ("json pattern", "/v1/completions", B(guided_json={"type":"string","pattern":"a{1000000}"})),
  ("grammar bad", "/v1/completions", B(guided_grammar="root ::= (")),
  ("grammar deep", "/v1/completions", B(guided_grammar="root ::= " + "(" * 3000 + "\"a\"" + ")" * 3000)),
  ("grammar left rec", "/v1/completions", B(guided_grammar="root ::= root \"a\" | \"b\"")),
  ("choice empty str", "/v1/completions", B(guided_choice=[""])),
  ("choice many", "/v1/completions", B(guided_choice=["c%d" % i for i in range(20000)])),
  ("logit_bias 1e308", "/v1/completions", B(logit_bias={"5": 1e308})),
  ("logit_bias -1e308 all", "/v1/completions", B(logit_bias={str(i): -1e308 for i in range(49152)})),
  ("logit_bias neg id", "/v1/completions", B(logit_bias={"-1": 5})),
  ("logit_bias big id", "/v1/completions", B(logit_bias={"99999999999999999999": 5})),
  ("logit_bias 100 all but eos", "/v1/completions", B(logit_bias={"0": 100, "2": 100}, max_tokens=4)),
  ("allowed []", "/v1/completions", B(allowed_token_ids=[])),
  ("allowed [-1]", "/v1/completions", B(allowed_token_ids=[-1])),
  ("allowed [0] eos", "/v1/completions", B(allowed_token_ids=[0])),
  ("allowed eos min_tokens", "/v1/completions", B(allowed_token_ids=[0, 2], min_tokens=3)),
  ("bad_words weird", "/v1/completions", B(bad_words=["", " ", "\ud800", "a" * 5000])),
  ("bad_words all", "/v1/completions", B(bad_words=["Hello"], allowed_token_ids=[19556])),
  ("n=128", "/v1/completions", B(n=128, max_tokens=4)),
  ("n=129", "/v1/completions", B(n=129, max_tokens=4)),
  ("best_of 20 n 1", "/v1/completions", B(best_of=20, n=1, max_tokens=4)),
  ("logprobs 21", "/v1/completions", B(logprobs=21)),
  ("logprobs 20", "/v1/completions", B(logprobs=20)),
  ("prompt_logprobs 20 n 4", "/v1/completions", B(prompt_logprobs=20, n=4, max_tokens=2)),
  ("prompt_logprobs -1", "/v1/completions", B(prompt_logprobs=-1, max_tokens=2)),
  ("prompt ids oov", "/v1/completions", B(prompt=[49152])),
  ("prompt ids neg", "/v1/completions", B(prompt=[-1])),
  ("prompt ids huge", "/v1/completions", B(prompt=[2**63])),
  ("prompt ids bool", "/v1/completions", B(prompt=[True, 5])),
  ("prompt ids float", "/v1/completions", B(prompt=[1.0, 5])),
  ("prompt empty", "/v1/completions", B(prompt="")),
  ("prompt [] ", "/v1/completions", B(prompt=[])),
  ("prompt [[]]", "/v1/completions", B(prompt=[[]])),
  ("prompt lone surrogate", "/v1/completions", B(prompt="\ud800abc\udfff")),
  ("stop surrogate", "/v1/completions", B(stop=["\udfff"])),
  ("stop 64 long", "/v1/completions", B(stop=["x" * 20000 + str(i) for i in range(64)])),
  ("stop 65", "/v1/completions", B(stop=["s%d" % i for i in range(65)])),
  ("max_tokens 0", "/v1/completions", B(max_tokens=0)),
  ("max_tokens -1", "/v1/completions", B(max_tokens=-1)),
  ("max_tokens 2**63", "/v1/completions", B(max_tokens=2**63)),
  ("max_tokens = cache", "/v1/completions", B(max_tokens=768 - 6)),
  ("temperature 1e-30", "/v1/completions", B(temperature=1e-30, seed=1)),
  ("temperature 1e30", "/v1/completions", B(temperature=1e30, seed=1)),
  ("top_k -1 top_p 1e-300", "/v1/completions", B(temperature=1, top_k=-1, top_p=1e-300, seed=1)),
  ("min_p 1", "/v1/completions", B(temperature=1, min_p=1.0, seed=1)),
  ("rep penalty 1e30", "/v1/completions", B(repetition_penalty=1e30)),
  ("presence 2 freq -2", "/v1/completions", B(presence_penalty=2, frequency_penalty=-2, temperature=1, seed=3)),
  ("seed 2**64-1", "/v1/completions", B(seed=2**64-1, temperature=1)),
  ("chat top_logprobs 20", "/v1/chat/completions", {"messages":[{"role":"user","content":"hi"}],"max_tokens":16,"logprobs":True,"top_logprobs":20}),
  ("chat surrogate", "/v1/chat/completions", {"messages":[{"role":"user","content":"\udc00"}],"max_tokens":16}),
  ("chat empty messages", "/v1/chat/completions", {"messages":[],"max_tokens":16}),
]

async def adv(c, name, path, body):
    await asyncio.sleep(0.05)
    t = time.perf_counter()
    try:
        r = await c.post(BASE + path, content=json.dumps(body).encode(), headers={"content-type": "application/json"}, timeout=120)
        txt = r.text
        return f"{r.status_code} {time.perf_counter()-t:.2f}s {txt[:260]!r}"
    except Exception as e:
        return f"EXC {type(e).__name__} {e} {time.perf_counter()-t:.2f}s"

async def main():
    sel = sys.argv[1:] 
    async with httpx.AsyncClient() as c:
        refs = await refs_alone(c)
        for r in refs: print("REF", r[0][:60].replace("\n", "\\n"), r[1], f"{r[2]:.2f}s")
        bad = []
        for name, path, body in ADV:
            if sel and not any(s in name for s in sel): continue
            ok = await scenario(c, name, [adv(c, name, path, body)], refs)
            if not ok: bad.append(name)
        print("MISMATCH SCENARIOS:", bad)

asyncio.run(main())
