import httpx
c = httpx.Client(base_url="http://127.0.0.1:18201", timeout=60)
U = [{"role":"user","content":"hi"}]
tools=[{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]
hist = [{"role":"user","content":"w?"},{"role":"assistant","content":"let me","tool_calls":[{"id":"a","type":"function","function":{"name":"get","arguments":"{\"city\":\"P\"}"}},{"id":"b","type":"function","function":{"name":"get","arguments":"{\"city\":\"Q\"}"}}]},
        {"role":"tool","tool_call_id":"b","content":[{"type":"text","text":"rb"}]},{"role":"tool","tool_call_id":"a","content":"ra"}]
for label, body in [("tools auto", {"messages":U,"tools":tools}), ("tools none", {"messages":U,"tools":tools,"tool_choice":"none"}),
                    ("tools required", {"messages":U,"tools":tools,"tool_choice":"required"}),
                    ("history", {"messages":hist,"tools":tools})]:
    tb = {k:v for k,v in body.items() if k != "tool_choice"}
    t = c.post("/tokenize", json=tb).json()
    r = c.post("/v1/chat/completions", json={**body, "max_tokens":3})
    print(f"== {label}: tokenize count={t.get('count')} chat {r.status_code} prompt_tokens={r.json().get('usage',{}).get('prompt_tokens') if r.status_code==200 else r.text[:200]}")
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
print(repr(tok.decode(c.post("/tokenize", json={"messages":hist}).json()["tokens"])))
