"""The OpenAI-compatible server, end to end: a real `python -m roseinfer.server` process serving
SmolLM2 on 127.0.0.1 (a free port), driven with the official `openai` client and httpx.

Two servers start in parallel for the whole module:
- `server`: no API key, float32 (greedy results do not depend on batch mates' numerics, so
  stream == non-stream can be compared exactly; requests in those tests run one at a time);
- `locked`: `--api-key`, `--max-num-seqs 1 --max-waiting-requests 2`, a 4 KiB body limit and
  `--served-model-name`, for auth, 503 and 413.

Every wait is bounded in count and time; no test asserts a duration.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time

import httpx
import openai
import pytest
from openai import AsyncOpenAI, OpenAI

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = "SmolLM2-135M-Instruct"
API_KEY = "test-secret"
START_TIMEOUT = 240.0  # loading SmolLM2 takes seconds; a busy CI machine gets slack
CHAT = [{"role": "user", "content": "What is the capital of France?"}]
PROMPT = "The capital of France is"  # < 16 tokens: no prefix-cache block, runs identical


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, name: str, args: list[str], tmp_path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / f"{name}.log"
        self._log = open(self.log_path, "w")
        cmd = [
            sys.executable, "-m", "roseinfer.server", "--model", "smollm2", "--host", "127.0.0.1",
            "--port", str(self.port), "--dtype", "float32", "--kv-cache-memory", "0.25", *args,
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "ROSEINFER_API_KEY"}
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def wait_healthy(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"server exited with {self.proc.returncode}:\n{self.log()[-4000:]}")
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        pytest.fail(f"server not healthy after {START_TIMEOUT}s:\n{self.log()[-4000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
        self._log.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("servers")
    started = [
        Server("open", [], tmp),
        Server("locked", ["--api-key", API_KEY, "--max-num-seqs", "1", "--max-waiting-requests", "2",
                          "--max-request-bytes", "4096", "--served-model-name", "rose-test",
                          "--stream-interval", "4"], tmp),
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT
        for s in started:
            s.wait_healthy(deadline)
        yield {s.log_path.stem: s for s in started}
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def server(servers) -> Server:
    return servers["open"]


@pytest.fixture(scope="module")
def locked(servers) -> Server:
    return servers["locked"]


@pytest.fixture(scope="module")
def client(server) -> OpenAI:
    return OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server.url, timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def tokenizer():
    from roseinfer.loader import smollm2_path
    from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf

    return tokenizer_from_gguf(smollm2_path())


def metrics(url: str) -> dict[str, float]:
    """The server's Prometheus samples: {'name{labels}': value}."""
    out = {}
    for line in httpx.get(url + "/metrics", timeout=10).text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def wait_for_idle(url: str, timeout: float = 15.0) -> dict[str, float]:
    """Poll /metrics (bounded) until no request runs or waits and no KV block is held."""
    deadline = time.monotonic() + timeout
    while True:
        m = metrics(url)
        idle = (m["roseinfer_num_requests_running"], m["roseinfer_num_requests_waiting"],
                m["roseinfer_kv_cache_used_blocks"]) == (0, 0, 0)  # fmt: skip
        if idle or time.monotonic() > deadline:
            return m
        time.sleep(0.1)


def sse_events(lines) -> list:
    """Parsed `data:` payloads of an SSE stream ('[DONE]' kept as a string)."""
    out = []
    for line in lines:
        if line.startswith("data: "):
            data = line[len("data: ") :]
            out.append(data if data == "[DONE]" else json.loads(data))
    return out


# ---- start-up, health, models ----------------------------------------------------------------


def test_startup_log_names_model_dtype_kv_capacity_and_url(server):
    url = f"http://127.0.0.1:{server.port}"
    # The "serving on" line comes from a thread that polls uvicorn's `started` every 50 ms, so
    # /health can answer a moment before it is written.
    deadline = time.monotonic() + 10
    while url not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = server.log()
    assert MODEL in log
    assert "float32" in log
    assert re.search(r"KV cache: \d+ blocks x 16 tokens = \d+ tokens", log)
    assert url in log


