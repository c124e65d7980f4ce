"""Six ~2,000-token prompts as token ids, streamed /v1/completions, max_tokens 1, one at a time,
against a server on PORT with ttft_probe_timestamps.patch applied: the client prints "T send" and
"T first" (wall-clock seconds) to stderr, the server its handler entry, queueing and the step
bounds.

    python docs/bench/session72/ttft_probe.py 8801 2> client.log
"""

import json
import random
import sys
import time
import urllib.request

port = int(sys.argv[1])
rng = random.Random(3)
for _ in range(6):
    ids = [rng.randrange(100, 40000) for _ in range(2000)]
    body = json.dumps({"prompt": ids, "max_tokens": 1, "temperature": 0, "stream": True}).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"}
    )
    t0 = time.time()
    print(f"T send {t0:.4f}", file=sys.stderr, flush=True)
    with urllib.request.urlopen(req) as r:
        for line in r:
            if line.startswith(b"data: {"):
                print(f"T first {time.time():.4f}", file=sys.stderr, flush=True)
                break
        r.read()
    time.sleep(0.3)
