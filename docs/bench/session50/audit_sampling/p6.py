from h import *
import json
CO="/v1/completions"; CH="/v1/chat/completions"
P="The capital of France is"
base={"prompt":P,"max_tokens":3,"temperature":0}
s,j=post(CO,{**base,"logprobs":2}); print(json.dumps(j["choices"][0]["logprobs"])[:600])
s2,evs=stream(CO,{**base,"logprobs":2,"stream":True})
lp={"tokens":[],"token_logprobs":[],"top_logprobs":[],"text_offset":[]}
for e in evs:
    if e=="[DONE]": continue
    for c in e["choices"]:
        if c.get("logprobs"):
            for k in lp: lp[k]+=c["logprobs"][k]
print("stream lp == non-stream:", lp==j["choices"][0]["logprobs"])
for v in [0,20,21,-1,True,"1"]:
    show(f"co logprobs={v!r}", post(CO,{**base,"logprobs":v}))
# echo
s,j=post(CO,{**base,"echo":True,"logprobs":1}); c=j["choices"][0]; print(repr(c["text"]), c["logprobs"]["tokens"], c["logprobs"]["token_logprobs"][:3], c["logprobs"]["text_offset"])
s,evs=stream(CO,{**base,"echo":True,"logprobs":1,"stream":True}); 
txt="".join(c["text"] for e in evs if e!="[DONE]" for c in e["choices"]); print("echo stream text:", repr(txt), txt==j["choices"][0]["text"])
show("echo max_tokens 0", post(CO,{**base,"echo":True,"logprobs":1,"max_tokens":0}))
show("max_tokens 0", post(CO,{**base,"max_tokens":0}))
show("echo n=2", post(CO,{**base,"echo":True,"n":2}))
show("echo list prompts", post(CO,{**base,"echo":True,"prompt":["Hi","Bye"]}))
# suffix
show('suffix ""', post(CO,{**base,"suffix":""}))
show('suffix "x"', post(CO,{**base,"suffix":"x"}))
# prompts
for p in [["Hi","The capital of France is"], [504,6333], [[504,6333],[19556]], [], "", [[]], ["Hi",""], [[504],"Hi"], ["Hi",[504]], [1.5], [True], [[True]]]:
    show(f"prompt={p!r}", post(CO,{**base,"prompt":p}))
show("no prompt", post(CO,{"max_tokens":3}))
show("n=2 list prompts", post(CO,{**base,"prompt":["A","B"],"n":2}))
