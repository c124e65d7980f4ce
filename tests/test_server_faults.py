"""Failures inside the server, in-process (uvicorn in a thread, a tiny random model): an
exception while processing one request fails that request only, an engine step that raises
fails its batch, and in both cases the server goes on answering."""

from __future__ import annotations

import concurrent.futures
import json
import time

import httpx
import openai
import pytest
from conftest import serve_in_process

from roseinfer.output.processor import ChoiceState

POISON = 13  # requests with this max_tokens raise inside the handler's processing


@pytest.fixture(scope="module")
def live(tiny_model_dir):
    """A server of its own: these tests break its engine on purpose."""
    with serve_in_process(tiny_model_dir("llama")) as served:
        yield served


@pytest.fixture
def poisoned(monkeypatch):
    real_feed = ChoiceState.feed

    def feed(self, token_ids, finish_reason, logprobs=None):
        if self.max_tokens == POISON and len(self.token_ids) >= 2:
            raise ValueError("poisoned request")
        return real_feed(self, token_ids, finish_reason, logprobs)

    monkeypatch.setattr(ChoiceState, "feed", feed)


def body(max_tokens: int, **extra) -> dict:
    return {
        "prompt": "Hello world",
        "max_tokens": max_tokens,
        "temperature": 0,
        "ignore_eos": True,
        **extra,
    }


def wait_idle(app, timeout: float = 10.0) -> bool:
    manager = app.state.client
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (
            manager.stats.num_running,
            manager.stats.num_waiting,
            manager.stats.num_used_blocks,
        ) == (0, 0, 0):
            return True
        time.sleep(0.02)
    return False


def test_exception_in_one_request_fails_only_that_request(live, poisoned):
    app, url = live
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        bad = pool.submit(httpx.post, url + "/v1/completions", json=body(POISON), timeout=60)
        good = pool.submit(httpx.post, url + "/v1/completions", json=body(40), timeout=60)
        bad, good = bad.result(), good.result()
    assert bad.status_code == 500
    assert "poisoned request" in bad.json()["error"]["message"]
    assert good.status_code == 200 and good.json()["usage"]["completion_tokens"] == 40
    alone = httpx.post(url + "/v1/completions", json=body(40), timeout=60).json()
    assert good.json()["choices"][0]["text"] == alone["choices"][0]["text"]
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0, timeout=60)
    model = client.models.list().data[0].id
    with pytest.raises(openai.APIError, match="poisoned request"):
        for _ in client.completions.create(
            model=model, prompt="Hello", max_tokens=POISON, stream=True
        ):
            pass
    assert wait_idle(app)  # the failed requests were aborted, their blocks freed
    assert httpx.post(url + "/v1/completions", json=body(4), timeout=60).status_code == 200


def test_a_failed_generate_stream_is_cut_short_not_ended(live, poisoned):
    """/generate streams raw text, with no room for an error event: a failure drops the
    connection before the last chunk, so the client's read fails (it had ended cleanly, as if
    the text were whole)."""
    app, url = live
    body = {"prompt": "Hello", "max_new_tokens": POISON, "stream": True, "stop_on_eos": False}
    with pytest.raises(httpx.RemoteProtocolError):  # noqa: SIM117
        with httpx.stream("POST", url + "/generate", json=body, timeout=60) as s:
            for _ in s.iter_raw():
                pass
    assert wait_idle(app)
    good = {**body, "max_new_tokens": 4}
    assert httpx.post(url + "/generate", json=good, timeout=60).status_code == 200


def test_a_request_that_fails_in_output_processing_is_stopped_in_the_engine(live, monkeypatch):
    """Its output processing raises at the second token: the engine is told to stop it then,
    rather than running it on to its 200 tokens with nobody reading."""
    app, url = live
    engine = app.state.client.engine
    real_abort = type(engine).abort_request
    aborts: list[tuple[str, str]] = []

    def abort_request(self, request_id, reason="abort", index=None):
        aborts.append((request_id, reason))
        real_abort(self, request_id, reason, index)

    real_feed = ChoiceState.feed

    def feed(self, token_ids, finish_reason, logprobs=None):
        if self.max_tokens == 200 and len(self.token_ids) >= 2:
            raise ValueError("poisoned request")
        return real_feed(self, token_ids, finish_reason, logprobs)

    monkeypatch.setattr(type(engine), "abort_request", abort_request)
    monkeypatch.setattr(ChoiceState, "feed", feed)
    r = httpx.post(url + "/v1/completions", json=body(200), timeout=60)
    assert r.status_code == 500 and "poisoned request" in r.json()["error"]["message"]
    assert wait_idle(app)
    assert aborts and aborts[0][1] == "error"
    monkeypatch.undo()
    assert httpx.post(url + "/v1/completions", json=body(4), timeout=60).status_code == 200


