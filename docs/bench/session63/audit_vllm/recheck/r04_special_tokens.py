"""4. skip_special_tokens: false (special tokens forced with logit_bias) and spaces_between_special_tokens."""
from rc import CHAT, COMP, MODEL, MSG, PROMPT, both, both_stream, joined, post, text_of, verdict

for s in ("vllm", "rose"):
    print(s, "/tokenize", post(s, "/tokenize", {"model": MODEL, "prompt": "<|im_start|><repo_name><file_sep>"})[1])
IM_START, REPO, FILESEP = post("vllm", "/tokenize", {"model": MODEL, "prompt": "<|im_start|><repo_name><file_sep>"})[1]["tokens"]

G = {"model": MODEL, "temperature": 0, "max_tokens": 8}
biases = [
    ("im_start +100", {str(IM_START): 100}),
    ("im_start +12 (mix?)", {str(IM_START): 12}),
    ("repo_name +100, file_sep +100", {str(REPO): 100, str(FILESEP): 100}),
    ("repo_name +14 (mix?)", {str(REPO): 14}),
]
for bl, lb in biases:
    for label, path, base in [("comp", COMP, {**G, "prompt": PROMPT}), ("chat", CHAT, {**G, "messages": MSG})]:
        for opts in ({}, {"skip_special_tokens": False},
                     {"skip_special_tokens": False, "spaces_between_special_tokens": False},
                     {"skip_special_tokens": True, "spaces_between_special_tokens": False}):
            b = {**base, "logit_bias": lb, **opts, "return_token_ids": True}
            r = both(path, b, n=400, label=f"{label} {bl} {opts}")
            gv = r["vllm"][1]["choices"][0].get("token_ids") if isinstance(r["vllm"][1], dict) else None
            gr = r["rose"][1]["choices"][0].get("token_ids") if isinstance(r["rose"][1], dict) else None
            verdict(f"{label} {bl} {opts} (text, token_ids)", (text_of(r["vllm"][1]), gv), (text_of(r["rose"][1]), gr))
            if opts.get("skip_special_tokens") is False and "spaces_between_special_tokens" not in opts:
                rs = both_stream(path, {**b, "stream": True}, label=f"{label} {bl} {opts}", maxchunks=12)
                verdict("  streamed joined text", joined(rs["vllm"][1], "text"), joined(rs["rose"][1], "text"))

# the stop token (EOS <|im_end|>) must not show even with skip_special_tokens false
for label, path, base in [("comp", COMP, {**G, "prompt": PROMPT, "max_tokens": 40}),
                          ("chat", CHAT, {**G, "messages": MSG, "max_tokens": 40})]:
    r = both(path, {**base, "skip_special_tokens": False}, n=400, label=f"{label} natural EOS skip=false")
    verdict(f"{label} natural EOS skip=false text", text_of(r["vllm"][1]), text_of(r["rose"][1]))
