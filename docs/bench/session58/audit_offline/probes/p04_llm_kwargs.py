"""vLLM's LLM constructor kwargs: accepted (honoured?) or refused. Refusals are checked before
loading (EngineConfig), so this builds only the accepted ones' configs."""
from roseinfer import EngineConfig
kw = {
 "tokenizer": "x", "tokenizer_mode": "auto", "skip_tokenizer_init": True, "trust_remote_code": True,
 "tensor_parallel_size": 1, "pipeline_parallel_size": 1, "dtype": "half", "quantization": "awq", "revision": "main",
 "seed": 1, "gpu_memory_utilization": 0.5, "swap_space": 4, "cpu_offload_gb": 0, "enforce_eager": True,
 "max_seq_len_to_capture": 8192, "disable_custom_all_reduce": True, "hf_token": None, "hf_overrides": {},
 "compilation_config": 0, "max_model_len": 512, "enable_prefix_caching": False, "enable_prefix_cache": False,
 "max_num_seqs": 4, "max_num_batched_tokens": 256, "kv_cache_dtype": "fp8", "block_size": 32,
 "task": "generate", "runner": "generate", "generation_config": "vllm", "enable_chunked_prefill": True,
 "distributed_executor_backend": "mp", "max_logprobs": 5, "disable_log_stats": True, "enable_lora": False,
 "served_model_name": "x", "device": "cpu", "load_format": "auto", "download_dir": "/tmp", "kv_cache_memory_bytes": 1 << 30,
}
for k, v in kw.items():
    try:
        EngineConfig(**{k: v})
        print(f"ACCEPTED {k}={v!r}")
    except TypeError as e:
        print(f"TypeError {k}: {e}")
    except ValueError as e:
        print(f"ValueError {k}: {e}")
# and through LLM itself: an unknown kwarg is refused before loading?
import time
from roseinfer import LLM
t = time.time()
try:
    LLM("smollm2", gpu_memory_utilization=0.9)
except Exception as e:
    print("LLM(gpu_memory_utilization=0.9):", type(e).__name__, e, f"({time.time()-t:.2f}s, before load)")
try:
    LLM(model="smollm2", dtype="float32", max_model_len=64, seed=None)
except Exception as e:
    print("LLM(seed=None):", type(e).__name__, e)
