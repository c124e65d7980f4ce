"""`roseinfer run-batch`: OpenAI's batch file format run through the server's own app."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys

import httpx
import pytest
from fastapi import FastAPI, Request

from roseinfer.batch import run_batch

CHAT = {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8, "temperature": 0,
        "ignore_eos": True}  # fmt: skip
COMPLETION = {"prompt": "The quick brown fox", "max_tokens": 6, "temperature": 0,
              "ignore_eos": True}  # fmt: skip
EMBEDDING = {"input": ["The sea", "Hello"]}
RESPONSE = {"input": "Hello", "max_output_tokens": 6, "temperature": 0, "store": False}


def line(custom_id: str, url: str, body: dict, method: str = "POST") -> str:
    return json.dumps({"custom_id": custom_id, "method": method, "url": url, "body": body})


LINES = [
    line("chat", "/v1/chat/completions", CHAT),
    line("completion", "/v1/completions", COMPLETION),
    "",  # blank lines are skipped
    line("embedding", "/v1/embeddings", EMBEDDING),
    line("response", "/v1/responses", RESPONSE),
    line("unknown-field", "/v1/completions", {**COMPLETION, "frobnicate": 1}),
    line("other-model", "/v1/chat/completions", {**CHAT, "model": "gpt-4o"}),
    "{not json",
    json.dumps({"method": "POST", "url": "/v1/completions", "body": COMPLETION}),
    line("chat", "/v1/chat/completions", CHAT),  # a custom_id used before
    line("get", "/v1/chat/completions", CHAT, method="GET"),
    line("models", "/v1/models", {}),
    line("stream", "/v1/chat/completions", {**CHAT, "stream": True}),
    json.dumps(
        {
            "custom_id": "extra",
            "method": "POST",
            "url": "/v1/completions",
            "body": COMPLETION,
            "priority": 1,
        }
    ),  # fmt: skip
]


def run(app, lines: list[str | bytes], max_concurrency: int = 4) -> tuple[list[dict], dict]:
    out = io.StringIO()
    raw = [x if isinstance(x, bytes) else x.encode() + b"\n" for x in lines]
    counts = asyncio.run(run_batch(app, raw, out, max_concurrency))
    return [json.loads(x) for x in out.getvalue().splitlines()], dict(counts)


@pytest.mark.parametrize("max_concurrency", [1, 3, 64])
def test_each_line_answered_in_order_as_the_server_answers_it(tiny_server, max_concurrency):
    app, url = tiny_server
    outputs, counts = run(app, LINES, max_concurrency)
    assert [o["custom_id"] for o in outputs] == [
        "chat", "completion", "embedding", "response", "unknown-field", "other-model", None,
        None, "chat", "get", "models", "stream", "extra",
    ]  # fmt: skip
    assert counts == {"ok": 4, "refused": 2, "invalid": 7}
    by_id = {o["custom_id"]: o for o in outputs[:6]}
    direct = {
        "chat": httpx.post(url + "/v1/chat/completions", json=CHAT, timeout=60).json(),
        "completion": httpx.post(url + "/v1/completions", json=COMPLETION, timeout=60).json(),
        "embedding": httpx.post(url + "/v1/embeddings", json=EMBEDDING, timeout=60).json(),
        "response": httpx.post(url + "/v1/responses", json=RESPONSE, timeout=60).json(),
    }
    assert by_id["chat"]["response"]["body"]["choices"] == direct["chat"]["choices"]
    assert by_id["completion"]["response"]["body"]["choices"] == direct["completion"]["choices"]
    answer = by_id["response"]["response"]["body"]
    assert answer["output"][0]["content"] == direct["response"]["output"][0]["content"]
    got = by_id["embedding"]["response"]["body"]["data"]
    for a, b in zip(got, direct["embedding"]["data"], strict=True):
        assert a["embedding"] == pytest.approx(b["embedding"], abs=1e-5)
    for o in outputs[:4]:
        response = o["response"]
        assert response["status_code"] == 200 and o["error"] is None
        assert response["request_id"] == response["body"]["id"]
        assert o["id"].startswith("batch_req_")
    refused = by_id["unknown-field"]["response"]
    assert refused["status_code"] == 400 and refused["body"]["error"]["param"] == "frobnicate"
    assert by_id["other-model"]["response"]["status_code"] == 404
    codes = [o["error"]["code"] for o in outputs[6:]]
    assert codes == ["invalid_json", "missing_custom_id", "duplicate_custom_id", "invalid_method",
                     "invalid_url", "invalid_request", "invalid_request"]  # fmt: skip
    assert all(o["response"] is None for o in outputs[6:])
    assert "line 8" in outputs[6]["error"]["message"]  # counted with the blank line
    assert "stream" in outputs[11]["error"]["message"]
    assert "'priority'" in outputs[12]["error"]["message"]


def test_vllms_score_and_rerank_lines_run_and_a_background_response_is_refused(tiny_server):
    """A background response's answer is "queued", without its output: a line whose result
    would be lost is refused; vLLM's /score and /rerank run as the server answers them."""
    app, url = tiny_server
    score = {"text_1": "The sea", "text_2": ["is blue", "is loud"]}
    rerank = {"query": "The sea", "documents": ["is blue", "is loud"]}
    lines = [line("background", "/v1/responses", {**RESPONSE, "background": True}),
             line("score", "/v1/score", score), line("rerank", "/rerank", rerank)]  # fmt: skip
    outputs, counts = run(app, lines)
    assert counts == {"invalid": 1, "ok": 2}
    assert outputs[0]["response"] is None and "background" in outputs[0]["error"]["message"]
    for o, path, body in ((outputs[1], "/v1/score", score), (outputs[2], "/rerank", rerank)):
        direct = httpx.post(url + path, json=body, timeout=60).json()
        got = o["response"]["body"]
        key = "data" if path.endswith("score") else "results"
        assert [x.get("score", x.get("relevance_score")) for x in got[key]] == pytest.approx(
            [x.get("score", x.get("relevance_score")) for x in direct[key]], abs=1e-5)  # fmt: skip


