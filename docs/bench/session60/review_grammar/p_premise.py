"""The premise: llguidance 1.9.1's own HF import, non-special added tokens."""
from common import *
import llguidance.hf
hf = build_tokenizer(); hf.add_tokens(["<think>", "</think>", "<tool_call>"])
ll = llguidance.hf.from_tokenizer(hf)
for t in ("<think>", "<tool_call>", "<|im_end|>"):
    i = hf.convert_tokens_to_ids(t)
    print(t, i, "special:", ll.is_special_token(i), "bytes:", ll.decode_bytes([i]))