def test_engine_step_failure_fails_the_batch_and_serving_goes_on(live, monkeypatch):
    app, url = live
    manager = app.state.client
    real_step = manager.engine.step
    failures = {"left": 1}

    def flaky_step():
        if failures["left"] and manager.engine.stats().num_running:
            failures["left"] -= 1
            raise RuntimeError("device on fire")
        return real_step()

    monkeypatch.setattr(manager.engine, "step", flaky_step)
    r = httpx.post(url + "/v1/completions", json=body(30), timeout=60)
    assert r.status_code == 500
    assert "engine step failed: RuntimeError: device on fire" in r.json()["error"]["message"]
    failures["left"] = 1
    with httpx.stream("POST", url + "/v1/completions", json=body(30, stream=True), timeout=60) as s:
        lines = [line for line in s.iter_lines() if line.startswith("data: ")]
    assert "device on fire" in lines[-2] and lines[-1] == "data: [DONE]"
    assert manager.is_alive() and wait_idle(app)
    r = httpx.post(url + "/v1/completions", json=body(5), timeout=60)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 5
    assert httpx.get(url + "/health").json() == {"status": "ok"}


def test_a_sampler_that_raises_for_one_request_fails_it_alone(live, monkeypatch):
    """The batched sampler raises for one row: that request gets a 500 naming the failure, the
    stream beside it finishes with the same text as alone, and the engine serves on."""
    app, url = live
    sampler = app.state.client.engine.runner.sampler
    real_call = type(sampler).__call__

    def call(self, logits, params, *rest):
        if any(p.seed == POISON for p in params):
            raise RuntimeError("poisoned sampling")
        return real_call(self, logits, params, *rest)

    alone = httpx.post(url + "/v1/completions", json=body(30), timeout=60).json()
    monkeypatch.setattr(type(sampler), "__call__", call)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        good = pool.submit(stream_text, url)
        time.sleep(0.2)  # the healthy stream is running when the bad request joins
        bad = pool.submit(
            httpx.post, url + "/v1/completions",
            json={**body(20), "temperature": 0.8, "seed": POISON}, timeout=60,
        )  # fmt: skip
        good_text, bad = good.result(), bad.result()
    assert bad.status_code == 500
    assert "sampling failed: RuntimeError: poisoned sampling" in bad.json()["error"]["message"]
    assert good_text == alone["choices"][0]["text"]
    assert wait_idle(app)
    assert httpx.post(url + "/v1/completions", json=body(4), timeout=60).status_code == 200


def test_a_client_gone_mid_stream_spares_the_stream_beside_it(live):
    app, url = live
    alone = httpx.post(url + "/v1/completions", json=body(30), timeout=60).json()

    def leave_after_first_chunk() -> None:
        with httpx.stream(
            "POST", url + "/v1/completions", json=body(60, stream=True), timeout=60
        ) as s:
            for _ in s.iter_lines():
                break

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        good = pool.submit(stream_text, url)
        gone = [pool.submit(leave_after_first_chunk) for _ in range(2)]
        for g in gone:
            g.result()
        assert good.result() == alone["choices"][0]["text"]
    assert wait_idle(app)


def stream_text(url: str) -> str:
    """The text of a streamed greedy completion of 30 tokens."""
    with httpx.stream("POST", url + "/v1/completions", json=body(30, stream=True), timeout=60) as s:
        lines = [line[6:] for line in s.iter_lines() if line.startswith("data: {")]
    return "".join(json.loads(line)["choices"][0]["text"] for line in lines)
