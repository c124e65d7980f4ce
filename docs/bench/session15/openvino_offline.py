"""OpenVINO GenAI's continuous-batching pipeline on `roseinfer bench throughput`'s workload, fed
as token ids (as ../shared/PEERS.md measured it): one warm-up request, then the 64 requests in
one `generate` call, greedy, `ignore_eos`; output tokens / wall time. Runs in a separate
environment (openvino-genai is not a dependency of this project); the model is SmolLM2's GGUF
dequantized to fp32 by transformers and exported by `optimum-cli export openvino`:

    python -m venv /tmp/ovenv && /tmp/ovenv/bin/pip install torch==2.13.0 \
        "optimum-intel[openvino]==2.2.0" openvino-genai openvino-tokenizers nncf "datasets<5"
    optimum-cli export openvino --model HF_DIR --task text-generation-with-past \
        --weight-format fp16|int8 OV_DIR
    PYTHONPATH=. .venv/bin/python docs/bench/session15/workload_json.py > workload.json
    /tmp/ovenv/bin/python docs/bench/session15/openvino_offline.py OV_DIR workload.json [N]

With N, every request generates N tokens instead of its own count (N = 1: the prefill alone).
"""

import json
import sys
import time

import numpy as np
import openvino as ov
import openvino_genai as ov_genai


def main() -> None:
    model_dir, workload = sys.argv[1], json.load(open(sys.argv[2]))
    scheduler = ov_genai.SchedulerConfig()
    scheduler.cache_size = 1  # GB of KV cache: the whole workload fits
    pipe = ov_genai.ContinuousBatchingPipeline(model_dir, scheduler, "CPU")

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
    n = int(sys.argv[3]) if len(sys.argv) > 3 else None
    configs = [config(n or r["output_len"]) for r in workload]
    start = time.perf_counter()
    results = pipe.generate(prompts, configs)
    elapsed = time.perf_counter() - start
    out = sum(len(r.m_generation_ids[0]) for r in results)
    print(
        f"openvino-genai {ov_genai.__version__} {model_dir}: {len(workload)} requests, "
        f"{out} output tokens in {elapsed:.2f} s: {out / elapsed:.1f} output tok/s",
        flush=True,
    )


if __name__ == "__main__":
    main()
