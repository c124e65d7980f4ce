import os, sys, json, torch
sys.path.insert(0, "/tmp/s60/audit_oracle/repo")
sys.path.insert(0, "/tmp/s60/audit_oracle/repo/tests")
torch.set_num_threads(2)
from conftest import make_tiny_model, TINY_CONFIGS
MD = "/tmp/s60/audit_oracle/models"
KINDS = ["gpt2", "llama", "llama_tied", "mistral", "qwen2", "qwen3"]

def model_dir(kind, big_ctx=True):
    path = os.path.join(MD, kind)
    if not os.path.exists(os.path.join(path, "config.json")):
        if big_ctx:
            c = TINY_CONFIGS[kind]
            if "n_positions" in c: c["n_positions"] = 1024
            else: c["max_position_embeddings"] = 1024
        make_tiny_model(kind, path)
    return path

_hf = {}
def hf_model(kind):
    import transformers
    if kind not in _hf:
        _hf[kind] = transformers.AutoModelForCausalLM.from_pretrained(model_dir(kind), dtype=torch.float32).eval()
    return _hf[kind]

@torch.no_grad()
def hf_greedy(model, ids, n):
    out = model(torch.tensor([ids]), use_cache=True)
    toks = []
    for _ in range(n):
        toks.append(int(out.logits[0, -1].argmax()))
        if len(toks) < n:
            out = model(torch.tensor([[toks[-1]]]), past_key_values=out.past_key_values, use_cache=True)
    return toks

@torch.no_grad()
def hf_logits(model, ids):
    return model(torch.tensor([ids])).logits[0].float()

def tie_gap(model, prompt, ours, theirs):
    """If ours != theirs, logit gap at first divergence under teacher forcing on ours."""
    if ours == theirs: return None
    if len(ours) != len(theirs) and ours == theirs[:len(ours)]: return ("short", len(ours), len(theirs))
    i = next(k for k,(a,b) in enumerate(zip(ours, theirs)) if a != b)
    lg = hf_logits(model, prompt + ours[:i])[-1]
    return i, float(abs(lg[ours[i]] - lg[theirs[i]]))

def rand_prompt(vocab, n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(3, vocab, (n,), generator=g).tolist()