def test_a_line_the_server_would_refuse_to_read_is_that_lines_error(tiny_server):
    """Read as the server reads a body: a key given twice, NaN, a lone surrogate, nesting too
    deep or bytes that are not UTF-8 make that line an error naming where; the rest run on."""
    app, _ = tiny_server
    chat = line("chat", "/v1/chat/completions", CHAT)
    lines = [
        "\ufeff" + chat,  # a byte-order mark before the first line is not part of it
        line("twice", "/v1/completions", COMPLETION).replace('"prompt"', '"prompt": "x", "prompt"'),
        line("nan", "/v1/completions", {**COMPLETION, "temperature": float("nan")}),
        line("surrogate", "/v1/completions", {**COMPLETION, "prompt": "\ud83d"}),
        '{"custom_id": "deep", "method": "POST", "url": "/v1/completions", "body": '
        + "[" * 100_000
        + "]" * 100_000
        + "}",
        b'{"custom_id": "latin1", "body": "caf\xe9"}\r\n',
        line("after", "/v1/completions", COMPLETION) + "\r",  # a CRLF line
    ]
    outputs, counts = run(app, lines)
    assert counts == {"ok": 2, "invalid": 5}
    assert outputs[0]["custom_id"] == "chat" and outputs[-1]["custom_id"] == "after"
    errors = [o["error"]["message"] for o in outputs[1:-1]]
    assert "body.prompt: the key is given more than once" in errors[0]
    assert "body.temperature: NaN" in errors[1]
    assert "body.prompt: a string holds a lone UTF-16 surrogate" in errors[2]
    assert "deeper" in errors[3] and "line 5" in errors[3]
    assert "not valid JSON" in errors[4] and "line 6" in errors[4]


