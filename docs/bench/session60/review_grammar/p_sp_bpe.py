"""SentencePiece-style BPE (Llama 2 / Mistral: ▁ for spaces, byte fallback) with added text
tokens: how llguidance sees them after the patch, and the after-thinking grammar over them."""
from common import *
import llguidance
from tokenizers import Tokenizer as T, models, normalizers, decoders, pre_tokenizers, AddedToken
from transformers import PreTrainedTokenizerFast

def sp_tokenizer(style):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    chars = list("▁abcdefghijklmnopqrstuvwxyz{}\":,0123456789<>/_") + ["▁a", "ab", "▁ab", "th", "ink"]
    for c in chars:
        vocab.setdefault(c, len(vocab))
    merges = [("▁", "a"), ("a", "b"), ("▁a", "b"), ("t", "h"), ("i", "n")]
    vocab["in"] = len(vocab)
    merges.append(("in", "k"))
    model = models.BPE(vocab, merges, unk_token="<unk>", byte_fallback=True, fuse_unk=True)
    t = T(model)
    if style == "normalizer":   # Llama 2's tokenizer.json
        t.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        t.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    else:                       # newer conversions: Metaspace pre-tokenizer
        t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        t.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    t.add_special_tokens([AddedToken("<unk>", special=True), AddedToken("<s>", special=True), AddedToken("</s>", special=True)])
    fast = PreTrainedTokenizerFast(tokenizer_object=t, bos_token="<s>", eos_token="</s>", unk_token="<unk>")
    fast.add_tokens(["<think>", "</think>", "<tool_call>", "ab"])  # "ab" is a vocab entry already
    return fast

for style in ("normalizer",):
    hf = sp_tokenizer(style)
    tok, comp = compiler_for(hf)
    ll = comp.ll_tokenizer
    print("==", style)
    for text in ("<think>", "</think>", "<tool_call>", "ab", "</s>"):
        i = hf.convert_tokens_to_ids(text)
        print(f"  {text!r:14} id {i:4} llguidance bytes {ll.decode_bytes([i])!r:16} special {ll.is_special_token(i)}")
    i = hf.convert_tokens_to_ids("▁ab")
    print(f"  '▁ab' id {i} bytes {ll.decode_bytes([i])!r}")
    for mode in ("required", "optional"):
        spec = StructuredOutputs(json={"type": "object", "properties": {"a": {"type": "integer"}}}, thinking_first=mode)
        good = "<think>ab cd</think>\n" + '{"a":1}'
        ids = tok.encode(good, False)
        print(f"  {mode}: ids {ids}")
        print(f"  {mode}: accepts {good!r}:", accepts(comp, tok, spec, good), "| rejects bad:", not accepts(comp, tok, spec, "<think>ab</think>42"))
    # llguidance's own tokenization of the added text
    print("  ll.tokenize_str('<think>') ->", ll.tokenize_str("<think>"), " greedy:", ll.greedy_tokenize("<think>"))

# The Metaspace-decoder style fails in llguidance's import with or without the patch:
import llguidance.hf
hf = sp_tokenizer("metaspace")
try:
    llguidance.hf.from_tokenizer(hf)
    print("metaspace: llguidance's own import works")
except ValueError as e:
    print("metaspace: llguidance's own import fails too (not the patch's doing):", e)
