from h import *
CO="/v1/completions"; CH="/v1/chat/completions"
P="Once upon a time"
M=[{"role":"user","content":"Tell me a story."}]
b={"prompt":P,"max_tokens":12,"seed":42,"n":3,"temperature":1.0}
a1=ctext(CO,b); a2=ctext(CO,b); s=stext(CO,{**b,"stream":True})
print("co n=3 same across calls:", a1==a2, "stream==nonstream:", a1[1]==s[1]); print(a1[1]); print(s[1])
# n=1 seed 43 vs choice 1 of seed 42
b1={"prompt":P,"max_tokens":12,"seed":43,"temperature":1.0}
print("choice1(seed42)==choice0(seed43):", ctext(CO,b1)[1][0]==a1[1][1])
bc={"messages":M,"max_tokens":12,"seed":7,"n":2,"temperature":0.9,"top_p":0.9,"top_k":50}
c1=ctext(CH,bc); c2=stext(CH,{**bc,"stream":True})
print("chat stream==non:", c1[1]==c2[1]); print(c1[1]); print(c2[1])
# batch with other requests concurrently: seed reproducibility under batching
import concurrent.futures as cf
with cf.ThreadPoolExecutor(4) as ex:
    fs=[ex.submit(ctext,CO,b) for _ in range(3)]+[ex.submit(ctext,CO,{"prompt":"x "*50,"max_tokens":20})]
    res=[f.result() for f in fs]
print("concurrent seeded same:", all(r==a1 for r in res[:3]))
# greedy n=2 identical
print(ctext(CO,{"prompt":P,"max_tokens":8,"temperature":0,"n":2}))
# best_of
for bo in [{"n":2,"best_of":2},{"n":2,"best_of":3},{"n":3,"best_of":2},{"best_of":1},{"best_of":2},{"best_of":2,"n":2,"stream":True}]:
    show(f"best_of {bo}", post(CO,{"prompt":P,"max_tokens":3,**bo}) if not bo.get("stream") else (lambda r:(r[0],r[1][-2] if len(r[1])>1 else r[1]))(stream(CO,{"prompt":P,"max_tokens":3,**bo})))
for n in [0,-1,129,1.0,True]:
    show(f"n={n}", post(CO,{"prompt":P,"max_tokens":3,"n":n}))
