from h import *
import concurrent.futures as cf
P = "Once upon a time"
A = [
 {"prompt":P,"max_tokens":24,"temperature":1.0,"seed":11},
 {"prompt":P,"max_tokens":24,"temperature":0.9,"top_p":0.95,"seed":12},
 {"prompt":P,"max_tokens":24,"temperature":1.3,"top_k":20000,"seed":13},
 {"prompt":P,"max_tokens":24,"temperature":1.0,"min_p":0.05,"seed":14},
 {"prompt":P,"max_tokens":24,"temperature":0.8,"top_k":40,"top_p":0.9,"seed":15,"samplers":["top_k","top_p","temperature"]},
 {"prompt":P,"max_tokens":24,"temperature":1.0,"top_p":0.99,"seed":16,"post_sampling_probs":True,"logprobs":3},
 {"prompt":P,"max_tokens":24,"temperature":1.0,"seed":17,"presence_penalty":1.0,"repeat_last_n":8},
 {"prompt":P,"max_tokens":24,"temperature":1.0,"seed":18,"logit_bias":{"30":5}},
 {"prompt":P,"max_tokens":24,"temperature":2.5,"top_p":0.6,"seed":19,"n":2},
]
def run(b): 
    s,j = comp(dict(b)); 
    return s, [c["text"] for c in j["choices"]] if s==200 else j
alone = [run(b) for b in A]
for b,a in zip(A,alone): print("alone", b.get("seed"), a)
# stream vs non-stream
for b,a in zip(A,alone):
    s, ch = stream("/v1/completions", dict(b))
    txt = {}
    for c in ch:
        if c=="[DONE]": continue
        for x in c["choices"]: txt[x["index"]] = txt.get(x["index"],"") + x["text"]
    print("stream match", b["seed"], [txt[i] for i in sorted(txt)] == a[1], "" if [txt[i] for i in sorted(txt)] == a[1] else txt)
# concurrent, shuffled, twice
for rnd in range(2):
    with cf.ThreadPoolExecutor(9) as ex:
        order = A[rnd::] + A[:rnd]
        res = list(ex.map(run, order))
    for b, r in zip(order, res):
        a = alone[A.index(b)]
        print(f"batch{rnd}", b["seed"], r == a, "" if r == a else (a, r))
