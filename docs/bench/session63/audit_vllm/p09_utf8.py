"""Multi-byte characters split across tokens: streamed deltas vs non-streamed text, cut by max_tokens mid-character."""
import json
from common import post, stream, MODEL
for prompt in ("日本の首都は", "Emoji party: 🎉🎉", "Привет, как"):
    for mt in (1, 2, 3, 5, 8):
        body = {"model": MODEL, "prompt": prompt, "max_tokens": mt, "temperature": 0, "logprobs": 0}
        row = {}
        for s in ("vllm", "rose"):
            st, j, _ = post(s, "/v1/completions", body)
            c = j["choices"][0]
            st2, ch = stream(s, "/v1/completions", {**body, "stream": True})
            deltas = [x["choices"][0]["text"] for x in ch if isinstance(x, dict) and x.get("choices")]
            row[s] = {"text": c["text"], "tokens": c["logprobs"]["tokens"], "stream": deltas}
        same = row["vllm"] == row["rose"]
        print(f"{'SAME' if same else 'DIFF'} {prompt!r} max_tokens={mt}")
        if not same:
            for s in row:
                print(f"   {s}: {json.dumps(row[s], ensure_ascii=False)}")
