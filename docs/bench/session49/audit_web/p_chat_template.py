"""Server's prompt (/tokenize with messages, and chat usage.prompt_tokens) vs transformers' apply_chat_template."""
import httpx, json
from transformers import AutoTokenizer
B = "http://127.0.0.1:18201"
c = httpx.Client(base_url=B, timeout=60)
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
def hf(msgs, **kw):
    return tok.apply_chat_template(msgs, tokenize=False, **kw)
cases = {
 "user": ([{"role":"user","content":"hi"}], {}),
 "system+user": ([{"role":"system","content":"S"},{"role":"user","content":"hi"}], {}),
 "developer+user": ([{"role":"developer","content":"S"},{"role":"user","content":"hi"}], {}),
 "system+developer+user": ([{"role":"system","content":"S"},{"role":"developer","content":"D"},{"role":"user","content":"hi"}], {}),
 "multi-turn": ([{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}], {}),
 "parts": ([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}], {}),
 "no gen prompt": ([{"role":"user","content":"hi"}], {"add_generation_prompt":False}),
 "continue final": ([{"role":"user","content":"hi"},{"role":"assistant","content":"Once upon"}], {"add_generation_prompt":False,"continue_final_message":True}),
 "continue final user": ([{"role":"user","content":"hi"}], {"add_generation_prompt":False,"continue_final_message":True}),
 "assistant last, gen prompt": ([{"role":"user","content":"hi"},{"role":"assistant","content":"x"}], {}),
 "empty content": ([{"role":"user","content":""}], {}),
}
for name,(msgs,kw) in cases.items():
    r = c.post("/tokenize", json={"messages":msgs, **kw})
    if r.status_code != 200:
        print(f"== {name}: tokenize {r.status_code} {r.text[:200]}"); continue
    ids = r.json()["tokens"]
    server_text = tok.decode(ids)
    hfkw = {"add_generation_prompt": kw.get("add_generation_prompt", True), "continue_final_message": kw.get("continue_final_message", False)}
    try:
        ref = hf(msgs, **hfkw)
    except Exception as e:
        ref = f"<hf error {e}>"
    rc = c.post("/v1/chat/completions", json={"messages":msgs,"max_tokens":1, **kw})
    pt = rc.json()["usage"]["prompt_tokens"] if rc.status_code==200 else rc.text[:150]
    same = server_text == ref
    print(f"== {name}: tokenize count={len(ids)} chat prompt_tokens={pt} same_as_hf={same}")
    if not same:
        print("   server:", repr(server_text)); print("   hf:    ", repr(ref))
