from h import *
CO="/v1/completions"; CH="/v1/chat/completions"
P="The capital of France is"
# token id of " Paris"
from transformers import AutoTokenizer
import glob
s,j=post("/tokenize",{"prompt":" Paris","add_special_tokens":False}); print(j)
pid=j["tokens"][0]
for lb in [{str(pid):-100}, {str(pid):100}, {"abc":1}, {"-1":1}, {"49152":1}, {"999999":5}, {str(pid):101}, {str(pid):float('nan')} , {" 12":1}, {"012":1,"12":1}, {str(pid):"5"}, {}, [1]]:
    try: show(f"lb={str(lb)[:40]}", post(CO, {"prompt":P,"max_tokens":5,"temperature":0,"logit_bias":lb}))
    except Exception as e: print("lb",lb,"EXC",e)
# too many entries
show("lb big", post(CO, {"prompt":P,"max_tokens":3,"temperature":0,"logit_bias":{str(i):0.0 for i in range(49152)}}))
show("lb big+1", post(CO, {"prompt":P,"max_tokens":3,"temperature":0,"logit_bias":{str(i):0.0 for i in range(60000)}}))
# logit_bias chat greedy
show("chat lb", post(CH, {"messages":[{"role":"user","content":"What is the capital of France?"}],"max_tokens":8,"temperature":0}))
show("chat lb", post(CH, {"messages":[{"role":"user","content":"What is the capital of France?"}],"max_tokens":8,"temperature":0,"logit_bias":{str(pid):-100}}))
