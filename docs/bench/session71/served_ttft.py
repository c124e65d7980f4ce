"""TTFT of ~2,000-token prompts against a running roseinfer server, streamed /v1/completions,
max_tokens 1, one at a time: a prompt as text and another as token ids, in turns (each prompt
its own, so no prefix-cache hit), ROUNDS rounds after one.

    .venv/bin/python docs/bench/session71/served_ttft.py PORT ROUNDS
"""

import json
import random
import statistics
import sys
import time
import urllib.request

from roseinfer.bench.serve_prompts import load_tokenizer

port, rounds = int(sys.argv[1]), int(sys.argv[2])
tok = load_tokenizer("smollm2")
rng = random.Random(7)


def ttft(prompt: object) -> float:
    body = json.dumps(
        {"prompt": prompt, "max_tokens": 1, "temperature": 0, "stream": True}
    ).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/completions", body, {"Content-Type": "application/json"}
    )
    s = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        for line in r:
            if line.startswith(b"data: {"):
                t = time.perf_counter() - s
                break
        r.read()
    return t


times = {"text": [], "ids": []}
for i in range(rounds + 1):
    prompts = []
    for _ in range(2):  # a prompt of its own each: no prefix-cache hit
        ids = tok.encode(tok.decode([rng.randrange(200, 40000) for _ in range(2000)]))[:2000]
        prompts.append(ids)
    for kind, p in (("text", tok.decode(prompts[0])), ("ids", prompts[1])):
        t = ttft(p)
        if i:
            times[kind].append(t)
for k, v in times.items():
    print(f"{k}: TTFT median {1e3 * statistics.median(v):.1f} ms, min {1e3 * min(v):.1f}")
