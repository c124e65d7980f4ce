"""Finding: a seeded request draws a different token batched than alone (fp32, default CPU
backend). Three requests from fuzz workload 139, shrunk. The target (seed=1, temperature 0.2)
alone vs next to two others: its logits differ by ~1e-6 (the batch's shape changes the
kernels' arithmetic), and at output token 13 its uniform u lies 8e-8 from a CDF boundary, so
the inverse-CDF draw (roseinfer/layers/sampler.py sample_from) lands on the neighbouring token.
Run: PYTHONPATH=/tmp/s51/wt_fuzz OMP_NUM_THREADS=1 python repro_seed_boundary.py"""
from roseinfer import LLM, SamplingParams

M = "/tmp/s47/audit/tinysmol"
target = [42632, 18841, 40977, 22151, 3631, 3430, 13995, 6022, 34574, 23363, 2984, 32877,
          48346, 6933, 23433, 10692, 8615, 14266, 1833]
p_target = SamplingParams(temperature=0.2, seed=1, max_tokens=32)
others = [
    ([45615, 34261, 18129, 22262, 35083, 33179, 29509, 13460, 39313, 15397, 35638, 7133],
     SamplingParams(temperature=0.0, max_tokens=32, ignore_eos=True,
                    logit_bias={7238: -1, 21257: 100, 37866: -100})),
    ([31478, 29413, 37469, 25466, 19675, 5776, 45260, 10722, 2356, 14182, 41758],
     SamplingParams(temperature=0.2, seed=8592486144357290167, max_tokens=13, min_tokens=9,
                    ignore_eos=True, n=2)),
]
cfg = dict(dtype="float32", block_size=8, num_kv_blocks=13, max_num_seqs=11,
           max_num_batched_tokens=8, enable_prefix_cache=False)
llm = LLM(model=M, **cfg)
alone = llm.generate([target], p_target, use_tqdm=False)[0].outputs[0].token_ids
batched = llm.generate([target] + [p for p, _ in others], [p_target] + [s for _, s in others],
                       use_tqdm=False)[0].outputs[0].token_ids
print("alone  ", alone)
print("batched", batched)
i = next((i for i, (a, b) in enumerate(zip(alone, batched)) if a != b), None)
print("SAME" if i is None else f"DIFFER at output token {i}: {alone[i]} alone vs {batched[i]} batched")
