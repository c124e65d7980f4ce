"""Soak a server with mixed load and faults for N minutes; report what leaked or broke.

Starts `python -m roseinfer.server` on 127.0.0.1 (or measures one you started, `--url` and
`--pid`), then keeps `--concurrency` clients busy until `--minutes` have passed. Each request is
drawn from a mix: chat and completion requests (streamed and not, n > 1), structured output (a
JSON schema, a regex, choices, a GBNF grammar), required tool calls (streamed and not), echo,
logprobs and prompt_logprobs, stop strings, seeded sampling with every penalty and a bias, long
prompts, /v1/responses (plain, streamed, tools, a stored chain continued, read back and
deleted, a conversation continued twice, background ones polled to their end or cancelled),
/v1/embeddings (floats or base64: one unit vector per input), llama.cpp's native /completion
(several prompts, streamed or not, probabilities, a grammar) and /embedding, /rerank and /score
(sorted cosines); and faults: clients that disconnect mid-stream (also inside a JSON schema),
malformed and unknown-field bodies, a schema with a dangling $ref, prompts longer than the
context, odd seeds (huge, 2**64 - 1 with n = 2, negative), tiny and NaN temperatures. A 200
is checked, not just counted: the output follows its schema, regex, choices, grammar or tools;
stop strings are not in the text; logprobs lists match the tokens; the response's id carries the X-Request-Id;
a seeded or greedy request is sent twice in a row (a different text is counted as `DIVERGED`:
README's "Alone or batched" says how rarely the batch around a draw moves it). At the end it
waits for the server to go idle and prints outcomes by kind (`FAULT` or `UNEXPECTED` where a
check failed), each kind's median and worst seconds, KV blocks still in use (must be 0), and the
server's open file descriptors and RSS (at the start, after warm-up, each minute, at the end:
they must stay flat). It exits 1 when any request failed a check or met a 5xx.

    python benchmarks/soak.py --minutes 20 --concurrency 8 -- --dtype float32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter

import httpx
from soak_cases import Case, pick, text_of


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


async def one(client: httpx.AsyncClient, case: Case) -> str:
    body = case.body
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if v is not None}
    # json.dumps writes NaN as a bare literal, as a careless client would
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", "X-Request-Id": f"soak-{random.random()}"}
    if case.kind.startswith("disconnect"):
        async with client.stream("POST", case.path, content=content, headers=headers) as r:
            async for _ in r.aiter_lines():
                break  # leave after the first chunk: the server must abort and free the blocks
        return f"{case.kind} {r.status_code}"
    if case.path == "/v1/responses":
        return await one_response(client, case, content, headers)
    if case.path in ("/completion", "/embedding"):
        return await one_llamacpp(client, case, content, headers)
    if isinstance(body, dict) and body.get("stream"):
        async with client.stream("POST", case.path, content=content, headers=headers) as r:
            lines = [line async for line in r.aiter_lines() if line.startswith("data: ")]
        if r.status_code != 200 or not lines or lines[-1] != "data: [DONE]":
            return f"{case.kind} {r.status_code} (unterminated)"
        chunks = [json.loads(line[6:]) for line in lines[:-1]]
        if any("error" in ch for ch in chunks):
            return f"{case.kind} 200 (error event)"
        fault = case.check(chunks) if case.check else None
        return f"{case.kind} {r.status_code}" + (f" FAULT {fault}" if fault else "")
    r = await client.post(case.path, content=content, headers=headers)
    outcome = f"{case.kind} {r.status_code}"
    if r.status_code != case.status:
        return outcome + f" UNEXPECTED {r.text[:120]}"
    if r.status_code != 200:
        return outcome
    answer = r.json()
    if answer["id"].split("-", 1)[1] != headers["X-Request-Id"]:
        return outcome + f" FAULT id {answer['id']} for {headers['X-Request-Id']}"
    fault = case.check(answer) if case.check else None
    if fault is None and case.repeat:
        again = await client.post(case.path, content=content, headers=headers)
        if again.status_code != 200:
            fault = f"repeated: {again.status_code} {again.text[:120]}"
        elif text_of(again.json()) != text_of(answer):  # README "Alone or batched": rare
            return outcome + " DIVERGED (another batch: rounding near an edge)"
    return outcome + (f" FAULT {fault}" if fault else "")


async def one_llamacpp(client: httpx.AsyncClient, case: Case, content: bytes,
                       headers: dict[str, str]) -> str:  # fmt: skip
    """A llama.cpp-native case: its answer, or its stream's events (no `[DONE]`: each choice
    ends with its `stop: true` result)."""
    assert isinstance(case.body, dict) and case.check is not None
    if case.body.get("stream"):
        async with client.stream("POST", case.path, content=content, headers=headers) as r:
            events = [json.loads(line[6:]) async for line in r.aiter_lines()
                      if line.startswith("data: ")]  # fmt: skip
        if r.status_code != 200 or any("error" in e for e in events):
            return f"{case.kind} {r.status_code} (error event)"
        fault = case.check(events)
        return f"{case.kind} {r.status_code}" + (f" FAULT {fault}" if fault else "")
    r = await client.post(case.path, content=content, headers=headers)
    outcome = f"{case.kind} {r.status_code}"
    if r.status_code != case.status:
        return outcome + f" UNEXPECTED {r.text[:120]}"
    fault = case.check(r.json())
    return outcome + (f" FAULT {fault}" if fault else "")


async def one_response(client: httpx.AsyncClient, case: Case, content: bytes,
                       headers: dict[str, str]) -> str:  # fmt: skip
    """A /v1/responses case: its events or its Response checked; a chain's second turn
    continues the first, is read back and both are deleted."""
    assert isinstance(case.body, dict) and case.check is not None
    if case.body.get("stream"):
        async with client.stream("POST", case.path, content=content, headers=headers) as r:
            events = [json.loads(line[6:]) async for line in r.aiter_lines()
                      if line.startswith("data: ")]  # fmt: skip
        fault = case.check(events) if r.status_code == 200 and events else "no events"
        return f"{case.kind} {r.status_code}" + (f" FAULT {fault}" if fault else "")
    if case.kind == "responses-conversation":
        return await conversation_turns(client, case)
    r = await client.post(case.path, content=content, headers=headers)
    outcome = f"{case.kind} {r.status_code}"
    if r.status_code != 200:
        return outcome + f" UNEXPECTED {r.text[:120]}"
    answer = r.json()
    if answer["id"] != "resp_" + headers["X-Request-Id"]:
        return outcome + f" FAULT id {answer['id']} for {headers['X-Request-Id']}"
    if case.kind.startswith("responses-background"):
        answer, fault = await background_end(client, answer, case.kind.endswith("cancel"))
        if fault is not None or answer["status"] == "cancelled":
            return outcome + (f" FAULT {fault}" if fault else " cancelled")
    fault = case.check(answer)
    if fault is None and case.kind == "responses-chain":
        body = {**case.body, "input": "And in another?", "previous_response_id": answer["id"]}
        r = await client.post(case.path, json=body)
        second = r.json() if r.status_code == 200 else {}
        if r.status_code != 200 or second.get("previous_response_id") != answer["id"]:
            fault = f"continuing: {r.status_code} {r.text[:120]}"
        elif (await client.get(f"/v1/responses/{second['id']}")).json() != second:
            fault = "the stored response is not the one answered"
        else:
            fault = case.check(second)
            for rid in (answer["id"], second["id"]):
                if (await client.delete(f"/v1/responses/{rid}")).status_code != 200:
                    fault = fault or f"could not delete {rid}"
    return outcome + (f" FAULT {fault}" if fault else "")


async def conversation_turns(client: httpx.AsyncClient, case: Case) -> str:
    """A conversation continued twice: each turn's input and output added, then deleted."""
    assert isinstance(case.body, dict) and case.check is not None
    r = await client.post("/v1/conversations", json={"metadata": {"soak": "1"}})
    if r.status_code != 200:
        return f"{case.kind} {r.status_code} UNEXPECTED {r.text[:120]}"
    conv = r.json()["id"]
    fault = None
    for turn in range(2):
        r = await client.post(case.path, json={**case.body, "conversation": conv})
        if r.status_code != 200:
            fault = f"turn {turn}: {r.status_code} {r.text[:120]}"
            break
        answer = r.json()
        fault = case.check(answer)
        items = (await client.get(f"/v1/conversations/{conv}/items",
                                  params={"limit": 100})).json()["data"]  # fmt: skip
        if fault is None and len(items) != 2 * (turn + 1):
            fault = f"{len(items)} items after {turn + 1} turns"
        if fault is not None:
            break
    if (await client.delete(f"/v1/conversations/{conv}")).status_code != 200:
        fault = fault or "could not delete it"
    return f"{case.kind} 200" + (f" FAULT {fault}" if fault else "")


