import sys, torch, transformers
sys.path.insert(0, "/work/main")
from roseinfer.loader import smollm2_path
from roseinfer.loader.gguf_tokenizer import hf_tokenizer_from_gguf
tok = hf_tokenizer_from_gguf(smollm2_path())
print(type(tok), len(tok), tok.eos_token_id, tok.bos_token_id, bool(tok.chat_template))
config = transformers.AutoConfig.for_model("llama", vocab_size=len(tok), bos_token_id=tok.bos_token_id,
    eos_token_id=tok.eos_token_id, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048, rope_theta=10000.0, tie_word_embeddings=True)
torch.manual_seed(0)
m = transformers.LlamaForCausalLM(config).eval()
with torch.no_grad():
    for p in m.parameters():
        if p.dim() >= 2: p.normal_(0, 0.08)
m.save_pretrained("/tmp/s47/audit/tinysmol")
tok.save_pretrained("/tmp/s47/audit/tinysmol")
