from common import *
import torch.nn.functional as F, math
from roseinfer import LLM, SamplingParams
hf = hf_model("llama"); V = hf.config.vocab_size
llm = LLM(model_dir("llama"), dtype="float32")
for pi, off in [(41, 50000), (47, 0), (48, 123456)]:
    p = rand_prompt(V, 7, pi); N = 3000
    outs = llm.generate([p] * N, [SamplingParams(max_tokens=1, seed=off + s, temperature=1.0, top_k=5) for s in range(N)], use_tqdm=False)
    cnt = torch.bincount(torch.tensor([o.outputs[0].token_ids[0] for o in outs]), minlength=V).float()
    z = hf_logits(hf, p)[-1]; top = z.topk(5); pr = F.softmax(top.values, -1)
    o = cnt[top.indices]; e = pr * N
    print("prompt", pi, "seed offset", off, "obs", o.tolist(), "exp", [round(x, 1) for x in e.tolist()], "chi2", round(float(((o - e) ** 2 / e).sum()), 2), "outside", int(N - o.sum()))
