"""SmolLM2-135M's exact shapes (49,152-wide LM head included) with random bf16 weights and
SmolLM2's own tokenizer, for timing the engine and server where the real weights cannot travel
(the GPU machine: the GGUF is over the device tool's 64 MiB). Session 26's `smol_random.py` has
the tests' 384-id tokenizer, so its LM head is 384 wide and a decode step reads 28 MB less than
SmolLM2's; this one reads what SmolLM2's does, so one stream can be set against the weight-read
floor. The tokenizer files (`tokenizer.json`, `tokenizer_config.json`, `chat_template.jinja`,
`generation_config.json`, ~3.5 MB, from session 25's HF export of the GGUF) travel in `.smoltok/`.

    python3 docs/bench/session33/smol_shaped.py .smoltok /tmp/smolfull
"""

import shutil
import sys
from pathlib import Path

import torch
import transformers

tokenizer_dir, path = Path(sys.argv[1]), Path(sys.argv[2])
config = transformers.LlamaConfig(
    vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
    num_attention_heads=9, num_key_value_heads=3, head_dim=64, max_position_embeddings=8192,
    rope_theta=100000.0, tie_word_embeddings=True, rms_norm_eps=1e-5,
    bos_token_id=1, eos_token_id=2, pad_token_id=2,
)  # fmt: skip
torch.manual_seed(0)
model = transformers.LlamaForCausalLM(config).to(torch.bfloat16).eval()
model.save_pretrained(path)
for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
    shutil.copy(tokenizer_dir / name, path / name)
print("saved", path)
