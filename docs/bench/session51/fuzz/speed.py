import time, sys
import torch
from roseinfer import LLM, SamplingParams
M="/tmp/s47/audit/tinysmol"
llm = LLM(model=M, dtype="float32", block_size=4, num_kv_blocks=400, max_num_seqs=8, max_num_batched_tokens=16)
for th in [int(a) for a in sys.argv[1:]]:
    torch.set_num_threads(th)
    t=time.time()
    outs = llm.generate([[5,6,7,8,9]], SamplingParams(max_tokens=100, temperature=0, ignore_eos=True), use_tqdm=False)
    print(th, "per tok ms", (time.time()-t)*10)
