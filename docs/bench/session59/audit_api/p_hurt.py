from h import *
import concurrent.futures as cf
P = "Once upon a time"
A = {"prompt":P,"max_tokens":20,"temperature":0.8,"top_p":0.9,"seed":42}
G = {"prompt":P,"max_tokens":20,"temperature":0}
def run(b):
    s,j = comp(dict(b)); return s, ([c["text"] for c in j["choices"]] if s==200 else j.get("error",{}).get("message","")[:120])
ref = [run(A), run(G)]
print("ref", ref)
bad = [
 {"prompt":"Name:","guided_regex":"name","bad_words":["name"],"max_tokens":5},
 {"prompt":"Hi","allowed_token_ids":[2],"min_tokens":3,"max_tokens":5},
 {"prompt":"x","response_format":{"type":"json_object"},"bad_words":["{"],"max_tokens":5},
 {"prompt":"Hi","samplers":["infill"],"max_tokens":5,"temperature":1,"top_k":50},
 {"prompt":"Hi","samplers":["top_k","infill"],"max_tokens":5,"top_k":2000},
 {"prompt":"Hi","post_sampling_probs":True,"logprobs":20,"top_k":0,"max_tokens":5,"temperature":3},
]
for b in bad: print("alone bad", json.dumps({k:v for k,v in b.items() if k!="prompt"}), run(b))
for rnd in range(2):
    with cf.ThreadPoolExecutor(len(bad)+2) as ex:
        fa = ex.submit(run, A); fg = ex.submit(run, G)
        fb = [ex.submit(run, b) for b in bad]
        ra, rg = fa.result(), fg.result(); rb = [f.result() for f in fb]
    print("round", rnd, "A same", ra==ref[0], "G same", rg==ref[1])
    if ra!=ref[0]: print("   A", ra)
    if rg!=ref[1]: print("   G", rg)
    print("   bads", [r[0] for r in rb])
