import sys, time
sys.path.insert(0, "tests")
from roseinfer import LLM
from roseinfer.config import SamplingParams
llm = LLM(model="/tmp/s47/g/tiny", dtype="float32", num_kv_blocks=256, max_num_seqs=32)
stops = tuple(f"zq{i}xv" for i in range(10000))
for k in range(2):
    for name, st in (("none", ()), ("10k", stops)):
        t = time.time()
        out = llm.generate(["hello"], [SamplingParams(max_tokens=200, temperature=0, ignore_eos=True, stop=st)], use_tqdm=False)
        print(name, round(time.time() - t, 3), len(out[0].outputs[0].token_ids))
