"""A victim completion every 0.5 s beside one completion whose response is large: n choices,
echo, logprobs 20, prompt_logprobs 20 (its JSON built on the event loop).
   python big_response.py PORT N PROMPT_WORDS MAX_TOKENS"""
import os, sys, time
os.environ["AUDIT_PORT"] = sys.argv[1]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "session47", "audit"))
import httpx
from harness import Victim, summary, BASE
n, words, max_tokens = map(int, sys.argv[2:5])
body = {"prompt": " ".join(f"w{i}" for i in range(words)), "n": n, "echo": True, "logprobs": 20,
        "prompt_logprobs": 20, "max_tokens": max_tokens, "temperature": 1.0, "ignore_eos": True}
with Victim() as v:
    time.sleep(2); t0 = time.monotonic()
    r = httpx.post(BASE + "/v1/completions", json=body, timeout=600)
    dt = time.monotonic() - t0; time.sleep(2)
during = [s for s in v.samples if s[0] + s[1] >= t0 and s[0] <= t0 + dt]
print(f"n={n} prompt words={words} max_tokens={max_tokens}: {r.status_code}, {len(r.content)/1e6:.1f} MB in {dt:.2f} s; victim during: {summary(during)}", flush=True)