async def background_end(client: httpx.AsyncClient, answer: dict,
                         cancel: bool) -> tuple[dict, str | None]:  # fmt: skip
    """A background response polled to its end (at most 120 s), or cancelled on the way
    (`cancelled`, unless it ended first), then deleted; and a fault, if any."""
    url = f"/v1/responses/{answer['id']}"
    if answer["status"] != "queued" or answer["output"]:
        return answer, f"answered {answer['status']}, not queued"
    deadline = time.monotonic() + 120
    while answer["status"] in ("queued", "in_progress"):
        if time.monotonic() > deadline:
            return answer, "still running after 120 s"
        if cancel:
            r = await client.post(url + "/cancel")
            if r.status_code == 200 and r.json()["status"] != "cancelled":
                return answer, f"cancel answered {r.json()['status']}"
            if r.status_code not in (200, 400):  # (400: it had ended first)
                return answer, f"cancel: {r.status_code} {r.text[:120]}"
            cancel = False
        else:
            await asyncio.sleep(0.05)
        answer = (await client.get(url)).json()
    if (await client.delete(url)).status_code != 200:
        return answer, "could not delete it"
    return answer, None


async def soak(
    url: str, seconds: float, concurrency: int, seed: int, pid: int
) -> tuple[Counter, dict[str, list[float]], list[float]]:
    """(outcomes, seconds each request of a kind took (a repeat's two requests as one), the
    server's RSS in MiB each minute)."""
    outcomes: Counter = Counter()
    latencies: dict[str, list[float]] = {}
    rss: list[float] = []
    deadline = time.monotonic() + seconds

    async def sample_rss() -> None:
        while time.monotonic() < deadline:
            rss.append(process_stats(pid)[1])
            await asyncio.sleep(min(60.0, max(0.0, deadline - time.monotonic())))

    async def worker(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            while time.monotonic() < deadline:
                case = pick(rng)
                t0 = time.monotonic()
                try:
                    outcomes[await one(client, case)] += 1
                except httpx.HTTPError as e:
                    outcomes[f"{case.kind} client error {type(e).__name__}"] += 1
                except (KeyError, TypeError, IndexError, ValueError) as e:  # a malformed answer
                    outcomes[f"{case.kind} FAULT answer shape {type(e).__name__} {e}"] += 1
                latencies.setdefault(case.kind, []).append(time.monotonic() - t0)

    await asyncio.gather(sample_rss(), *(worker(i) for i in range(concurrency)))
    return outcomes, latencies, rss


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
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
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
        warm, _, _ = asyncio.run(
            soak(args.url, min(60.0, args.minutes * 6), args.concurrency, -1, args.pid)
        )
        after_warmup = process_stats(args.pid)
        t0 = time.monotonic()
        outcomes, latencies, rss = asyncio.run(
            soak(args.url, args.minutes * 60, args.concurrency, args.seed, args.pid)
        )
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
    print("server RSS each minute (MiB): " + " ".join(f"{r:.0f}" for r in rss))
    print("seconds a request took, by kind: median, worst")
    for kind, times in sorted(latencies.items()):
        print(f"  {kind:40s} {statistics.median(times):6.2f} {max(times):6.2f}")
    server_errors = sum(c for o, c in outcomes.items()
                        if o.split()[1].startswith("5") or "client error" in o)  # fmt: skip
    print(f"5xx or transport errors: {server_errors}")
    faults = sum(c for o, c in outcomes.items() if " FAULT " in o or " UNEXPECTED " in o)
    print(f"failed checks: {faults}")
    print(f"KV blocks in use at the end: {metric(text, 'roseinfer_kv_cache_used_blocks'):.0f}")
    print(f"generated tokens: {metric(text, 'roseinfer_generation_tokens_total'):.0f}")
    for name, (fds, rss) in (("start", start), ("after warm-up", after_warmup), ("end", end)):
        print(f"server {name:14s} open fds {fds:4d}   RSS {rss:8.1f} MiB")
    return 1 if server_errors or faults else 0


if __name__ == "__main__":
    sys.exit(main())
