"""Every field vLLM 0.32 accepts (vllm_fields.json), sent to roseinfer at vLLM's own default value (a value that asks
for nothing), on each endpoint. Reports those roseinfer refuses at their default: unknown to its table, or refused."""
import json
from common import post, MODEL
F = json.load(open("vllm_fields.json"))
BASE = {"chat": ("/v1/chat/completions", {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0}),
        "completions": ("/v1/completions", {"model": MODEL, "prompt": "Hi", "max_tokens": 1, "temperature": 0}),
        "responses": ("/v1/responses", {"model": MODEL, "input": "Hi", "max_output_tokens": 1, "temperature": 0})}
for ep, fields in F.items():
    path, base = BASE[ep]
    bad = []
    for f, dv in sorted(fields.items()):
        if f in base or dv is None or (isinstance(dv, str) and dv.startswith("<")):
            continue
        if f == "stream":
            continue
        st, j, _ = post("rose", path, {**base, f: dv})
        if st != 200:
            err = j.get("error", {}) if isinstance(j, dict) else {}
            bad.append((f, dv, st, err.get("code"), (err.get("message") or str(j))[:160]))
    print(f"== {ep}: {len(fields)} vLLM fields; refused by roseinfer at vLLM's default value: {len(bad)}")
    for b in bad:
        print("   ", json.dumps(b))