def test_the_command_runs_a_file(tiny_model_dir, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(LINES[:5]) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    exe = os.path.join(os.path.dirname(sys.executable), "roseinfer")
    cmd = [exe, "run-batch", "-i", str(path), "-o", str(out), "--model",
           tiny_model_dir("llama"), "--dtype", "float32", "--max-concurrency", "2"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "4 lines: 4 answered, 0 refused (4xx), 0 failed (5xx), 0 not requests" in done.stderr
    outputs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [o["custom_id"] for o in outputs] == ["chat", "completion", "embedding", "response"]
    assert all(o["response"]["status_code"] == 200 for o in outputs)
    # standard input and output
    done = subprocess.run([*cmd[:2], "-i", "-", "-o", "-", *cmd[6:]], input=LINES[0],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (only,) = [json.loads(x) for x in done.stdout.splitlines()]
    assert only["custom_id"] == "chat" and only["response"]["body"]["choices"][0]["message"]
    missing = subprocess.run([*cmd[:2], "-i", str(tmp_path / "nope"), "-o", str(out), *cmd[6:]],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert missing.returncode == 1 and "nope" in missing.stderr
    # the input as the output would be emptied before it is read: refused, before any load
    same = subprocess.run([*cmd[:2], "-i", str(path), "-o", str(path), *cmd[6:]],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert same.returncode == 1 and "the output file is the input file" in same.stderr
    assert path.read_text(encoding="utf-8").count("custom_id") == 4
    unwritable = subprocess.run([*cmd[:4], "-o", str(tmp_path / "no" / "dir.jsonl"), *cmd[6:]],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stderr
    assert "Loading" not in unwritable.stderr  # (refused before the model loads)


def test_a_slow_request_holds_back_only_the_writing_of_the_lines_after_it():
    """The first line's request finishes only once the ten after it have: with requests started
    in order only as the oldest finishes, this batch would never end."""
    app = FastAPI()
    finished: list[str] = []
    ten_done = asyncio.Event()

    @app.post("/v1/completions")
    async def completions(request: Request) -> dict:
        body = await request.json()
        if body["prompt"] == "slow":
            await ten_done.wait()
        finished.append(body["prompt"])
        if len(finished) == 10:
            ten_done.set()
        return {"id": body["prompt"], "choices": []}

    lines = [line("slow", "/v1/completions", {"prompt": "slow"})] + [
        line(f"q{i}", "/v1/completions", {"prompt": f"q{i}"}) for i in range(10)
    ]
    out = io.StringIO()
    raw = [x.encode() + b"\n" for x in lines]
    counts = asyncio.run(asyncio.wait_for(run_batch(app, raw, out, 2), timeout=20))
    assert counts == {"ok": 11} and finished[-1] == "slow"
    written = [json.loads(x)["custom_id"] for x in out.getvalue().splitlines()]
    assert written == ["slow"] + [f"q{i}" for i in range(10)]  # still in the input's order


def test_the_commands_flags_and_standard_input_as_it_comes(tiny_model_dir, tmp_path):
    """--served-model-name and --max-request-bytes act as serve's; --max-concurrency 0 and a
    folder as the output are refused before any load; from standard input a line's result is
    written while the next line has not come yet."""
    import select

    exe = os.path.join(os.path.dirname(sys.executable), "roseinfer")
    model = ["--model", tiny_model_dir("llama"), "--dtype", "float32"]
    path = tmp_path / "in.jsonl"
    big = {**COMPLETION, "prompt": "x " * 2000}
    path.write_text("\n".join([line("named", "/v1/completions", {**COMPLETION, "model": "mine"}),
                               line("big", "/v1/completions", big)]) + "\n")  # fmt: skip
    out = tmp_path / "out.jsonl"
    done = subprocess.run([exe, "run-batch", "-i", str(path), "-o", str(out), *model,
                           "--served-model-name", "mine", "--max-request-bytes", "2000"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    named, big_one = [json.loads(x) for x in out.read_text().splitlines()]
    assert named["response"]["status_code"] == 200
    assert named["response"]["body"]["model"] == "mine"
    assert big_one["response"]["status_code"] == 413
    for flags, words in ((["-o", str(out), "--max-concurrency", "0"], "--max-concurrency"),
                         (["-o", str(tmp_path)], "is a folder")):  # fmt: skip
        refused = subprocess.run([exe, "run-batch", "-i", str(path), *flags, *model],
                                 capture_output=True, text=True, timeout=60)  # fmt: skip
        assert refused.returncode == 1 and words in refused.stderr, refused.stderr
        assert "Loading" not in refused.stderr
    stream = subprocess.Popen([exe, "run-batch", "-i", "-", "-o", "-", *model],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert stream.stdin is not None and stream.stdout is not None
        stream.stdin.write(line("first", "/v1/completions", COMPLETION) + "\n")
        stream.stdin.flush()
        ready, _, _ = select.select([stream.stdout], [], [], 120)  # stdin still open
        assert ready, "the first line's result waited for the input to end"
        assert json.loads(stream.stdout.readline())["custom_id"] == "first"
        stream.stdin.write(line("second", "/v1/completions", COMPLETION) + "\n")
        stream.stdin.close()
        assert json.loads(stream.stdout.readline())["custom_id"] == "second"
        assert stream.wait(60) == 0
    finally:
        stream.kill()
