"""Soak a server with mixed load and faults for N minutes; report what leaked or broke.

Starts `python -m roseinfer.server` on 127.0.0.1 (or measures one you started, `--url` and
`--pid`), then keeps `--concurrency` clients busy until `--minutes` have passed. Each request is
drawn from a mix: chat and completion requests (streamed and not, n > 1), structured output (a
JSON schema, a regex, choices, a GBNF grammar), required tool calls (streamed and not), echo,
logprobs and prompt_logprobs, stop strings, seeded sampling with every penalty and a bias, long
prompts; and faults: clients that disconnect mid-stream (also inside a JSON schema), malformed
and unknown-field bodies, a schema with a dangling $ref, prompts longer than the context, odd
seeds (huge, 2**64 - 1 with n = 2, negative), tiny and NaN temperatures. A 200 is checked, not
just counted: the output follows its schema, regex, choices, grammar or tools; stop strings are
not in the text; logprobs lists match the tokens; a seeded or greedy request sent twice in a row
gives the same text (whatever ran beside it); the response's id carries the X-Request-Id. At
the end it waits for the server to go idle and prints requests served, outcomes by kind
(`FAULT` or `UNEXPECTED` where a check failed), KV blocks still in use (must be 0), and the
server's open file descriptors and RSS at the start, after warm-up and at the end (they must
stay flat). It exits 1 when any request failed a check or met a 5xx.

    python benchmarks/soak.py --minutes 20 --concurrency 8 -- --dtype float32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import jsonschema

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


SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "maxLength": 16}},
        "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"], "additionalProperties": False}}},
]  # fmt: skip
TOOL_SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
REGEX = "[a-z]{2,8}( [a-z]{2,8}){0,3}\\."
CHOICES = ["red", "green", "blue"]


@dataclass(frozen=True)
class Case:
    """What one client sends next, and what a 200 must hold (`check` returns a fault or None)."""

    kind: str
    path: str
    body: dict | bytes
    status: int = 200
    check: Callable[[dict], str | None] | None = None
    repeat: bool = False  # sent twice in a row: both answers must be the same text


def stopped(choice: dict) -> bool:
    return choice.get("finish_reason") == "stop"


def check_schema(text: str, schema: dict) -> str | None:
    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError) as e:
        return f"breaks its schema: {text[:80]!r} ({type(e).__name__})"
    return None


def check_json(r: dict) -> str | None:
    c = r["choices"][0]
    return check_schema(c["message"]["content"], SCHEMA) if stopped(c) else None


def check_regex(r: dict) -> str | None:
    texts = [c["text"] for c in r["choices"] if stopped(c)]
    bad = [t for t in texts if not re.fullmatch(REGEX, t)]
    return f"breaks the regex: {bad[0][:80]!r}" if bad else None


def check_choice(r: dict) -> str | None:
    text = r["choices"][0]["message"]["content"]
    return None if text in CHOICES else f"not a choice: {text[:80]!r}"


def check_calls(r: dict) -> str | None:
    c = r["choices"][0]
    calls = c["message"].get("tool_calls") or []
    if c["finish_reason"] == "length":
        return None
    if not calls or c["message"]["content"] is not None:
        return f"required call missing or content beside it: {c['message']}"[:160]
    for call in calls:
        fault = check_schema(call["function"]["arguments"], TOOL_SCHEMAS[call["function"]["name"]])
        if fault:
            return fault
    return None


def check_stop(r: dict) -> str | None:
    bad = [c["text"] for c in r["choices"] if "e" in c["text"]]
    return f"stop string in the text: {bad[0][:80]!r}" if bad else None


def check_echo_logprobs(r: dict) -> str | None:
    for c in r["choices"]:
        lp = c["logprobs"]
        n = len(lp["tokens"])
        if not (
            n == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"])
        ):
            return "logprobs lists of different lengths"
        # (the tokens are not always the text: a special token is skipped from the text)
        if lp["token_logprobs"][0] is not None or not "".join(lp["tokens"]).startswith("The sea"):
            return "echo: the prompt's tokens do not come first, or the first has a logprob"
        if any(len(t) > 4 for t in lp["top_logprobs"][1:]):
            return "more than logprobs + 1 entries in top_logprobs"
    return None


def check_chat_logprobs(r: dict) -> str | None:
    content = r["choices"][0]["logprobs"]["content"]
    if len(content) != r["usage"]["completion_tokens"]:
        return f"{len(content)} logprobs for {r['usage']['completion_tokens']} tokens"
    if any(len(t["top_logprobs"]) != 2 for t in content):
        return "not 2 top_logprobs"
    return None


def check_prompt_logprobs(r: dict) -> str | None:
    plp = r["choices"][0].get("prompt_logprobs")
    if not plp or plp[0] is not None or len(plp) != r["usage"]["prompt_tokens"]:
        return f"prompt_logprobs: {str(plp)[:80]} for {r['usage']['prompt_tokens']} tokens"
    return None


def check_stream_n(chunks: list[dict]) -> str | None:
    finished = {
        c["index"] for ch in chunks for c in ch.get("choices", []) if c.get("finish_reason")
    }
    usage = [ch["usage"] for ch in chunks if ch.get("usage")]
    if finished != {0, 1, 2} or len(usage) != 1:
        return f"choices finished {sorted(finished)}, {len(usage)} usage chunks"
    return None


def check_stream_calls(chunks: list[dict]) -> str | None:
    args: dict[int, str] = {}
    names: dict[int, str] = {}
    for ch in chunks:
        for c in ch.get("choices", []):
            if c.get("finish_reason") == "length":
                return None
            for call in c["delta"].get("tool_calls") or []:
                if call.get("function", {}).get("name"):
                    names[call["index"]] = call["function"]["name"]
                args[call["index"]] = args.get(call["index"], "") + call["function"].get(
                    "arguments", ""
                )
    if not names:
        return "no streamed call under tool_choice required"
    for i, name in names.items():
        fault = check_schema(args.get(i, ""), TOOL_SCHEMAS[name])
        if fault:
            return fault
    return None


def pick(rng: random.Random) -> Case:
    base = {"model": None, "max_tokens": rng.randint(4, 48), "temperature": 0.7}
    roll = rng.random()
    if roll < 0.10:
        return Case("chat", "/v1/chat/completions", {**base, "messages": CHAT})
    if roll < 0.16:
        return Case(
            "chat-stream", "/v1/chat/completions", {**base, "messages": CHAT, "stream": True}
        )
    if roll < 0.20:
        return Case("completion", "/v1/completions", {**base, "prompt": "Once upon a time", "n": 2})
    if roll < 0.25:
        return Case("disconnect", "/v1/completions", {**base, "prompt": "Count:", "stream": True,
                                                      "max_tokens": 200})  # fmt: skip
    if roll < 0.27:
        return Case("bad-json", "/v1/completions", b'{"prompt": "x", "max_tokens": ', 400)
    if roll < 0.29:
        return Case(
            "unknown-field", "/v1/completions", {**base, "prompt": "x", "frobnicate": 1}, 400
        )
    if roll < 0.31:
        return Case("too-long", "/v1/completions", {**base, "prompt": "word " * 20000}, 400)
    if roll < 0.34:
        seed = rng.choice([99999999999999999999, 2**64 - 1, -5, 2**63])
        body = {**base, "messages": CHAT, "seed": seed, "n": 2}
        return Case("odd-seed", "/v1/chat/completions", body, 400 if seed > 2**64 - 1 else 200)
    if roll < 0.36:
        temperature = rng.choice([1e-40, 1e-300, float("nan")])
        body = {**base, "prompt": "Hi", "temperature": temperature}
        return Case(
            "odd-temperature", "/v1/completions", body, 200 if temperature == temperature else 400
        )
    if roll < 0.42:
        body = {**base, "max_tokens": 64, "messages": CHAT,
                "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}}  # fmt: skip
        return Case("json-schema", "/v1/chat/completions", body, check=check_json)
    if roll < 0.46:
        body = {**base, "prompt": "Say:", "n": 2, "structured_outputs": {"regex": REGEX}}
        return Case("regex", "/v1/completions", body, check=check_regex)
    if roll < 0.49:
        return Case("choice", "/v1/chat/completions", {**base, "messages": CHAT, "guided_choice": CHOICES},
                    check=check_choice)  # fmt: skip
    if roll < 0.54:
        body = {
            **base,
            "max_tokens": 64,
            "messages": CHAT,
            "tools": TOOLS,
            "tool_choice": "required",
        }
        return Case("tools-required", "/v1/chat/completions", body, check=check_calls)
    if roll < 0.58:
        body = {**base, "max_tokens": 64, "messages": CHAT, "tools": TOOLS, "tool_choice": "required",
                "stream": True}  # fmt: skip
        return Case("tools-stream", "/v1/chat/completions", body, check=check_stream_calls)
    if roll < 0.61:
        body = {**base, "max_tokens": 200, "messages": CHAT, "stream": True,
                "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}}  # fmt: skip
        return Case("disconnect-structured", "/v1/chat/completions", body)
    if roll < 0.65:
        body = {**base, "prompt": "The sea", "echo": True, "logprobs": 3, "n": 2}
        return Case("echo-logprobs", "/v1/completions", body, check=check_echo_logprobs)
    if roll < 0.68:
        body = {**base, "messages": CHAT, "logprobs": True, "top_logprobs": 2}
        return Case("chat-logprobs", "/v1/chat/completions", body, check=check_chat_logprobs)
    if roll < 0.71:
        body = {**base, "prompt": "The sea is deep and", "prompt_logprobs": 2}
        return Case("prompt-logprobs", "/v1/completions", body, check=check_prompt_logprobs)
    if roll < 0.74:
        return Case("stop-string", "/v1/completions", {**base, "prompt": "Hello", "stop": ["e"], "n": 2},
                    check=check_stop)  # fmt: skip
    if roll < 0.78:
        body = {**base, "messages": CHAT, "stream": True, "n": 3,
                "stream_options": {"include_usage": True}}  # fmt: skip
        return Case("stream-n3-usage", "/v1/chat/completions", body, check=check_stream_n)
    if roll < 0.86:
        body = {**base, "prompt": "Once upon a time", "seed": rng.randrange(2**32), "top_k": 40,
                "top_p": 0.9, "min_p": 0.02, "presence_penalty": 0.5, "frequency_penalty": 0.3,
                "repetition_penalty": 1.1, "logit_bias": {"28": -100}}  # fmt: skip
        return Case("seeded-repeat", "/v1/completions", body, repeat=True)
    if roll < 0.92:
        body = {**base, "temperature": 0, "messages": CHAT}
        return Case("greedy-repeat", "/v1/chat/completions", body, repeat=True)
    if roll < 0.94:
        body = {**base, "prompt": "x", "response_format": {"type": "json_schema", "json_schema": {
            "name": "bad", "schema": {"type": "object", "properties": {"a": {"$ref": "#/nope"}}}}}}  # fmt: skip
        return Case("bad-schema", "/v1/completions", body, 400)
    if roll < 0.97:
        body = {**base, "prompt": "Answer:", "grammar": 'root ::= ("yes" | "no") "."'}
        return Case("gbnf", "/v1/completions", body,
                    check=lambda r: None if r["choices"][0]["text"] in ("yes.", "no.") else
                    f"breaks the grammar: {r['choices'][0]['text'][:80]!r}")  # fmt: skip
    body = {**base, "prompt": "hi " * 1500, "max_tokens": 16}
    return Case("long-prompt", "/v1/completions", body)


def text_of(r: dict) -> list[str]:
    return [c.get("text") or (c.get("message") or {}).get("content") or "" for c in r["choices"]]


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
        elif text_of(again.json()) != text_of(answer):
            fault = f"not repeatable: {text_of(answer)} then {text_of(again.json())}"[:200]
    return outcome + (f" FAULT {fault}" if fault else "")


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
    server_errors = sum(c for o, c in outcomes.items() if " 5" in o or "client error" in o)
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
