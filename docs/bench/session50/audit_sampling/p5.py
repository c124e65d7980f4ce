from h import *
CO="/v1/completions"; CH="/v1/chat/completions"
P="The capital of France is"
base={"prompt":P,"max_tokens":12,"temperature":0}
print("base", ctext(CO,base))
for st in ["Paris", " Paris.", ".\n\nThe", "\n", "is Paris", ["zzz","The"], "", [""], ["a","b","c","d","e"], ["x"]*70, [str(i) for i in range(70)], "P", "aris.\n\nThe capital", 5, [5]]:
    r=post(CO,{**base,"stop":st}); 
    if r[0]==200:
        s=stext(CO,{**base,"stop":st,"stream":True})
        print(f"stop={str(st)[:30]!r}: {r[1]['choices'][0]['text']!r} [{r[1]['choices'][0]['finish_reason']}] usage={r[1]['usage']['completion_tokens']} stream={s[1]!r} {s[2]}")
    else: show(f"stop={str(st)[:30]!r}", r)
show("incl stop true", post(CO,{**base,"stop":"Paris","include_stop_str_in_output":True}))
show("incl stop false", post(CO,{**base,"stop":"Paris","include_stop_str_in_output":False}))
s,j=post("/tokenize",{"prompt":".\n\nThe","add_special_tokens":False}); print(j)
ids=j["tokens"]
for sti in [[ids[0]],[ids[1]],[0],[2],[-1],[49152],["1"]]:
    show(f"stop_token_ids={sti}", post(CO,{**base,"stop_token_ids":sti}))
# eos: chat greedy ends with stop; ignore_eos
M=[{"role":"user","content":"Say hi."}]
show("chat", post(CH,{"messages":M,"max_tokens":30,"temperature":0}))
show("chat ignore_eos", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"ignore_eos":True}))
show("chat min_tokens 20", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"min_tokens":20}))
show("chat min_tokens 31", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"min_tokens":31}))
show("chat min_tokens -1", post(CH,{"messages":M,"max_tokens":30,"temperature":0,"min_tokens":-1}))
show("co min_tokens stop", post(CO,{**base,"stop":"Paris","min_tokens":3}))
s=stext(CO,{**base,"stop":"Paris","min_tokens":3,"stream":True}); print("   stream:",s[1],s[2])
