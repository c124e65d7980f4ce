import json, llguidance, llguidance.hf, torch
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("/tmp/s47/audit/tinysmol")
llt = llguidance.hf.from_tokenizer(tok, n_vocab=len(tok), eos_token=[2])
text = llguidance.grammar_from("choice", json.dumps([f"choice number {i}" for i in range(50000)]))
tpl = llguidance.LLMatcher(llt, text, log_level=0)
print("template err", tpl.is_error(), tpl.is_stopped())
m = tpl.deep_copy()
mask = torch.empty((len(tok)+31)//32, dtype=torch.int32)
m.unsafe_compute_mask_ptr(mask.data_ptr(), mask.numel()*4)
allowed = [i for i in range(len(tok)) if (mask[i//32].item() >> (i%32)) & 1]
print("allowed first", len(allowed), [tok.decode([a]) for a in allowed[:5]])
print("consume", m.consume_token(17207), m.get_error()[:100])
print("template after", tpl.is_error(), tpl.is_stopped(), tpl.get_error()[:100])
m2 = tpl.deep_copy()
m2.unsafe_compute_mask_ptr(mask.data_ptr(), mask.numel()*4)
allowed = [i for i in range(len(tok)) if (mask[i//32].item() >> (i%32)) & 1]
print("m2 allowed", len(allowed), allowed[:5], m2.is_error(), m2.get_error()[:100])