def test_health_and_models(http, client):
    assert http.get("/health").json() == {"status": "ok"}
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL]


# ---- chat and completions --------------------------------------------------------------------


def test_chat_completion(client, tokenizer):
    r = client.chat.completions.create(model=MODEL, messages=CHAT, max_tokens=24, temperature=0)
    choice = r.choices[0]
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-") and r.model == MODEL
    assert isinstance(r.created, int) and r.created > 0
    assert choice.message.role == "assistant"
    assert "Paris" in choice.message.content
    assert choice.finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens == len(tokenizer.encode_chat(CHAT))
    assert 0 < r.usage.completion_tokens <= 24
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_completion(client, tokenizer):
    r = client.completions.create(
        model=MODEL, prompt=PROMPT, max_tokens=8, temperature=0, extra_body={"ignore_eos": True}
    )
    assert r.object == "text_completion" and r.id.startswith("cmpl-")
    assert r.choices[0].text and r.choices[0].finish_reason == "length"
    assert r.usage.prompt_tokens == len(tokenizer.encode(PROMPT))
    assert r.usage.completion_tokens == 8


def test_greedy_chat_stream_equals_non_stream(client):
    kwargs = dict(model=MODEL, messages=CHAT, max_tokens=24, temperature=0)
    client.chat.completions.create(**kwargs)  # warm the prefix cache: both runs below read it
    full = client.chat.completions.create(**kwargs)
    chunks = list(client.chat.completions.create(**kwargs, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == full.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == full.choices[0].finish_reason
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)


def test_greedy_completion_stream_equals_non_stream(client):
    kwargs = dict(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=0)
    full = client.completions.create(**kwargs)
    chunks = list(client.completions.create(**kwargs, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == full.choices[0].text
    assert chunks[-1].choices[0].finish_reason == full.choices[0].finish_reason


def test_prompt_as_token_ids_and_as_list_of_strings(client, tokenizer):
    kwargs = dict(model=MODEL, max_tokens=8, temperature=0)
    by_text = client.completions.create(prompt=PROMPT, **kwargs).choices[0].text
    by_ids = client.completions.create(prompt=tokenizer.encode(PROMPT), **kwargs)
    assert by_ids.choices[0].text == by_text
    two = client.completions.create(prompt=[PROMPT, "def add(a, b):"], **kwargs)
    assert [c.index for c in two.choices] == [0, 1]
    assert two.choices[0].text == by_text
    assert two.usage.prompt_tokens == len(tokenizer.encode(PROMPT)) + len(
        tokenizer.encode("def add(a, b):")
    )


def test_stop_strings_cut_the_text_and_never_leak(client):
    kwargs = dict(
        model=MODEL, prompt=PROMPT, max_tokens=24, temperature=0, extra_body={"ignore_eos": True}
    )
    full = client.completions.create(**kwargs).choices[0].text
    stop = full[len(full) // 2 : len(full) // 2 + 3]
    expected = full[: full.find(stop)]
    r = client.completions.create(**kwargs, stop=[stop, "never appears §"])
    assert (r.choices[0].text, r.choices[0].finish_reason) == (expected, "stop")
    assert r.usage.completion_tokens < 24
    pieces = [
        c.choices[0].text for c in client.completions.create(**kwargs, stop=stop, stream=True)
    ]
    assert "".join(pieces) == expected  # so no piece held any part of the stop string
    chat = client.chat.completions.create(
        model=MODEL, messages=CHAT, max_tokens=24, temperature=0, stop="Paris"
    )
    assert (
        "Paris" not in chat.choices[0].message.content and chat.choices[0].finish_reason == "stop"
    )


def test_n_choices(client):
    r = client.chat.completions.create(
        model=MODEL, messages=CHAT, max_tokens=12, temperature=1.0, n=2, seed=7
    )
    assert [c.index for c in r.choices] == [0, 1]
    assert all(c.finish_reason in ("stop", "length") for c in r.choices)
    assert 0 < r.usage.completion_tokens <= 24
    chunks = list(
        client.chat.completions.create(
            model=MODEL, messages=CHAT, max_tokens=12, n=2, seed=7, stream=True
        )
    )
    finished = {c.choices[0].index for c in chunks if c.choices and c.choices[0].finish_reason}
    assert finished == {0, 1}


def test_seed_reproducibility(client):
    kwargs = dict(model=MODEL, prompt=PROMPT, max_tokens=16, temperature=1.0, seed=1234, n=2)
    a = client.completions.create(**kwargs)
    b = client.completions.create(**kwargs)
    assert [c.text for c in a.choices] == [c.text for c in b.choices]
    streamed = {}
    for c in client.completions.create(**kwargs, stream=True):
        streamed[c.choices[0].index] = streamed.get(c.choices[0].index, "") + c.choices[0].text
    assert [streamed[0], streamed[1]] == [c.text for c in a.choices]


def test_include_usage(client, tokenizer):
    chunks = list(client.chat.completions.create(
        model=MODEL, messages=CHAT, max_tokens=10, temperature=0, stream=True,
        stream_options={"include_usage": True},
    ))  # fmt: skip
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert all(c.usage is None for c in chunks[:-1])
    assert last.usage.prompt_tokens == len(tokenizer.encode_chat(CHAT))
    assert 0 < last.usage.completion_tokens <= 10
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens


def test_ignore_eos_min_tokens_and_max_completion_tokens(client):
    short = [{"role": "user", "content": "Reply with just the word yes."}]
    r = client.chat.completions.create(model=MODEL, messages=short, max_tokens=20, temperature=0,
                                       extra_body={"ignore_eos": True})  # fmt: skip
    assert (r.usage.completion_tokens, r.choices[0].finish_reason) == (20, "length")
    r = client.chat.completions.create(model=MODEL, messages=short, max_tokens=40, temperature=0,
                                       extra_body={"min_tokens": 15})  # fmt: skip
    assert r.usage.completion_tokens >= 15
    r = client.chat.completions.create(
        model=MODEL, messages=CHAT, max_completion_tokens=3, temperature=0
    )
    assert (r.usage.completion_tokens, r.choices[0].finish_reason) == (3, "length")


def test_chat_content_parts_no_ops_and_nulls(http):
    body = {
        "model": MODEL, "max_tokens": 4, "temperature": 0, "user": "u1",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
    }  # fmt: skip
    r = http.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["role"] == "assistant"
    nulls = {
        "n": None,
        "stream": None,
        "stop": None,
        "logprobs": None,
        "tools": None,
        "stream_options": None,
    }
    r = http.post("/v1/chat/completions", json={**body, **nulls})  # explicit nulls mean "left out"
    assert r.status_code == 200 and len(r.json()["choices"]) == 1, r.text


def test_seeds_generate_endpoint_both_ways(http):
    body = {"prompt": PROMPT, "max_new_tokens": 12, "temperature": 1.0, "top_k": 0, "top_p": 1.0,
            "stop_on_eos": True, "do_sample": False}  # fmt: skip
    r = http.post("/generate", json=body)
    assert r.status_code == 200
    text = r.json()["text"]
    assert text
    with http.stream("POST", "/generate", json={**body, "stream": True}) as s:
        assert s.status_code == 200 and s.headers["content-type"].startswith("text/plain")
        pieces = list(s.iter_text())
    assert "".join(pieces) == text


# ---- concurrency and disconnects -------------------------------------------------------------


def test_32_concurrent_streams_all_finish(server):
    async def one(client: AsyncOpenAI, i: int) -> tuple[str, str | None]:
        stream = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": f"Count to {i}."}], max_tokens=8,
            temperature=0, stream=True,
        )  # fmt: skip
        text, reason = "", None
        async for c in stream:
            if c.choices:
                text += c.choices[0].delta.content or ""
                reason = c.choices[0].finish_reason or reason
        return text, reason

    async def main():
        async with AsyncOpenAI(
            base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=180
        ) as client:
            return await asyncio.wait_for(asyncio.gather(*(one(client, i) for i in range(32))), 300)

    results = asyncio.run(main())
    assert len(results) == 32
    assert all(reason in ("stop", "length") and text for text, reason in results)
    m = wait_for_idle(server.url)
    assert m["roseinfer_num_requests_running"] == 0


def test_16_disconnecting_streams_free_everything(server):
    before = metrics(server.url).get(
        'roseinfer_requests_finished_total{finished_reason="abort"}', 0.0
    )
    body = {
        "model": MODEL,
        "messages": CHAT,
        "max_tokens": 400,
        "temperature": 0,
        "stream": True,
        "ignore_eos": True,
    }

    async def one(client: httpx.AsyncClient) -> int:
        async with client.stream("POST", "/v1/chat/completions", json=body) as r:
            assert r.status_code == 200
            seen = 0
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    seen += 1
                    if seen >= 3:
                        break  # leaving the block closes the connection mid-stream
            return seen

    async def main():
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
            return await asyncio.wait_for(asyncio.gather(*(one(client) for _ in range(16))), 300)

    assert asyncio.run(main()) == [3] * 16
    m = wait_for_idle(server.url)
    assert m["roseinfer_num_requests_running"] == 0
    assert (
        m["roseinfer_kv_cache_used_blocks"] == 0
    )  # prefix-cache blocks are free (cached_free_blocks)
    assert m['roseinfer_requests_finished_total{finished_reason="abort"}'] == before + 16


def test_non_stream_client_disconnect_aborts(server):
    before = metrics(server.url).get(
        'roseinfer_requests_finished_total{finished_reason="abort"}', 0.0
    )
    body = {
        "model": MODEL,
        "prompt": PROMPT,
        "max_tokens": 1000,
        "temperature": 0,
        "ignore_eos": True,
    }
    payload = json.dumps(body).encode()
    request = (f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload  # fmt: skip
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as conn:
        conn.sendall(request)
        # Leave once it runs (not after a fixed time: on a busy machine the server might not
        # have read the request yet, and a request gone before it is read never starts).
        deadline = time.monotonic() + 60
        while metrics(server.url)["roseinfer_num_requests_running"] < 1:
            assert time.monotonic() < deadline, "the request never started"
            time.sleep(0.05)
    m = wait_for_idle(server.url)
    assert (m["roseinfer_num_requests_running"], m["roseinfer_kv_cache_used_blocks"]) == (0, 0)
    assert m['roseinfer_requests_finished_total{finished_reason="abort"}'] == before + 1


# ---- errors ----------------------------------------------------------------------------------

C, CC = "/v1/completions", "/v1/chat/completions"
BAD_REQUESTS = [
    (C, "{not json", 400, None),
    (C, {"model": MODEL}, 400, "prompt"),
    (CC, {"model": MODEL}, 400, "messages"),
    (C, {"prompt": "hi", "max_tokens": "16"}, 400, "max_tokens"),
    (CC, {"messages": "hi"}, 400, "messages"),
    (C, {"prompt": "hi", "temperature": "hot"}, 400, "temperature"),
    (C, {"prompt": "hi", "max_tokens": 0}, 400, "max_tokens"),
    (CC, {"messages": CHAT, "max_completion_tokens": 0}, 400, "max_completion_tokens"),
    (C, {"prompt": "hi", "temperature": -0.1}, 400, "temperature"),
    (C, {"prompt": "hi", "top_p": 0}, 400, "top_p"),
    (C, {"prompt": "hi", "top_p": 1.5}, 400, "top_p"),
    (C, {"prompt": "hi", "n": 0}, 400, "n"),
    (CC, {"messages": []}, 400, "messages"),
    (CC, {"messages": [{"role": "wizard", "content": "hi"}]}, 400, "messages.0.role"),
    (CC, {"messages": [{"role": "user", "content": 42}]}, 400, "messages.0.content"),
    (C, {"prompt": "hi", "min_tokens": 10, "max_tokens": 5}, 400, "min_tokens"),
    (C, {"prompt": "", "max_tokens": 5}, 400, "prompt"),
    (C, {"prompt": [1, 10**9], "max_tokens": 5}, 400, "prompt"),
    (C, {"prompt": "hi", "logprobs": 21}, 400, "logprobs"),
    (CC, {"messages": CHAT, "logprobs": True, "top_logprobs": 21}, 400, "top_logprobs"),
    (CC, {"messages": CHAT, "top_logprobs": 2}, 400, "top_logprobs"),
    (C, {"prompt": "hi", "prompt_logprobs": 1, "stream": True}, 400, "prompt_logprobs"),
    (C, {"prompt": "hi", "allowed_token_ids": [10**9]}, 400, "allowed_token_ids"),
    (C, {"prompt": "hi", "bad_words": [" "]}, 400, "bad_words"),
    (
        CC,
        {"messages": CHAT, "functions": [{"name": "f"}]},
        400,
        "functions",
    ),
    (CC, {"messages": CHAT, "response_format": {"type": "xml"}}, 400, "response_format.type"),
    (CC, {"messages": CHAT, "guided_regex": "(x"}, 400, "guided_regex"),
    (CC, {"messages": CHAT, "guided_regex": "x", "guided_choice": ["x"]}, 400, "guided_choice"),
    (CC, {"messages": CHAT, "presence_penalty": 2.5}, 400, "presence_penalty"),
    (CC, {"messages": CHAT, "echo": "yes"}, 400, "echo"),
    (C, {"prompt": "hi", "best_of": 3}, 400, "best_of"),
    (C, {"prompt": "hi", "suffix": "x"}, 400, "suffix"),
    (C, {"prompt": "hi", "logit_bias": {"1": 500}}, 400, "logit_bias"),
    (CC, {"model": "gpt-4", "messages": CHAT}, 404, "model"),
    (CC, {"messages": CHAT, "some_future_field": 1}, 400, "some_future_field"),
    (C, {"prompt": "hi", "min_p": 1.5}, 400, "min_p"),
    ("/generate", {"prompt": "hi", "max_new_tokens": 0}, 400, "max_new_tokens"),
]


@pytest.mark.parametrize(("path", "body", "status", "param"), BAD_REQUESTS,
                         ids=[f"{i}-{p.rsplit('/', 1)[1]}" for i, (p, *_) in enumerate(BAD_REQUESTS)])  # fmt: skip
def test_bad_request_gets_openai_error(http, path, body, status, param):
    content = body if isinstance(body, str) else json.dumps(body)
    r = http.post(path, content=content, headers={"Content-Type": "application/json"})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["message"]
    assert err["param"] == param
    if param is not None and status == 400 and "." not in param:  # named as the request did
        assert param in err["message"], err


@pytest.mark.parametrize("logprobs", [None, False])
def test_top_logprobs_0_without_logprobs_asks_for_nothing(http, logprobs):
    """vLLM's default, which its clients send: a 200 without logprobs, not a 400."""
    body = {"messages": CHAT, "max_tokens": 2, "top_logprobs": 0, "logprobs": logprobs}
    r = http.post(CC, json=body)
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["logprobs"] is None


def test_prompt_beyond_context_names_both_numbers(client, tokenizer):
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=9000)
    message = e.value.body["message"]
    assert str(len(tokenizer.encode(PROMPT))) in message and "9000" in message and "8192" in message


def test_server_still_answers_after_bad_input(client, http):
    assert http.get("/health").status_code == 200
    r = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=4, temperature=0)
    assert r.choices[0].text


def test_metrics(server):
    m = wait_for_idle(server.url)
    for name in ("roseinfer_num_requests_running", "roseinfer_num_requests_waiting",
                 "roseinfer_kv_cache_used_blocks", "roseinfer_prefix_cache_hit_rate"):  # fmt: skip
        assert name in m
    assert m["roseinfer_kv_cache_total_blocks"] > 0
    assert m["roseinfer_prompt_tokens_total"] > 0 and m["roseinfer_generation_tokens_total"] > 0
    for h in (
        "time_to_first_token_seconds",
        "time_per_output_token_seconds",
        "e2e_request_latency_seconds",
    ):
        assert m[f"roseinfer_{h}_count"] > 0
    assert 0 < m["roseinfer_prefix_cache_hit_rate"] <= 1  # the chat prompts share a prefix


# ---- the locked server: API key, 413, 503, served model name ----------------------------------


def test_api_key_required(locked):
    url = locked.url
    body = {"model": "rose-test", "prompt": PROMPT, "max_tokens": 2}
    assert httpx.get(url + "/health").status_code == 200  # probes need no key
    assert httpx.post(url + C, json=body).status_code == 401
    r = httpx.post(url + C, json=body, headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    assert httpx.get(url + "/v1/models").status_code == 401
    assert httpx.post(url + "/generate", json={"prompt": "hi"}).status_code == 401
    good = OpenAI(base_url=url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)
    assert [m.id for m in good.models.list().data] == ["rose-test"]
    assert good.completions.create(model="rose-test", prompt=PROMPT, max_tokens=2).choices[0].text
    with pytest.raises(openai.AuthenticationError):
        OpenAI(base_url=url + "/v1", api_key="nope", max_retries=0).models.list()
    with pytest.raises(openai.NotFoundError):
        good.completions.create(model=MODEL, prompt=PROMPT, max_tokens=2)


def test_body_size_limit(locked):
    auth = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    big = json.dumps({"model": "rose-test", "prompt": "x" * 10_000, "max_tokens": 2}).encode()
    r = httpx.post(locked.url + C, content=big, headers=auth)
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"

    def chunked():  # no Content-Length: refused while reading
        for i in range(0, len(big), 1000):
            yield big[i : i + 1000]

    r = httpx.post(locked.url + C, content=chunked(), headers=auth)
    assert r.status_code == 413
    assert httpx.get(locked.url + "/health").status_code == 200


def test_stream_interval_sends_tokens_in_groups(locked):
    """--stream-interval 4: the first token in a chunk of its own, then chunks of 4 tokens; the
    text and the usage are those of the non-streamed completion."""
    good = OpenAI(base_url=locked.url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)
    kwargs = dict(
        model="rose-test",
        prompt=PROMPT,
        max_tokens=13,
        temperature=0,
        extra_body={"ignore_eos": True},
    )
    full = good.completions.create(**kwargs)
    chunks = list(
        good.completions.create(**kwargs, stream=True, stream_options={"include_usage": True})
    )
    assert "".join(c.choices[0].text for c in chunks if c.choices) == full.choices[0].text
    assert chunks[-1].usage.completion_tokens == full.usage.completion_tokens == 13
    # 13 tokens: 1 + 4 + 4 + 4, the last group with the finish reason; then the usage chunk
    # (a group may hold text that the detokenizer still waits on, so count at most 4 chunks).
    assert 2 <= len([c for c in chunks if c.choices]) <= 4
    assert [c for c in chunks if c.choices][-1].choices[0].finish_reason == "length"


def test_503_when_waiting_queue_is_full(locked):
    """--max-num-seqs 1 --max-waiting-requests 2: one runs, two wait, the fourth is refused."""
    headers = {"Authorization": f"Bearer {API_KEY}"}
    body = {
        "model": "rose-test",
        "prompt": PROMPT,
        "max_tokens": 2000,
        "stream": True,
        "ignore_eos": True,
    }

    async def main():
        async with httpx.AsyncClient(base_url=locked.url, headers=headers, timeout=120) as client:
            async with client.stream("POST", C, json=body) as running:
                lines = running.aiter_lines()
                while not (await anext(lines)).startswith("data: "):
                    pass  # the first token: this one is running
                async with (
                    client.stream("POST", C, json=body) as w1,
                    client.stream("POST", C, json=body) as w2,
                ):
                    assert (w1.status_code, w2.status_code) == (200, 200)
                    r = await client.post(C, json={**body, "stream": False, "max_tokens": 2})
                    return r.status_code, r.headers.get("retry-after"), r.json()

    status, retry_after, payload = asyncio.run(asyncio.wait_for(main(), 300))
    assert status == 503 and retry_after is not None
    assert payload["error"]["code"] == "server_overloaded"
    m = wait_for_idle(locked.url)
    assert (m["roseinfer_num_requests_running"], m["roseinfer_kv_cache_used_blocks"]) == (0, 0)
    r = httpx.post(
        locked.url + C,
        json={**body, "stream": False, "max_tokens": 2},
        headers=headers,
        timeout=120,
    )
    assert r.status_code == 200
