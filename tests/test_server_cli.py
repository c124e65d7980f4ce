"""`roseinfer serve` / `python -m roseinfer.server`: flags, and start-up errors (one line on
stderr, a non-zero exit, no traceback; what needs no model fails before the model loads). Only
one test loads a model (the tiny random llama)."""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

from roseinfer.config import EngineConfig
from roseinfer.server.cli import build_parser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_defaults_bind_localhost_and_map_onto_engine_config(monkeypatch):
    monkeypatch.delenv("ROSEINFER_API_KEY", raising=False)
    args = build_parser().parse_args([])
    assert (args.host, args.port, args.api_key, args.max_waiting_requests) == (
        "127.0.0.1",
        8000,
        None,
        None,
    )
    assert EngineConfig.from_args(args) == EngineConfig()


def test_seeds_and_engine_flags():
    args = build_parser().parse_args([
        "--checkpoint-path", "ckpt.pt", "--tokenizer-name", "gpt2", "--device", "cpu", "--port", "8080",
        "--max-num-seqs", "4", "--max-num-batched-tokens", "256", "--kv-cache-memory", "0.5", "--block-size", "32",
        "--no-prefix-cache", "--dtype", "bfloat16", "--served-model-name", "rose", "--api-key", "k",
        "--max-waiting-requests", "10", "--max-request-bytes", "1000", "--stream-interval", "8",
    ])  # fmt: skip
    cfg = EngineConfig.from_args(args)
    assert (cfg.checkpoint_path, cfg.tokenizer_name, cfg.device, cfg.dtype) == (
        "ckpt.pt",
        "gpt2",
        "cpu",
        "bfloat16",
    )
    assert (cfg.max_num_seqs, cfg.max_num_batched_tokens, cfg.kv_cache_memory, cfg.block_size) == (
        4,
        256,
        0.5,
        32,
    )
    assert cfg.enable_prefix_cache is False
    assert (args.port, args.served_model_name, args.api_key, args.max_waiting_requests) == (
        8080,
        ["rose"],
        "k",
        10,
    )
    assert (args.stream_interval, build_parser().parse_args([]).stream_interval) == (8, 1)
    assert build_parser().parse_args(["--hf-model-id", "org/name"]).hf_model_id == "org/name"
    assert EngineConfig.from_args(build_parser().parse_args([])).kv_cache_dtype == "auto"
    int8 = EngineConfig.from_args(build_parser().parse_args(["--kv-cache-dtype", "int8"]))
    assert int8.kv_cache_dtype == "int8"
    with pytest.raises(SystemExit):  # argparse refuses other values with a usage line
        build_parser().parse_args(["--kv-cache-dtype", "fp8"])


