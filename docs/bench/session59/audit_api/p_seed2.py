from h import *
import concurrent.futures as cf, sys
P = "Once upon a time"
base = {"prompt":P,"max_tokens":24,"temperature":1.0,"seed":11,"logprobs":5}
others = {
 "none": [],
 "same_params_other_seed": [{"prompt":P,"max_tokens":24,"temperature":1.0,"seed":99}],
 "greedy": [{"prompt":P,"max_tokens":24,"temperature":0}],
 "topk": [{"prompt":P,"max_tokens":24,"temperature":1.3,"top_k":20000,"seed":13}],
 "topp": [{"prompt":P,"max_tokens":24,"temperature":0.9,"top_p":0.95,"seed":12}],
 "minp": [{"prompt":P,"max_tokens":24,"temperature":1.0,"min_p":0.05,"seed":14}],
 "post": [{"prompt":P,"max_tokens":24,"temperature":1.0,"top_p":0.99,"seed":16,"post_sampling_probs":True,"logprobs":3}],
 "other_prompt": [{"prompt":"The weather today","max_tokens":24,"temperature":1.0,"seed":5}],
 "8others": [{"prompt":P,"max_tokens":24,"temperature":1.0,"seed":100+i} for i in range(8)],
}
def run(b):
    s,j = comp(dict(b)); return j["choices"][0]
ref = run(base)
print("alone:", ref["text"])
for name, oth in others.items():
    for trial in range(2):
        with cf.ThreadPoolExecutor(len(oth)+1) as ex:
            futs = [ex.submit(run, base)] + [ex.submit(run, o) for o in oth]
            r = futs[0].result()
        if r["text"] == ref["text"]:
            print(name, trial, "same"); continue
        lp1, lp2 = ref["logprobs"], r["logprobs"]
        k = next(i for i,(a,b) in enumerate(zip(lp1["tokens"], lp2["tokens"])) if a!=b)
        print(name, trial, "DIFF at", k, repr(lp1["tokens"][k]), lp1["token_logprobs"][k], "vs", repr(lp2["tokens"][k]), lp2["token_logprobs"][k])
        print("   top alone", lp1["top_logprobs"][k]); print("   top batch", lp2["top_logprobs"][k])
        # logits drift before k
        drift = max(abs(a-b) for a,b in zip(lp1["token_logprobs"][:k], lp2["token_logprobs"][:k]) )
        print("   max logprob drift before k", drift)
