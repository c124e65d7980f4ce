import re, sys
names = ["amx_linear", "amx_int8_linear", "dpbf16_linear", "dpbf16_gated_linear", "rms_norm",
         "add_rms_norm", "rotary_embedding", "silu_and_mul", "int8_linear", "small_batch_linear",
         "paged_decode_attention", "paged_decode_attention_qkv", "vnni_int8_linear",
         "vnni_int8_gated_linear"]
files = ["ops.h", "amx_linear.cpp", "dpbf16_linear.cpp", "fused_ops.cpp", "int8_linear.cpp",
         "paged_attention.cpp", "vnni_linear.cpp"]
pat = re.compile(r"^(torch::Tensor|void) (" + "|".join(names) + r")\(", re.M)
def fix_params(params):
    # split on commas at depth 0 (of <> and ())
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch in "<(": depth += 1
        if ch in ">)": depth -= 1
        if ch == "," and depth == 0:
            out.append(cur); cur = ""
        else:
            cur += ch
    out.append(cur)
    res = []
    for p in out:
        lead = p[: len(p) - len(p.lstrip())]
        q = p.strip()
        if q.startswith("torch::Tensor") and not q.startswith("torch::Tensor&"):
            q = "const torch::Tensor&" + q[len("torch::Tensor"):]
        elif q.startswith("c10::optional<torch::Tensor>") and not q.startswith("c10::optional<torch::Tensor>&"):
            q = "const c10::optional<torch::Tensor>&" + q[len("c10::optional<torch::Tensor>"):]
        res.append(lead + q)
    return ",".join(res)
for f in files:
    path = "roseinfer/kernels/" + f
    s = open(path).read()
    pos = 0; n = 0
    while True:
        m = pat.search(s, pos)
        if not m: break
        start = m.end()
        depth, i = 1, start
        while depth:
            if s[i] == "(": depth += 1
            elif s[i] == ")": depth -= 1
            i += 1
        params = s[start:i - 1]
        new = fix_params(params)
        s = s[:start] + new + s[i - 1:]
        pos = start + len(new); n += 1
    open(path, "w").write(s)
    print(f, n)
