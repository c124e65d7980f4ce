#!/usr/bin/env bash
# A response continuing a large conversation, before and after session 55's read bound
# (079325f): one server at a time (SmolLM2, default dtype), a conversation of ~8 MiB of items
# (20 POSTs of 20 items of ~20,000 characters), then three timed /v1/responses continuing it
# (truncation: auto, 8 tokens) and one input_tokens count; the server's RSS after each.
# Usage: bash run.sh BASE_REV HEAD_REV  (from the repository root; worktrees under /tmp)
set -euo pipefail
ROOT=$(pwd); OUT=$ROOT/docs/bench/session55/conversation_read
for rev in "$@"; do
  wt=/tmp/s55/wt_$rev; [ -d "$wt" ] || git worktree add -q --detach "$wt" "$rev"
  (cd "$wt" && PYTHONPATH=$wt "$ROOT/.venv/bin/python" -m roseinfer.server --port 8790 \
     --host 127.0.0.1 > "$OUT/server_$rev.log" 2>&1 &)
  for _ in $(seq 120); do curl -sf localhost:8790/health >/dev/null && break; sleep 1; done
  "$ROOT/.venv/bin/python" - "$rev" > "$OUT/$rev.txt" <<'PY'
import sys, time, httpx, subprocess
rev = sys.argv[1]
h = httpx.Client(base_url="http://127.0.0.1:8790", timeout=600)
pid = subprocess.check_output(["pgrep", "-f", "roseinfer.server --port 8790"]).split()[0].decode()
def rss():
    return int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0]) // 1024
conv = h.post("/v1/conversations", json={}).json()["id"]
text = "The quick brown fox jumps over the lazy dog. " * 440  # ~20,000 characters
for _ in range(20):
    r = h.post(f"/v1/conversations/{conv}/items", json={"items": [{"role": "user", "content": text}] * 20})
    assert r.status_code == 200, r.text
print(f"rev {rev}: conversation of 400 items, RSS {rss()} MiB")
body = {"conversation": conv, "input": "Hi", "max_output_tokens": 8, "truncation": "auto"}
for i in range(3):
    t = time.perf_counter()
    r = h.post("/v1/responses", json=body)
    took = time.perf_counter() - t
    print(f"response {i}: {r.status_code} {took:.2f} s input_tokens "
          f"{r.json().get('usage', {}).get('input_tokens') if r.status_code == 200 else r.text[:80]} RSS {rss()} MiB")
    # (each turn was added: delete it so every run reads the same conversation)
    items = h.get(f"/v1/conversations/{conv}/items", params={"limit": 2}).json()["data"]
    for item in items:
        h.delete(f"/v1/conversations/{conv}/items/{item['id']}")
t = time.perf_counter()
r = h.post("/v1/responses/input_tokens", json={"conversation": conv, "input": "Hi", "truncation": "auto"})
print(f"input_tokens: {r.status_code} {time.perf_counter() - t:.2f} s {r.text[:80]} RSS {rss()} MiB")
PY
  pkill -f "roseinfer.server --port 8790" || true; sleep 3
done
