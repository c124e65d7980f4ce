from h import *
import json
CH="/v1/chat/completions"
M=[{"role":"user","content":"What is 2+2?"}]
base={"messages":M,"max_tokens":4,"temperature":0}
s,j=post(CH,{**base,"logprobs":True,"top_logprobs":2}); print(json.dumps(j["choices"][0]["logprobs"])[:500])
s,evs=stream(CH,{**base,"logprobs":True,"top_logprobs":2,"stream":True})
content=[]
for e in evs:
    if e=="[DONE]": continue
    for c in e["choices"]:
        if c.get("logprobs"): content+=c["logprobs"]["content"]
print("chat stream lp == non:", content==j["choices"][0]["logprobs"]["content"])
for kv in [{"logprobs":True},{"logprobs":True,"top_logprobs":0},{"logprobs":True,"top_logprobs":21},{"logprobs":False,"top_logprobs":2},{"top_logprobs":2},{"logprobs":1},{"logprobs":True,"top_logprobs":-1}]:
    r=post(CH,{**base,**kv}); 
    if r[0]==200: print(kv, 200, str(r[1]["choices"][0]["logprobs"])[:150])
    else: show(str(kv), r)
cases = {
 "empty messages": [],
 "developer": [{"role":"developer","content":"Be terse."},{"role":"user","content":"Hi"}],
 "system": [{"role":"system","content":"Be terse."},{"role":"user","content":"Hi"}],
 "name": [{"role":"user","content":"Hi","name":"bob"}],
 "parts text": [{"role":"user","content":[{"type":"text","text":"Hi"}]}],
 "parts 2 text": [{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"text","text":"there"}]}],
 "parts image": [{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x/y.png"}}]}],
 "parts input_audio": [{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"","format":"wav"}}]}],
 "parts text no type": [{"role":"user","content":[{"text":"Hi"}]}],
 "parts str": [{"role":"user","content":["Hi"]}],
 "parts extra key": [{"role":"user","content":[{"type":"text","text":"Hi","cache_control":{"type":"ephemeral"}}]}],
 "bad role": [{"role":"wizard","content":"Hi"}],
 "function role": [{"role":"function","name":"f","content":"Hi"}],
 "no content": [{"role":"user"}],
 "null content user": [{"role":"user","content":None}],
 "empty content": [{"role":"user","content":""}],
 "assistant last": [{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}],
 "tool w/o call": [{"role":"user","content":"Hi"},{"role":"tool","content":"x","tool_call_id":"1"}],
 "content int": [{"role":"user","content":5}],
 "unknown msg field": [{"role":"user","content":"Hi","foo":1}],
 "system parts": [{"role":"system","content":[{"type":"text","text":"Be terse."}]},{"role":"user","content":"Hi"}],
 "assistant refusal null": [{"role":"user","content":"Hi"},{"role":"assistant","content":"x","refusal":None},{"role":"user","content":"ok"}],
 "assistant parts refusal": [{"role":"user","content":"Hi"},{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]},{"role":"user","content":"ok"}],
}
for k,m in cases.items():
    show(k, post(CH,{**base,"messages":m}))
