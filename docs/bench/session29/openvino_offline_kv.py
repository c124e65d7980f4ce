"""session15/openvino_offline.py with OpenVINO's KV cache precision set: `u8` (its default on
this CPU, as `ov.Core().get_property("CPU", "KV_CACHE_PRECISION")` reports) or `bf16`.

    /tmp/ovenv/bin/python docs/bench/session29/openvino_offline_kv.py OV_DIR workload.json u8|bf16
"""

import json
import sys
import time

import numpy as np
import openvino as ov
import openvino_genai as ov_genai


def main() -> None:
    model_dir, workload, kv = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
    core = ov.Core()
    default = (core.get_property("CPU", "KV_CACHE_PRECISION"), core.get_property("CPU", "INFERENCE_PRECISION_HINT"))
    scheduler = ov_genai.SchedulerConfig()
    scheduler.cache_size = 1  # GB of KV cache: the whole workload fits
    precision = {"u8": ov.Type.u8, "bf16": ov.Type.bf16}[kv]
    pipe = ov_genai.ContinuousBatchingPipeline(
        model_dir, scheduler, "CPU", {"KV_CACHE_PRECISION": precision}
    )

    def config(n: int):
        c = ov_genai.GenerationConfig()
        c.max_new_tokens = n
        c.ignore_eos = True
        c.do_sample = False
        return c

    def ids(prompt):
        return ov.Tensor(np.array([prompt], dtype=np.int64))

    pipe.generate([ids(workload[0]["prompt"][:16])], [config(8)])  # warm-up, not counted
    prompts = [ids(r["prompt"]) for r in workload]
    configs = [config(r["output_len"]) for r in workload]
    start = time.perf_counter()
    results = pipe.generate(prompts, configs)
    elapsed = time.perf_counter() - start
    out = sum(len(r.m_generation_ids[0]) for r in results)
    print(
        f"openvino-genai {ov_genai.__version__} {model_dir} KV {kv} (CPU defaults: KV "
        f"{default[0]}, inference {default[1]}): {len(workload)} requests, {out} output tokens "
        f"in {elapsed:.2f} s: {out / elapsed:.1f} output tok/s",
        flush=True,
    )


if __name__ == "__main__":
    main()
