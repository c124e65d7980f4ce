"""One request path: the same request gives the same text, finish reason and usage through
`LLM`, the server (a real subprocess, the `openai` client), the seeds' `OnlineScheduler`,
`OfflineScheduler` and `SchedulerManager`, and the CLI; and the plain-Python core imports
without torch."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from dataclasses import replace

import httpx
import pytest
import torch
from openai import OpenAI

from roseinfer import (
    LLM,
    InferenceEngine,
    OfflineScheduler,
    OnlineScheduler,
    SamplingParams,
    StructuredOutputs,  # the README's import
)
from roseinfer.cli import main as cli_main
from roseinfer.engine import EngineClient, LLMEngine
from roseinfer.server.manager import SchedulerManager

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = "The quick brown fox"
MAX_TOKENS = 12


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir) -> str:
    return tiny_model_dir("llama")


@pytest.fixture(scope="module")
def llm(model_dir) -> LLM:
    return LLM(model=model_dir, dtype="float32", num_kv_blocks=128)


@pytest.fixture(scope="module")
def expected(llm):
    """What `LLM` gives: greedy to max_tokens, and the same cut by a stop string that its own
    output contains (so the stop case is exercised whatever the random weights say)."""
    plain = llm.generate(
        PROMPT,
        SamplingParams(max_tokens=MAX_TOKENS, temperature=0, ignore_eos=True),
        use_tqdm=False,
    )[0]
    assert plain.finish_reason == "length" and len(plain.token_ids) == MAX_TOKENS
    text = plain.text
    stop = next(text[i : i + 2] for i in range(2, len(text) - 2) if text[i : i + 2].strip())
    stopped = llm.generate(
        PROMPT,
        SamplingParams(max_tokens=MAX_TOKENS, temperature=0, ignore_eos=True, stop=[stop]),
        use_tqdm=False,
    )[0]
    assert stopped.finish_reason == "stop" and stopped.text == text[: text.index(stop)]
    return plain, stop, stopped


@pytest.fixture(scope="module")
def server_url(model_dir, tmp_path_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path_factory.mktemp("front") / "server.log", "w")
    cmd = [sys.executable, "-m", "roseinfer.server", "--model", model_dir, "--dtype", "float32",
           "--host", "127.0.0.1", "--port", str(port), "--num-kv-blocks", "128"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, open(log.name).read()[-3000:]
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_server_gives_what_llm_gives(expected, server_url):
    plain, stop, stopped = expected
    client = OpenAI(base_url=server_url + "/v1", api_key="x", max_retries=0, timeout=60)
    model = client.models.list().data[0].id
    for want, extra in ((plain, {}), (stopped, {"stop": [stop]})):
        kwargs = dict(model=model, prompt=PROMPT, max_tokens=MAX_TOKENS, temperature=0,
                      extra_body={"ignore_eos": True}, **extra)  # fmt: skip
        r = client.completions.create(**kwargs)
        assert r.choices[0].text == want.text
        assert r.choices[0].finish_reason == want.finish_reason
        assert r.usage.completion_tokens == len(want.token_ids)
        streamed = list(client.completions.create(stream=True, **kwargs))
        assert "".join(c.choices[0].text for c in streamed if c.choices) == want.text
        assert [c.choices[0].finish_reason for c in streamed if c.choices][-1] == want.finish_reason


def test_seeds_schedulers_give_what_llm_gives(llm, expected):
    plain, stop, stopped = expected
    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    decode = llm.tokenizer.decode
    online = OnlineScheduler(engine)
    for want, params in (
        (plain, SamplingParams(max_tokens=MAX_TOKENS, temperature=0, ignore_eos=True)),
        (
            stopped,
            SamplingParams(max_tokens=MAX_TOKENS, temperature=0, ignore_eos=True, stop=[stop]),
        ),
    ):
        rid = online.add_request(PROMPT, params=params)
        while online.has_unfinished():
            online.step()
        assert online.get_generated_ids(rid) == want.token_ids
        assert online.get_sequence(rid).finish_reason == want.finish_reason
        # the prompt and LLM's text: cut at the stop string (it had run on past it)
        assert online.pop_response(rid) == decode(want.prompt_token_ids) + want.text
    offline = OfflineScheduler(engine)
    rid = offline.add_request(PROMPT, MAX_TOKENS, stop_on_eos=False)
    assert offline.run()[rid] == decode(plain.prompt_token_ids + plain.token_ids)
    assert engine.generate(PROMPT, MAX_TOKENS, stop_on_eos=False) == plain.text
    assert engine.generate_batch([PROMPT], MAX_TOKENS, stop_on_eos=False) == [plain.text]
    manager = SchedulerManager(engine)
    try:
        rid = manager.add_request(PROMPT, MAX_TOKENS, stop_on_eos=False)
        assert "".join(manager.stream_text(rid, timeout=60)) == plain.text
    finally:
        manager.shutdown()


def test_cli_gives_what_llm_gives(model_dir, expected, capsys):
    plain, _, _ = expected
    args = ["generate", "--prompt", PROMPT, "--max-new-tokens", str(MAX_TOKENS), "--ignore-eos",
            "--model", model_dir, "--dtype", "float32", "--num-kv-blocks", "128"]  # fmt: skip
    assert cli_main(args) == 0
    assert capsys.readouterr().out == plain.text + "\n"


def test_scheduler_and_block_manager_import_without_torch():
    code = (
        "import sys; sys.modules['torch'] = None\n"  # any `import torch` now raises
        "import roseinfer.engine.scheduler, roseinfer.engine.block_manager, roseinfer.outputs\n"
        "assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_engine_client_generate_gives_what_llm_gives(llm, expected):
    """The async front door (vLLM's `AsyncLLM.generate` habit): RequestOutputs as text arrives,
    the last one equal to what `LLM` gives; two requests at once on one engine thread."""
    plain, stop, stopped = expected
    client = EngineClient(LLMEngine(llm.loaded, llm.config))
    params = SamplingParams(max_tokens=MAX_TOKENS, temperature=0, ignore_eos=True)

    async def run(rid: str, p: SamplingParams) -> list:
        return [out async for out in client.generate(rid, plain.prompt_token_ids, p)]

    async def both() -> tuple[list, list]:
        return await asyncio.wait_for(
            asyncio.gather(run("a", params), run("b", replace(params, stop=(stop,)))), 60
        )

    try:
        a, b = asyncio.run(both())
    finally:
        client.shutdown()
    for outs, want in ((a, plain), (b, stopped)):
        assert outs[-1].finished and not any(o.finished for o in outs[:-1])
        assert outs[-1].text == want.text and outs[-1].finish_reason == want.finish_reason
        assert outs[-1].token_ids == want.token_ids
        assert len(outs) > 1  # streamed, not one final output


def test_engine_client_reports_a_prompts_progress_a_chunk_at_a_time(tiny_model_dir):
    """`report_progress`: after each step that computed part of a prompt (16-token chunks
    here), an event says how far, the last one (the whole prompt) before the first token; a
    prefix-cache hit counts as computed from the start; without it, no such event."""
    from roseinfer.config import EngineConfig
    from roseinfer.loader import load_model

    config = EngineConfig(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64,
                          max_num_batched_tokens=16, lone_prefill_tokens=0)  # fmt: skip
    client = EngineClient(LLMEngine(load_model(config), config))
    ids = list(range(5, 45))  # 40 tokens
    params = SamplingParams(max_tokens=2, temperature=0, ignore_eos=True)

    async def run(rid: str, report: bool) -> list:
        out: asyncio.Queue = asyncio.Queue()
        client.submit(rid, ids, params, out, report_progress=report)
        events = []
        while not (events and events[-1].finished):
            events.append((await asyncio.wait_for(out.get(), 60))[1])
        return events

    try:
        first = asyncio.run(run("a", True))
        again = asyncio.run(run("b", True))  # its first blocks from the prefix cache
        plain = asyncio.run(run("c", False))
    finally:
        client.shutdown()
    progress = [e.prompt_progress for e in first if e.prompt_progress is not None]
    assert [(p.total, p.cached, p.computed) for p in progress] == [(40, 0, 16), (40, 0, 32),
                                                                   (40, 0, 40)]  # fmt: skip
    assert [p.time_ms for p in progress] == sorted(p.time_ms for p in progress)
    assert first[len(progress)].token_ids and all(not e.token_ids for e in first[:3])
    (hit,) = [e.prompt_progress for e in again if e.prompt_progress is not None]
    assert hit.cached > 0 and hit.computed == hit.total == 40
    assert all(e.prompt_progress is None for e in plain)
    tokens = [[t for e in events for t in e.token_ids] for events in (first, again, plain)]
    assert tokens[0] == tokens[1] == tokens[2]


def test_seeds_wrappers_refuse_arguments_they_would_drop(llm):
    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    ids = llm.encode(PROMPT)
    params = SamplingParams(max_tokens=6, temperature=0)
    for sched in (OnlineScheduler(engine), OfflineScheduler(engine)):
        with pytest.raises(ValueError, match="params or the seeds' sampling arguments.*max_new"):
            sched.add_request(prompt_token_ids=ids, params=params, max_new_tokens=2)
        with pytest.raises(ValueError, match="positional sampling arguments, do_sample"):
            sched.add_request(PROMPT, 2, params=params, do_sample=True)
        with pytest.raises(ValueError, match="prompt or prompt_token_ids, not both"):
            sched.add_request("another prompt", prompt_token_ids=ids, max_new_tokens=2)
        assert not sched.core.has_unfinished()
    # the seeds' engine-setting names beside the new ones
    for build in (
        lambda: OnlineScheduler(engine, max_batch_size=2, max_num_seqs=8),
        lambda: OfflineScheduler(engine, max_batch_size=2, max_num_seqs=8),
        lambda: SchedulerManager(engine, replace(llm.config, max_num_seqs=8), max_batch_size=2),
    ):
        with pytest.raises(ValueError, match="max_batch_size .* or max_num_seqs, not both"):
            build()
    with pytest.raises(ValueError, match="use_prefix_cache .* or enable_prefix_cache, not b"):
        OnlineScheduler(engine, use_prefix_cache=False, enable_prefix_cache=True)
    # each alone still acts
    assert OnlineScheduler(engine, max_batch_size=2).core.config.max_num_seqs == 2
    assert not OnlineScheduler(engine, use_prefix_cache=False).core.config.enable_prefix_cache
    manager = SchedulerManager(engine, max_batch_size=3, start_thread=False)
    assert manager.core.config.max_num_seqs == 3
    manager.shutdown(0)


def test_decode_step_stops_at_the_context_window(llm):
    engine = InferenceEngine(replace(llm.config, max_model_len=16), loaded=llm.loaded)
    session = engine.new_session(SamplingParams(temperature=0, max_tokens=4))
    session.prefill(list(range(5, 12)))  # 7 tokens
    for _ in range(16 - 7):
        session.decode_step(7)
    with pytest.raises(ValueError, match="16 tokens.*max_model_len 16"):
        session.decode_step(7)
    assert len(session._seq.token_ids) == 16


def test_stream_refuses_more_than_one_choice(llm):
    ids = llm.encode(PROMPT)
    with pytest.raises(ValueError, match="n must be 1, got 2"):
        llm.stream(ids, SamplingParams(n=2, max_tokens=4))
    assert not llm.engine.has_unfinished()
    assert "".join(llm.stream(ids, SamplingParams(max_tokens=4, temperature=0)))


def test_the_python_front_doors_refuse_values_they_would_misread(llm):
    """Each of these ran before, reading the value as something else or dropping it: bytes as
    token ids, a string as one prompt per character, a batch of two as one prompt, 3.7 as
    token 3, logprobs that `stream` cannot return, an unknown finish reason, a wrong observer."""
    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    with pytest.raises(TypeError, match="not bytes"):
        llm.generate(b"hi")
    with pytest.raises(TypeError, match="not a string"):
        engine.generate_batch("hi", max_new_tokens=3)
    with pytest.raises(ValueError, match="choice must be a list of strings, not a string"):
        StructuredOutputs(choice="yes")
    # on/off arguments: "no" is truthy, so a non-boolean is refused, not read as True
    for call, name in [
        (lambda: llm.generate(PROMPT, use_tqdm="no"), "use_tqdm"),
        (lambda: llm.chat([{"role": "user", "content": "hi"}], add_generation_prompt="no"),
         "add_generation_prompt"),
        (lambda: engine.generate(PROMPT, max_new_tokens=2, chat="no"), "chat"),
        (lambda: engine.generate(PROMPT, max_new_tokens=2, do_sample="no"), "do_sample"),
        (lambda: StructuredOutputs(json_object="no"), "json_object"),
    ]:  # fmt: skip
        with pytest.raises(ValueError, match=f"{name} must be a boolean, got 'no'"):
            call()
    with pytest.raises(TypeError, match="sampling_params must be a SamplingParams"):
        llm.generate(PROMPT, {"max_tokens": 2})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chat_template_kwargs must be an object"):
        llm.chat([{"role": "user", "content": "hi"}], chat_template_kwargs=[1])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="foo"):  # as chat refuses it
        llm.encode_chat([{"role": "user", "content": "hi", "foo": 1}])
    plain = [{"role": "user", "content": "hi"}]
    assert engine.encode_chat(plain) == llm.encode_chat(plain) == llm.tokenizer.encode_chat(plain)
    ids = llm.encode(PROMPT)
    for name in ("logprobs", "prompt_logprobs"):
        with pytest.raises(ValueError, match=f"{name} would be lost"):
            llm.stream(ids, SamplingParams(max_tokens=4, **{name: 2}))
    with pytest.raises(ValueError, match="max_new_tokens=5 and max_tokens=10 differ"):
        SamplingParams(max_tokens=10, max_new_tokens=5)
    assert SamplingParams(max_tokens=5, max_new_tokens=5).max_tokens == 5
    # dataclasses.replace copies the alias as the old value: the message says how to copy
    with pytest.raises(ValueError, match="pass max_new_tokens=None with a new max_tokens"):
        replace(SamplingParams(max_tokens=10), max_tokens=5)
    copy = replace(SamplingParams(max_tokens=10), max_tokens=5, max_new_tokens=None)
    assert copy.max_tokens == copy.max_new_tokens == 5  # type: ignore[attr-defined]
    session = engine.new_session(SamplingParams(temperature=0, max_tokens=4))
    with pytest.raises(ValueError, match=r"one prompt, \[T\] or \[1, T\], got \[2, 3\]"):
        session.prefill(torch.tensor([[5, 6, 7], [8, 9, 10]]))
    assert session.prefill(torch.tensor([[5, 6, 7]])).shape[0] == 1
    for bad in (3.7, "5", True, -1, 10**9):
        with pytest.raises(ValueError, match="token_id must be an integer"):
            session.decode_step(bad)
    assert len(session._seq.token_ids) == 3  # nothing appended by a refused step
    session.decode_step(torch.tensor(7))
    online = OnlineScheduler(engine)
    rid = online.add_request(prompt_token_ids=ids, max_new_tokens=4)
    with pytest.raises(ValueError, match="reason must be one of"):
        online.abort_request(rid, reason="bogus")
    online.abort_request(rid)
    with pytest.raises(TypeError, match="lacks EngineObserver's on_request_added"):
        SchedulerManager(engine, metrics="x", start_thread=False)  # type: ignore[arg-type]
    manager = SchedulerManager(engine, start_thread=False)
    with pytest.raises(KeyError, match="no request 999"):
        next(manager.stream_text(999))
    manager.shutdown(0)
