"""The load client of `roseinfer bench serve`: one streamed OpenAI request (or llama.cpp's native
/completion), and N of them under a concurrency limit and a Poisson arrival process.

It speaks HTTP through `roseinfer.bench.http` (~40 µs per streamed chunk) rather than httpx
(~100 µs): on a small machine the client's CPU is taken from the server it measures.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from roseinfer.bench.http import ConnectionPool
from roseinfer.bench.serve_prompts import PromptSpec
from roseinfer.bench.serve_report import RequestResult, compute_metrics


@dataclass
class ServeConfig:
    base_url: str
    model: str
    endpoint_type: str = "completions"
    ignore_eos: bool = True
    include_usage: bool = True
    temperature: float = 0.0
    extra_body: dict = field(default_factory=dict)
    api_key: str | None = None
    timeout: float = 600.0

    @property
    def url(self) -> str:
        base = self.base_url.rstrip("/")
        if self.endpoint_type == "llamacpp":  # llama.cpp's native API: at the root, not /v1
            return base.removesuffix("/v1") + "/completion"
        path = "/chat/completions" if self.endpoint_type == "chat" else "/completions"
        return base + path

    @property
    def path(self) -> str:
        """The URL's path (what the request line names)."""
        return urlsplit(self.url).path

    def payload(self, spec: PromptSpec) -> dict:
        body: dict = {
            "model": self.model,
            "max_tokens": spec.output_len,
            "temperature": self.temperature,
            "stream": True,
        }
        if self.endpoint_type == "llamacpp":  # its last chunk counts the tokens: no usage
            body = {"model": self.model, "prompt": spec.prompt, "n_predict": spec.output_len,
                    "temperature": self.temperature, "stream": True}  # fmt: skip
        elif self.endpoint_type == "chat":
            body["messages"] = [{"role": "user", "content": spec.prompt}]
        else:
            body["prompt"] = spec.prompt
        if self.include_usage and self.endpoint_type != "llamacpp":
            body["stream_options"] = {"include_usage": True}
        if self.ignore_eos:
            body["ignore_eos"] = True
        body.update(self.extra_body)
        return body

    def headers(self) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers


def _chunk_text(choice: dict) -> str:
    if "text" in choice:
        return choice.get("text") or ""
    delta = choice.get("delta") or {}
    return delta.get("content") or ""


async def send_request(pool: ConnectionPool, cfg: ServeConfig, spec: PromptSpec) -> RequestResult:
    """Stream one request; never raises (failures are results with success=False)."""
    out = RequestResult(prompt_len=spec.prompt_len)
    chunks = 0
    body = json.dumps(cfg.payload(spec)).encode()
    start = time.perf_counter()
    last = start
    try:
        async with (
            asyncio.timeout(cfg.timeout),
            pool.request("POST", cfg.path, body, cfg.headers()) as resp,
        ):
            if resp.status != 200:
                text = (await resp.read()).decode("utf-8", "replace")
                out.error = f"HTTP {resp.status}: {text[:300]}"
                return out
            done = False
            async for line in resp.lines():
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue  # blank lines, SSE comments, event: lines
                data = line[5:].strip()
                if data == b"[DONE]":
                    done = True
                    continue  # read to the end, so the connection can be reused
                chunk = json.loads(data)
                if chunk.get("error"):
                    out.error = f"server error: {json.dumps(chunk['error'])[:300]}"
                    return out
                if "content" in chunk:  # llama.cpp's: the text, then a result per choice
                    choices = [{"text": chunk["content"]}]
                    if chunk.get("stop"):
                        done = out.usage = True
                        out.output_tokens = int(chunk.get("tokens_predicted") or 0)
                        out.prompt_len = int(chunk.get("tokens_evaluated") or out.prompt_len)
                else:
                    choices = chunk.get("choices") or []
                usage = chunk.get("usage")
                if usage and usage.get("completion_tokens") is not None:
                    out.output_tokens = int(usage["completion_tokens"])
                    out.usage = True
                    if usage.get("prompt_tokens"):
                        out.prompt_len = int(usage["prompt_tokens"])
                for choice in choices:
                    text = _chunk_text(choice)
                    if not text:
                        continue
                    now = time.perf_counter()
                    if chunks == 0:
                        out.ttft = now - start
                    else:
                        out.itl.append(now - last)
                    last = now
                    chunks += 1
                    out.text += text
            out.latency = time.perf_counter() - start
            if not out.usage:
                out.output_tokens = chunks
            if not done and not out.usage:
                out.error = "stream ended without [DONE]"
                return out
            if chunks == 0:
                out.error = "no text received"
                return out
            out.success = True
    except TimeoutError:
        out.error = f"timed out after {cfg.timeout:g} s"
    except Exception as e:  # connection refused, bad JSON: a failed request, not a crash
        out.error = f"{type(e).__name__}: {e}"
    return out


def arrival_gaps(num: int, request_rate: float, seed: int) -> list[float]:
    """Seconds to wait before each request: 0 for the first, then exponential gaps (Poisson)."""
    if math.isinf(request_rate) or request_rate <= 0:
        return [0.0] * num
    rng = random.Random(seed)
    return [0.0] + [rng.expovariate(request_rate) for _ in range(num - 1)]


async def run_benchmark(
    cfg: ServeConfig,
    specs: list[PromptSpec],
    concurrency: int | None,
    request_rate: float = math.inf,
    seed: int = 0,
    progress: bool = True,
    desc: str = "",
) -> dict:
    from roseinfer.progress import progress as progress_bar

    sem = asyncio.Semaphore(concurrency or len(specs))
    bar = progress_bar(len(specs), desc or "requests", "req", disable=not progress)
    pool = ConnectionPool(cfg.base_url)

    async def limited(spec: PromptSpec) -> RequestResult:
        async with sem:
            res = await send_request(pool, cfg, spec)
        bar.update(1)
        return res

    try:
        start = time.perf_counter()
        tasks = []
        for spec, gap in zip(specs, arrival_gaps(len(specs), request_rate, seed), strict=True):
            if gap > 0:
                await asyncio.sleep(gap)
            tasks.append(asyncio.create_task(limited(spec)))
        results = await asyncio.gather(*tasks)
        duration = time.perf_counter() - start
    finally:
        await pool.close()
    bar.close()
    return compute_metrics(results, duration, concurrency, request_rate)


def discover_model(base_url: str, api_key: str | None) -> str:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/") + "/models"

    async def get() -> tuple[int, bytes]:
        pool = ConnectionPool(url)
        try:
            async with (
                asyncio.timeout(30.0),
                pool.request("GET", urlsplit(url).path, b"", headers) as r,
            ):
                return r.status, await r.read()
        finally:
            await pool.close()

    status, body = asyncio.run(get())
    if status != 200:
        raise ValueError(f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}")
    data = json.loads(body).get("data") or []
    if not data:
        raise ValueError(f"{base_url}/models lists no model; pass --model")
    return data[0]["id"]