def test_roseinfer_serve_help(capsys):
    from roseinfer.cli import main

    with pytest.raises(SystemExit) as e:
        main(["serve", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: roseinfer serve")
    for flag in (
        "--model",
        "--host",
        "--port",
        "--dtype",
        "--api-key",
        "--max-waiting-requests",
        "--max-num-seqs",
        "--stream-interval",
    ):
        assert flag in out


@pytest.mark.parametrize("command", ["serve", "bench"])
def test_the_log_level_before_serve_or_bench_is_theirs(monkeypatch, capsys, command):
    """`roseinfer --log-level debug serve ...`, as `roseinfer --help` shows the flag: it had
    ended in a traceback (argparse matched the stub of the command, which has no function)."""
    import roseinfer.bench.cli
    import roseinfer.server.cli
    from roseinfer.cli import main

    with pytest.raises(SystemExit) as e:
        main(["--log-level", "debug", command, "--help"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith(f"usage: roseinfer {command}")
    seen: list[list[str]] = []
    monkeypatch.setattr(roseinfer.server.cli, "serve_main", lambda argv, prog: seen.append(argv))
    monkeypatch.setattr(roseinfer.bench.cli, "bench_main", lambda argv: seen.append(argv))
    main(["--log-level=info", "--log-level", "debug", command, "--port", "1"])
    assert seen == [["--log-level=info", "--log-level", "debug", "--port", "1"]]


@pytest.mark.parametrize(
    "argv",
    [
        ["roseinfer.cli", "--log-level", "bogus", "generate", "--prompt", "hi"],
        ["roseinfer.cli", "bench", "--log-level", "bogus", "throughput"],
        ["roseinfer.server", "--log-level", "bogus"],
        ["roseinfer.cli", "--log-level", "bogus", "serve"],
        ["roseinfer.cli", "--log-level=bogus", "bench", "throughput"],
    ],
)
def test_an_unknown_log_level_is_a_usage_error_on_every_command(argv):
    """One line, as every start-up failure (argparse's own would print the usage block first)."""
    r = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "argument --log-level: invalid choice: 'bogus'" in r.stderr
    assert len(r.stderr.splitlines()) == 1 and r.stderr.endswith(" (see --help)\n"), r.stderr


def test_only_the_server_offers_the_models_request_defaults():
    """generate, chat and the benchmarks build every sampling field: --generation-config would
    change nothing there, so they do not take it."""
    from roseinfer.cli import build_parser as cli_parser

    assert build_parser().parse_args(["--generation-config", "none"]).generation_config == "none"
    with pytest.raises(SystemExit):
        cli_parser().parse_args(["generate", "--prompt", "x", "--generation-config", "none"])


def test_engine_flags_show_their_defaults():
    text = build_parser().format_help()
    for flag, default in (("--max-num-seqs", "64"), ("--max-num-batched-tokens", "512"),
                          ("--block-size", "16"), ("--kv-cache-memory", "1.0"),
                          ("--device", "cpu"), ("--port", "8000")):  # fmt: skip
        help_text = " ".join(text.split(f"\n  {flag} ", 1)[1].split("\n  -", 1)[0].split())
        assert f"(default {default})" in help_text, (flag, help_text)


def test_log_levels_are_taken_in_any_case():
    from roseinfer.bench.cli import build_parser as bench_parser
    from roseinfer.cli import build_parser as cli_parser

    assert cli_parser().parse_args(["--log-level", "DEBUG", "chat"]).log_level == "debug"
    assert cli_parser().parse_args(["chat"]).log_level == "warning"
    assert bench_parser().parse_args(["--log-level", "Info", "throughput"]).log_level == "info"
    assert build_parser().parse_args(["--log-level", "WARNING"]).log_level == "warning"


def test_generate_and_chat_help_show_the_sampling_defaults(capsys):
    from roseinfer.cli import main

    for command in ("generate", "chat"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
        assert "--max-new-tokens MAX_NEW_TOKENS most tokens to generate (default 128)" in out
        assert "(default 1.0: off)" in out and "(default 0: all)" in out


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--model", "/nonexistent/model"], 1, "/nonexistent/model"),  # while loading
        (["--stream-interval", "0"], 2, "--stream-interval must be >= 1"),  # before loading
    ],
)
def test_bad_flags_are_a_one_line_error(args, code, message):
    r = subprocess.run(
        [sys.executable, "-m", "roseinfer.server", *args, "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == code
    assert "error" in r.stderr and message in r.stderr and "Traceback" not in r.stderr


def test_generate_refuses_a_chat_template_without_chat():
    """`--chat-template` had been accepted and ignored on a plain prompt; refused before the
    model loads."""
    r = subprocess.run(
        [sys.executable, "-m", "roseinfer.cli", "generate", "--prompt", "hi", "--chat-template",
         "{{ messages[0].content }}", "--model", "/nonexistent/model"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "--chat-template renders chat messages: add --chat" in r.stderr


def serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "roseinfer.server", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def one_error_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], r.stderr
    return lines[0]


def test_a_taken_port_fails_before_the_model_loads():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # A model that does not exist: had it been loaded first, the error would name it.
        r = serve("--model", "/nonexistent/model", "--port", str(port))
    line = one_error_line(r)
    assert f"127.0.0.1:{port}" in line and "in use" in line and r.returncode == 1


def test_engine_flags_are_checked_before_the_address_and_the_model():
    """README: the flags first, then the address, then the model: a bad engine flag value is
    the error even with a taken port and a model that does not exist."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = serve("--model", "/nonexistent/model", "--port", str(port), "--max-num-seqs", "0")
    assert (
        one_error_line(r) == "roseinfer serve: error: max_num_seqs must be an integer >= 1, got 0"
    )
    assert r.returncode == 2


def test_an_invalid_port_fails_before_the_model_loads():
    line = one_error_line(serve("--model", "/nonexistent/model", "--port", "99999"))
    assert "--port" in line and "99999" in line


def test_cuda_on_a_machine_without_it_is_one_line():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    line = one_error_line(serve("--model", "/nonexistent/model", "--port", "0", "--device", "cuda"))
    assert "CUDA is not available" in line


def test_cuda_on_a_machine_without_it_is_refused_before_any_model_is_read():
    """LLM and the generate/chat commands load through the same loader: a ValueError naming the
    device, before the weights are read (it was an AssertionError deep in the loading)."""
    import torch

    from roseinfer import LLM

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match="device cuda: CUDA is not available"):
        LLM(model="/nonexistent/model", device="cuda")


def serve_tiny(tiny_model_dir, **popen) -> tuple[subprocess.Popen, int | None]:
    """The tiny model served in a process of its own on a free port: (the process, the port
    its "serving on" line names, None if none came within 180 s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "roseinfer.server", "--model", tiny_model_dir("llama"),
         "--port", "0", "--dtype", "float32", "--num-kv-blocks", "64"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **popen,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
    deadline, port = time.monotonic() + 180, None
    while port is None and time.monotonic() < deadline and proc.poll() is None:
        try:
            found = re.search(r"serving on http://127\.0\.0\.1:(\d+)", lines.get(timeout=1))
            port = int(found.group(1)) if found else None
        except queue.Empty:
            continue
    return proc, port


def test_serving_on_is_logged_once_the_server_listens(tiny_model_dir):
    proc, port = serve_tiny(tiny_model_dir)
    try:
        assert port, "no 'serving on' line"
        # The line comes once uvicorn listens: the first try connects.
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_client_leaving_mid_body_is_not_an_error(tiny_server, caplog):
    caplog.set_level(logging.DEBUG, logger="roseinfer.server.errors")
    port = int(tiny_server[1].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nContent-Length: 1000\r\n\r\n{\"prompt\": ")  # fmt: skip
        time.sleep(0.2)  # the server is reading the body
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "client disconnected" not in caplog.text:
        time.sleep(0.05)
    assert "client disconnected while sending POST /v1/completions" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    assert httpx.get(tiny_server[1] + "/health", timeout=10).status_code == 200


def test_the_http_thread_runs_uvloop_and_h11():
    """uvloop, a dependency off Windows, wakes the HTTP thread's loop without letting go of the
    GIL (roseinfer/server/cli.py); h11 stays the parser even where httptools is installed. A
    server made by `uvicorn_config` answers on a uvloop loop, and leaves this thread's asyncio
    (the engine's) as it was."""
    import asyncio

    import uvicorn
    from fastapi import FastAPI

    from roseinfer.server.cli import uvicorn_config

    app = FastAPI()

    @app.get("/loop")
    async def loop_kind() -> dict:
        return {"module": type(asyncio.get_running_loop()).__module__}

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from uvicorn.protocols.http.h11_impl import H11Protocol

    config = uvicorn_config(app, "127.0.0.1", port, "warning")
    assert issubclass(config.http, H11Protocol)  # type: ignore[arg-type]  # (with deadlines)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        module = httpx.get(f"http://127.0.0.1:{port}/loop", timeout=10).json()["module"]
        assert module.startswith("asyncio" if sys.platform == "win32" else "uvloop"), module
        here = asyncio.new_event_loop()
        assert type(here).__module__.startswith("asyncio")
        here.close()
    finally:
        server.should_exit = True
        thread.join(15)


def test_a_request_without_host_is_refused(tiny_server):
    """HTTP/1.1 requires Host; h11 answers 400 (httptools, which uvicorn would otherwise pick
    where it is installed, serves the request). The server (conftest) runs `uvicorn_config`."""
    port = int(tiny_server[1].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"GET /health HTTP/1.1\r\n\r\n")
        assert c.recv(100).startswith(b"HTTP/1.1 400 ")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(b"GET /health HTTP/1.0\r\n\r\n")  # HTTP/1.0 has no Host to require
        assert c.recv(100).startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize(
    ("parser", "argv"),
    [
        ("roseinfer.cli", ["generate", "--prompt", "x", "--max-new", "5"]),  # --max-new-tokens
        ("roseinfer.cli", ["chat", "--chat-t", "x"]),  # --chat-template
        ("roseinfer.server.cli", ["--max-num", "4"]),  # --max-num-seqs
        ("roseinfer.bench.cli", ["throughput", "--num-s", "4"]),  # --num-seqs
        ("roseinfer.bench.scheduler", ["--max-batch", "4"]),  # --max-batch-size
    ],
)
def test_a_shortened_flag_is_refused_not_guessed(parser, argv, capsys):
    """argparse would take `--max-num` for `--max-num-seqs` (and online_example's old
    `--chat` for `--chat-template`, swallowing the next argument): every parser refuses
    prefixes, so a flag means exactly what it spells."""
    import importlib

    module = importlib.import_module(parser)
    with pytest.raises(SystemExit) as exit_:
        module.build_parser().parse_args(argv)
    assert exit_.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_ends_the_running_streams_with_an_error_event(tiny_model_dir, sig):
    """Ctrl-C (SIGINT) ends the requests in flight as SIGTERM does: each stream gets an error
    event and `[DONE]` at once. It had left them hanging until uvicorn cut them 5 s later, with
    no event (a KeyboardInterrupt out of the engine loop skipped failing them)."""
    # as at a terminal: a background job (CI's `cmd &`) inherits SIGINT ignored
    proc, port = serve_tiny(
        tiny_model_dir, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
    )
    try:
        assert port, "no 'serving on' line"
        body = {"prompt": "once", "max_tokens": 200, "ignore_eos": True, "stream": True}
        events: list[str] = []
        with httpx.stream("POST", f"http://127.0.0.1:{port}/v1/completions", json=body,
                          timeout=30) as r:  # fmt: skip
            for line in r.iter_lines():
                if line.startswith("data: "):
                    events.append(line[6:])
                if len(events) == 3:
                    proc.send_signal(sig)
                    signalled = time.monotonic()
        assert time.monotonic() - signalled < 3, "the stream was not ended at once"
        assert events[-1] == "[DONE]", events[-3:]
        error = json.loads(events[-2])["error"]
        assert "shutting down" in error["message"], error
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
