"""Soak a server with mixed load and faults for N minutes; report what leaked.

Starts `python -m roseinfer.server` on 127.0.0.1 (or measures one you started, `--url` and
`--pid`), then keeps `--concurrency` clients busy until `--minutes` have passed. Each request is
drawn from a mix: normal chat and completion requests (streamed and not), and faults: clients
that disconnect mid-stream, malformed and unknown-field bodies, prompts longer than the context,
odd seeds (huge, 2**64 - 1 with n = 2, negative), tiny and NaN temperatures. At the end it waits
for the server to go idle and prints requests served, responses by status and kind, KV blocks
still in use (must be 0), and the server's open file descriptors and RSS at the start, after
warm-up and at the end (they must stay flat).

    python benchmarks/soak.py --minutes 20 --concurrency 8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections import Counter

import httpx

CHAT = [{"role": "user", "content": "Tell me about the sea in one sentence."}]


def server_cmd(args: argparse.Namespace, port: int) -> list[str]:
    return [sys.executable, "-m", "roseinfer.server", "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "warning", *args.server_args]  # fmt: skip


def process_stats(pid: int) -> tuple[int, float]:
    """(open file descriptors, resident MiB) of a process."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as f:
        rss_kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return fds, rss_kib / 1024


def metric(text: str, name: str) -> float:
    line = next(line for line in text.splitlines() if line.startswith(name + " "))
    return float(line.split()[1])


def pick(rng: random.Random) -> tuple[str, str, dict | bytes]:
    """(kind, path, body): what one client sends next."""
    base = {"model": None, "max_tokens": rng.randint(4, 48), "temperature": 0.7}
    roll = rng.random()
    if roll < 0.30:
        return "chat", "/v1/chat/completions", {**base, "messages": CHAT}
    if roll < 0.50:
        return "chat-stream", "/v1/chat/completions", {**base, "messages": CHAT, "stream": True}
    if roll < 0.62:
        return "completion", "/v1/completions", {**base, "prompt": "Once upon a time", "n": 2}
    if roll < 0.72:
        return "disconnect", "/v1/completions", {**base, "prompt": "Count:", "stream": True,
                                                 "max_tokens": 200}  # fmt: skip
    if roll < 0.77:
        return "bad-json", "/v1/completions", b'{"prompt": "x", "max_tokens": '
    if roll < 0.82:
        return "unknown-field", "/v1/completions", {**base, "prompt": "x", "frobnicate": 1}
    if roll < 0.87:
        return "too-long", "/v1/completions", {**base, "prompt": "word " * 20000}
    if roll < 0.94:
        seed = rng.choice([99999999999999999999, 2**64 - 1, -5, 2**63])
        return "odd-seed", "/v1/chat/completions", {**base, "messages": CHAT, "seed": seed, "n": 2}
    temperature = rng.choice([1e-40, 1e-300, float("nan")])
    return (
        "odd-temperature",
        "/v1/completions",
        {**base, "prompt": "Hi", "temperature": temperature},
    )


async def one(client: httpx.AsyncClient, kind: str, path: str, body: dict | bytes) -> str:
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if v is not None}
    content = body if isinstance(body, bytes) else None
    data = None if isinstance(body, bytes) else body
    headers = {"Content-Type": "application/json"}
    if kind == "disconnect":
        async with client.stream("POST", path, json=data) as r:
            async for _ in r.aiter_lines():
                break  # leave after the first chunk: the server must abort and free the blocks
        return f"{kind} {r.status_code}"
    if isinstance(data, dict) and data.get("stream"):
        async with client.stream("POST", path, json=data) as r:
            lines = [line async for line in r.aiter_lines() if line.startswith("data: ")]
        ok = r.status_code == 200 and lines and lines[-1] == "data: [DONE]"
        return f"{kind} {r.status_code}{'' if ok else ' (unterminated)'}"
    if content is None:  # json.dumps writes NaN as a bare literal, as a careless client would
        content = json.dumps(data).encode()
    r = await client.post(path, content=content, headers=headers)
    return f"{kind} {r.status_code}"


async def soak(url: str, seconds: float, concurrency: int, seed: int) -> Counter:
    outcomes: Counter = Counter()
    deadline = time.monotonic() + seconds

    async def worker(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            while time.monotonic() < deadline:
                kind, path, body = pick(rng)
                try:
                    outcomes[await one(client, kind, path, body)] += 1
                except httpx.HTTPError as e:
                    outcomes[f"{kind} client error {type(e).__name__}"] += 1

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return outcomes


def wait_idle(url: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        text = httpx.get(url + "/metrics", timeout=10).text
        busy = metric(text, "roseinfer_num_requests_running") + metric(
            text, "roseinfer_num_requests_waiting"
        )
        if busy == 0 and metric(text, "roseinfer_kv_cache_used_blocks") == 0:
            break
        time.sleep(0.5)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--url", default=None, help="a running server (then give --pid)")
    parser.add_argument("--pid", type=int, default=None)
    parser.add_argument("server_args", nargs="*", help="flags for the server this starts")
    args = parser.parse_args(argv)
    proc = None
    if args.url is None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen(server_cmd(args, port))
        args.url, args.pid = f"http://127.0.0.1:{port}", proc.pid
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(args.url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
    try:
        start = process_stats(args.pid)
        warm = asyncio.run(soak(args.url, min(60.0, args.minutes * 6), args.concurrency, -1))
        after_warmup = process_stats(args.pid)
        t0 = time.monotonic()
        outcomes = asyncio.run(soak(args.url, args.minutes * 60, args.concurrency, args.seed))
        elapsed = time.monotonic() - t0
        text = wait_idle(args.url)
        end = process_stats(args.pid)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"soak: {elapsed / 60:.1f} min, {args.concurrency} clients, {sum(outcomes.values())} "
          f"requests (+{sum(warm.values())} in warm-up)")  # fmt: skip
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome:40s} {count:6d}")
    server_errors = sum(c for o, c in outcomes.items() if " 5" in o or "client error" in o)
    print(f"5xx or transport errors: {server_errors}")
    print(f"KV blocks in use at the end: {metric(text, 'roseinfer_kv_cache_used_blocks'):.0f}")
    print(f"generated tokens: {metric(text, 'roseinfer_generation_tokens_total'):.0f}")
    for name, (fds, rss) in (("start", start), ("after warm-up", after_warmup), ("end", end)):
        print(f"server {name:14s} open fds {fds:4d}   RSS {rss:8.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
