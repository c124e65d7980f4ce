"""The benchmark tools run and report well-formed results on a tiny model. No speed is asserted."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from roseinfer.bench.cli import bench_main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Small engine: eager (no compile) and a small KV cache, so each engine starts fast.
ENGINE = ["--enforce-eager", "--num-kv-blocks", "128"]


@pytest.fixture(scope="module")
def tiny(tiny_model_dir) -> str:
    return tiny_model_dir("llama")


def is_png(path) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == PNG_MAGIC


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- statistics and workloads -------------------------------------------------------------------
def test_percentile_and_describe():
    from roseinfer.bench.metrics import describe, percentile

    assert percentile([], 50) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile(list(range(101)), 99) == pytest.approx(99.0)
    d = describe([0.001, 0.002, 0.003], "ttft")
    assert set(d) == {"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p90_ttft_ms", "p99_ttft_ms"}
    assert d["median_ttft_ms"] == pytest.approx(2.0)


def test_random_workload_is_seeded_and_in_range():
    from roseinfer.bench.workload import length_range, random_requests, token_pool

    pool = token_pool(384, special_ids=[0, 1, 2])
    assert 0 not in pool and 383 in pool
    a = random_requests(10, (5, 9), (3, 4), pool, seed=0)
    b = random_requests(10, (5, 9), (3, 4), pool, seed=0)
    c = random_requests(10, (5, 9), (3, 4), pool, seed=1)
    assert a == b and a != c
    for r in a:
        assert 5 <= len(r.prompt_token_ids) <= 9 and 3 <= r.output_len <= 4
        assert all(t in pool for t in r.prompt_token_ids)
    assert length_range(100, 0.0) == (100, 100)
    assert length_range(100, 0.5) == (50, 150)
    with pytest.raises(ValueError):
        length_range(10, 1.5)


def test_poisson_arrival_gaps():
    from roseinfer.bench.serve_client import arrival_gaps

    assert arrival_gaps(3, float("inf"), 0) == [0.0, 0.0, 0.0]
    gaps = arrival_gaps(50, 10.0, seed=0)
    assert len(gaps) == 50 and gaps[0] == 0.0 and all(g > 0 for g in gaps[1:])
    assert gaps == arrival_gaps(50, 10.0, seed=0)


def test_read_prompts_file(tmp_path):
    from roseinfer.bench.scheduler_workload import read_prompts_file

    txt = tmp_path / "p.txt"
    txt.write_text("Hello\n\nHow are you\n")
    assert read_prompts_file(str(txt)) == ["Hello", "How are you"]
    jl = tmp_path / "p.jsonl"
    jl.write_text('"Hello"\n{"prompt": "The quick"}\n')
    assert read_prompts_file(str(jl)) == ["Hello", "The quick"]
    jl.write_text('{"text": 1}\n')
    with pytest.raises(ValueError):
        read_prompts_file(str(jl))


def test_step_tracer_wraps_step_and_draws(tmp_path):
    from dataclasses import dataclass

    from roseinfer.bench.trace import StepTracer

    @dataclass
    class Stats:
        num_running: int
        num_waiting: int
        num_used_blocks: int
        num_blocks: int
        prefix_hit_rate: float
        num_batched_tokens: int
        num_prefill_tokens: int
        num_preempted: int = 0

    class Core:
        def __init__(self):
            self.n = 0
            self.last_step = None

        def step(self):
            self.n += 1
            self.last_step = Stats(
                2, 3 - self.n, 4 + self.n, 100, 0.5, 10 + self.n, 8 if self.n == 1 else 0
            )
            return ["token"] * 2

    core = Core()
    tracer = StepTracer().attach(core)
    for _ in range(3):
        assert core.step() == ["token", "token"]
    tracer.detach()
    core.step()  # no longer recorded
    assert "step" not in core.__dict__
    assert [r["num_prefill_tokens"] for r in tracer.rows] == [8, 0, 0]
    assert [r["num_decode_tokens"] for r in tracer.rows] == [3, 12, 13]
    summary = tracer.summary()
    assert (
        summary["num_steps"] == 3
        and summary["mixed_steps"] == 1
        and summary["max_used_blocks"] == 7
    )
    tracer.save_json(str(tmp_path / "t.json"))
    assert json.loads((tmp_path / "t.json").read_text())["summary"] == summary
    tracer.plot(str(tmp_path / "t.png"), title="fake")
    StepTracer().plot(str(tmp_path / "empty.png"))
    assert is_png(tmp_path / "t.png") and is_png(tmp_path / "empty.png")


def test_other_load_is_well_formed():
    from roseinfer.bench.machine import OtherLoad, machine_info

    with OtherLoad(pids=(os.getpid(),)) as load:
        sum(range(2_000_000))
    assert load.cores is None or load.cores >= 0.0
    assert load.own_cores > 0.0 and load.pid_cores is None  # our own pid is not counted twice
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # a busy "server"
    try:
        time.sleep(0.2)
        with OtherLoad(pids=(child.pid,)) as load:
            time.sleep(0.5)
    finally:
        child.kill()
        child.wait(timeout=10)
    assert load.pid_cores is not None and load.pid_cores > 0.2
    assert machine_info()["cpu_count"] >= 1


def test_machine_info_has_the_kernels_loop_handoff_once_they_are_loaded(monkeypatch):
    """The bench reports carry how the kernels' two threads sit (one core complex or two on the
    AMD host) where the process runs the kernels, and never build them to say so."""
    import functools

    import roseinfer.kernels
    from roseinfer.bench.machine import machine_info

    if roseinfer.kernels.load_cpu_kernels() is None:
        pytest.skip("no C++ kernels here")
    info = machine_info()
    if len(os.sched_getaffinity(0)) >= 2 and info["torch_threads"] >= 2:
        assert 0 < info["region_handoff_us"] < 1e3
    else:  # one thread: no region to hand loops in
        assert "region_handoff_us" not in info

    @functools.cache
    def never_loaded():
        raise AssertionError("machine_info built the kernels")

    monkeypatch.setattr(roseinfer.kernels, "load_cpu_kernels", never_loaded)
    assert "region_handoff_us" not in machine_info()


# ---- the seeds' benchmark ---------------------------------------------------------------------
SUMMARY_PATTERNS = [
    r"=== online summary ===",
    r"Warmup runs: 0",
    r"Measured runs: 2",
    r"Decode time p50/mean: \d+\.\d{6}/\d+\.\d{6} s",
    r"Total time p50/mean: \d+\.\d{6}/\d+\.\d{6} s",
    r"Throughput\(completion,decode\) p50/mean: \d+\.\d{2}/\d+\.\d{2} tokens/s",
    r"Throughput\(completion,total\) p50/mean: \d+\.\d{2}/\d+\.\d{2} tokens/s",
    r"TTFT p50/mean: \d+\.\d{2}/\d+\.\d{2} ms",
    r"TPOT p50/mean: \d+\.\d{2}/\d+\.\d{2} ms/token",
    r"Latency p50/mean: \d+\.\d{2}/\d+\.\d{2} ms",
]


def test_benchmark_scheduler_online(tiny, tmp_path, capsys):
    from roseinfer.benchmark_scheduler import main

    out_json = tmp_path / "sched.json"
    rc = main([
        "--model", tiny, "--device", "cpu", "--prompt", "Hello", "--num-requests", "4", "--max-new-tokens", "4",
        "--mode", "online", "--warmup-runs", "0", "--repeat-runs", "2", "--ignore-eos", "--json", str(out_json),
        *ENGINE,
    ])  # fmt: skip
    assert rc == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= len(SUMMARY_PATTERNS)
    for pattern, line in zip(SUMMARY_PATTERNS, lines, strict=False):
        assert re.fullmatch(pattern, line), (pattern, line)
    doc = json.loads(out_json.read_text())
    (res,) = doc["results"]
    assert res["mode"] == "online" and res["measured_runs"] == 2 and len(res["runs"]) == 2
    for run in res["runs"]:
        assert run["requests"] == 4 and run["completion_tokens"] == 16  # ignore_eos: exactly 4 each
        assert run["prompt_tokens"] > 0 and run["total_tokens"] == run["prompt_tokens"] + 16
        assert 0 <= run["ttft_p50"] <= run["total_p50"] and run["tpot_p50"] >= 0
    for key in (
        "decode_time_s_p50",
        "throughput_completion_total_mean",
        "ttft_ms_p50",
        "tpot_ms_mean",
        "latency_ms_p50",
    ):
        assert key in res["summary"]
    assert doc["model"] and doc["dtype"]


def test_benchmark_scheduler_offline_random_prompts_with_trace(tiny, tmp_path, capsys):
    from roseinfer.benchmark_scheduler import main

    png, trace_json, out_json = tmp_path / "t.png", tmp_path / "t.json", tmp_path / "s.json"
    rc = main([
        "--model", tiny, "--random-input-len", "24", "--random-range-ratio", "0.5", "--num-requests", "6",
        "--max-new-tokens", "5", "--ignore-eos", "--mode", "offline", "--warmup-runs", "1", "--repeat-runs", "1",
        "--max-num-seqs", "4", "--max-num-batched-tokens", "32", "--no-prefix-cache",
        "--trace", str(png), "--trace-json", str(trace_json), "--json", str(out_json), *ENGINE,
    ])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "=== offline summary ===" in out and "Throughput(completion,total) p50/mean:" in out
    assert "TTFT" not in out and "TPOT" not in out  # the seeds' offline block has no latency lines
    run = json.loads(out_json.read_text())["results"][0]["runs"][0]
    assert run["completion_tokens"] == 30 and 6 * 12 <= run["prompt_tokens"] <= 6 * 36
    assert is_png(png)
    trace = json.loads(trace_json.read_text())
    steps = trace["steps"]
    assert len(steps) >= 5 and trace["summary"]["num_steps"] == len(steps)
    for row in steps:
        for key in (
            "t",
            "dt",
            "num_running",
            "num_waiting",
            "num_prefill_tokens",
            "num_decode_tokens",
            "num_used_blocks",
            "prefix_hit_rate",
        ):
            assert key in row
        assert (
            row["num_running"] <= 4 and row["num_prefill_tokens"] + row["num_decode_tokens"] <= 32
        )
    assert trace["summary"]["max_waiting"] > 0  # 6 requests, 4 slots: someone waited


def test_benchmark_scheduler_json_to_stdout_is_json_alone(tiny, capsys):
    """--json -: stdout parses as JSON; the seeds' summary lines go to stderr, unchanged."""
    from roseinfer.benchmark_scheduler import main

    rc = main(["--model", tiny, "--prompt", "Hello", "--num-requests", "2", "--max-new-tokens", "2",
               "--warmup-runs", "0", "--repeat-runs", "2", "--max-batch-size", "2", "--json", "-",
               *ENGINE])  # fmt: skip
    assert rc == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["results"][0]["measured_runs"] == 2 and doc["args"]["max_num_seqs"] == 2
    lines = err.splitlines()
    start = lines.index("=== online summary ===")
    for pattern, line in zip(SUMMARY_PATTERNS, lines[start:], strict=False):
        assert re.fullmatch(pattern, line), (pattern, line)


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--warmup-runs", "-5"], "--warmup-runs must be >= 0, got -5"),
        (["--repeat-runs", "0"], "--repeat-runs must be >= 1, got 0"),
        (
            ["--random-range-ratio", "0.9"],
            "--random-range-ratio needs --random-input-len (random prompts)",
        ),
        (
            ["--random-input-len", "8", "--random-range-ratio", "1.5"],
            "--random-input-len/--random-range-ratio: range ratio must be in [0, 1), got 1.5",
        ),
        (
            ["--max-batch-size", "2", "--max-num-seqs", "8"],
            "--max-batch-size 2 and --max-num-seqs 8 differ: give one",
        ),
        (
            ["--max-num-seqs", "64", "--max-batch-size", "2"],
            "--max-batch-size 2 and --max-num-seqs 64 differ: give one",
        ),
        (["--max-new-tokens", "0"], "--max-new-tokens must be >= 1, got 0"),
        # one would be used, the others dropped
        (
            ["--prompt", "x", "--prompts", "a", "b"],
            "--prompt, --prompts: give one source of prompts",
        ),
        (
            ["--random-input-len", "5", "--prompts", "a"],
            "--prompts, --random-input-len: give one source of prompts",
        ),
        (
            ["--mode", "offline", "--keep-prefix-cache-across-runs"],
            "--keep-prefix-cache-across-runs acts in online mode, not offline",
        ),
        (
            ["--mode", "naive", "--trace", "t.png"],
            "--trace: the naive mode runs no engine steps to trace",
        ),
    ],
)
def test_benchmark_scheduler_refuses_bad_or_contradicting_flags(flags, message, capsys):
    """Refused before the model loads (a model that does not exist: else its error)."""
    from roseinfer.benchmark_scheduler import main

    assert main(["--model", "/nonexistent/model", *flags]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"benchmark_scheduler: error: {message}"
    ]


def test_benchmark_scheduler_max_batch_size_is_max_num_seqs():
    from roseinfer.bench.scheduler import build_parser, check_args

    for argv, seqs in [([], 64), (["--max-batch-size", "2"], 2), (["--max-num-seqs", "8"], 8),
                       (["--max-num-seqs", "4", "--max-batch-size", "4"], 4)]:  # fmt: skip
        args = build_parser().parse_args(argv)
        check_args(args)
        assert args.max_num_seqs == seqs, argv


def test_bench_scheduler_subcommand_bad_file(capsys):
    assert bench_main(["scheduler", "--prompts-file", "/nonexistent/prompts.txt"]) == 1
    assert "error" in capsys.readouterr().err


# ---- offline throughput + baseline ------------------------------------------------------------
def test_bench_throughput_with_trace(tiny, tmp_path, capsys):
    png, trace_json, out_json = tmp_path / "tp.png", tmp_path / "tp.json", tmp_path / "res.json"
    rc = bench_main([
        "throughput", "--model", tiny, "--num-seqs", "6", "--min-input-len", "8", "--max-input-len", "40",
        "--min-output-len", "2", "--max-output-len", "6", "--max-num-seqs", "3", "--max-num-batched-tokens", "24",
        "--no-progress", "--trace", str(png), "--trace-json", str(trace_json), "--json", str(out_json), *ENGINE,
    ])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "Output token throughput:" in out and "Total token throughput:" in out
    res = json.loads(out_json.read_text())
    assert res["num_requests"] == 6 and res["output_tokens"] == res["requested_output_tokens"]
    assert res["output_throughput"] > 0 and res["elapsed_s"] > 0 and res["dtype"]
    assert is_png(png)
    trace = json.loads(trace_json.read_text())
    assert trace["summary"]["decode_tokens"] + trace["summary"]["prefill_tokens"] > 0
    assert max(r["num_running"] for r in trace["steps"]) <= 3


@pytest.mark.parametrize(
    ("warmup", "message"),
    [("-3", "--num-warmup must be >= 0, got -3"),
     ("7", "--num-warmup 7 is more than the workload's 6 prompts")],
)  # fmt: skip
def test_bench_throughput_refuses_a_warm_up_it_would_cut(tiny, capsys, warmup, message):
    rc = bench_main(["throughput", "--model", tiny, "--num-seqs", "6", "--num-warmup", warmup,
                     "--no-progress", *ENGINE])  # fmt: skip
    assert rc == 1 and message in capsys.readouterr().err


def test_bench_throughput_warms_up_within_the_workload(tiny, capsys):
    """The warm-up request is no longer than the workload's own: 4-token prompts and 2 output
    tokens fit a context of 8, and its 8 tokens of warm-up had not."""
    rc = bench_main(["throughput", "--model", tiny, "--num-seqs", "3", "--min-input-len", "4",
                     "--max-input-len", "4", "--min-output-len", "2", "--max-output-len", "2",
                     "--max-model-len", "8", "--no-progress", *ENGINE])  # fmt: skip
    assert rc == 0, capsys.readouterr().err


def test_hf_baseline_script(tiny, tmp_path, capsys):
    spec = importlib.util.spec_from_file_location(
        "hf_baseline", os.path.join(ROOT, "benchmarks", "hf_baseline.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out_json = tmp_path / "hf.json"
    rc = mod.main([
        "--model", tiny, "--num-seqs", "4", "--min-input-len", "4", "--max-input-len", "12", "--min-output-len", "2",
        "--max-output-len", "5", "--batch-size", "2", "--no-progress", "--json", str(out_json), *ENGINE,
    ])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "=== roseinfer vs transformers (same workload) ===" in out and "ratio" in out
    doc = json.loads(out_json.read_text())
    ours, hf = doc["roseinfer"], doc["transformers"]
    assert (
        ours["output_tokens"] == hf["output_tokens"]
        and ours["prompt_tokens"] == hf["prompt_tokens"]
    )
    assert hf["generated_tokens_incl_padding"] >= hf["output_tokens"]
    assert doc["ratio_output_throughput"] > 0


# ---- serving benchmark against a fake OpenAI-compatible server --------------------------------
class FakeServer:
    """A tiny OpenAI-style /v1/completions SSE server; one word per chunk; fails prompts with FAIL."""

    def __init__(self) -> None:
        import uvicorn

        self.bodies: list[dict] = []
        app = FastAPI()

        @app.get("/v1/models")
        async def models():
            return {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}

        @app.post("/v1/completions")
        async def completions(request: Request):
            body = await request.json()
            self.bodies.append(body)
            if "FAIL" in body["prompt"]:
                return JSONResponse({"error": {"message": "bad prompt"}}, status_code=400)
            n = body["max_tokens"]

            async def events():
                for i in range(n):
                    await asyncio.sleep(0.001)
                    chunk = {"choices": [{"index": 0, "text": f" w{i}", "finish_reason": None}]}
                    yield f"data: {json.dumps(chunk)}\n\n"
                yield f"data: {json.dumps({'choices': [{'index': 0, 'text': '', 'finish_reason': 'length'}]})}\n\n"
                if (body.get("stream_options") or {}).get("include_usage"):
                    usage = {"prompt_tokens": len(body["prompt"].split()), "completion_tokens": n}
                    yield f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n"
                yield "data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("fake server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def test_bench_serve_sweep_against_fake_server(tmp_path, capsys):
    out_json, png = tmp_path / "serve.json", tmp_path / "serve.png"
    with FakeServer() as fake:
        rc = bench_main([
            "serve", "--base-url", fake.url, "--tokenizer", "none", "--num-prompts", "4", "--random-input-len", "10",
            "--random-output-len", "5", "--concurrency", "1,2", "--json", str(out_json), "--plot", str(png),
            "--no-progress", "--server-pid", str(os.getpid()),
        ])  # fmt: skip
        bodies = list(fake.bodies)
    assert rc == 0
    out = capsys.readouterr().out
    assert out.count("Serving Benchmark Result") == 2 and "=== sweep ===" in out
    assert "Median TTFT (ms):" in out and "P99 ITL (ms):" in out and "Mean E2EL (ms):" in out
    doc = json.loads(out_json.read_text())
    assert doc["model"] == "fake-model"  # discovered from /v1/models
    assert [r["max_concurrency"] for r in doc["results"]] == [1, 2]
    for r in doc["results"]:
        assert r["completed"] == 4 and r["failed"] == 0 and r["usage_reported"]
        assert r["total_output_tokens"] == 20 and r["total_input_tokens"] == 40
        for metric in ("ttft", "tpot", "itl", "e2el"):
            for stat in ("mean", "median", "p90", "p99"):
                assert r[f"{stat}_{metric}_ms"] >= 0
        assert r["median_ttft_ms"] <= r["median_e2el_ms"]
        assert r["request_throughput"] > 0 and r["output_throughput"] > 0
        assert r["other_cpu_cores"] is None or r["other_cpu_cores"] >= 0
        assert r["client_cpu_cores"] > 0  # this process streamed the requests
        assert r["server_cpu_cores"] is None  # --server-pid is this process: counted as ours
    assert out.count("Client CPU (cores):") == 2
    assert is_png(png)
    assert len(bodies) == 1 + 8  # one warm-up request, then 4 per sweep point
    for b in bodies:
        assert b["stream"] is True and b["ignore_eos"] is True
        assert b["stream_options"] == {"include_usage": True} and b["model"] == "fake-model"


def test_bench_serve_without_usage_counts_chunks_and_reports_failures(tmp_path, capsys):
    data = tmp_path / "prompts.jsonl"
    data.write_text(
        '{"prompt": "hello there", "output_len": 3}\n"FAIL please"\n{"prompt": "one two three"}\n'
    )
    out_json = tmp_path / "serve.json"
    with FakeServer() as fake:
        rc = bench_main([
            "serve", "--base-url", fake.url, "--model", "fake-model", "--dataset", "jsonl", "--dataset-path",
            str(data), "--tokenizer", "none", "--num-prompts", "3", "--random-output-len", "4",
            "--no-stream-usage", "--no-ignore-eos", "--request-rate", "200", "--num-warmups", "0",
            "--json", str(out_json), "--no-progress",
        ])  # fmt: skip
        bodies = list(fake.bodies)
    assert rc == 1  # one request failed
    (r,) = json.loads(out_json.read_text())["results"]
    assert r["completed"] == 2 and r["failed"] == 1 and not r["usage_reported"]
    assert r["total_output_tokens"] == 3 + 4  # counted from text chunks
    assert sum(1 for e in r["errors"] if "HTTP 400" in e) == 1
    assert all("ignore_eos" not in b and "stream_options" not in b for b in bodies)
    assert "First error: HTTP 400" in capsys.readouterr().out


def test_bench_serve_unreachable_server(capsys):
    rc = bench_main(["serve", "--base-url", f"http://127.0.0.1:{free_port()}/v1", "--tokenizer", "none",
                     "--num-prompts", "1", "--no-progress"])  # fmt: skip
    assert rc == 1
    assert "is the server up?" in capsys.readouterr().err


# ---- serving benchmark against the real server --------------------------------------------------
def test_bench_serve_against_roseinfer_server(tiny, tmp_path):
    if importlib.util.find_spec("roseinfer.server") is None:
        pytest.skip("roseinfer.server is not available")
    port = free_port()
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "roseinfer.server", "--model", tiny, "--port", str(port), "--log-level", "warning",
         *ENGINE],
        stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
    )  # fmt: skip
    try:
        import httpx

        deadline = time.time() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"server exited: {(tmp_path / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline:
                pytest.fail("server did not come up in 60 s")
            time.sleep(0.2)
        out_json, png = tmp_path / "serve.json", tmp_path / "serve.png"
        rc = bench_main([
            "serve", "--base-url", f"http://127.0.0.1:{port}/v1", "--tokenizer", tiny, "--num-prompts", "3",
            "--random-input-len", "8", "--random-output-len", "4", "--concurrency", "1,2", "--json", str(out_json),
            "--plot", str(png), "--no-progress",
        ])  # fmt: skip
        assert rc == 0
        doc = json.loads(out_json.read_text())
        for r in doc["results"]:
            assert r["completed"] == 3 and r["failed"] == 0
            assert r["total_output_tokens"] == 12  # ignore_eos honoured; counted from usage
            assert r["usage_reported"] and r["total_input_tokens"] > 0
        assert is_png(png)
        # llama.cpp's native API at the server's root, as against llama-server: its last chunk
        # counts the tokens (the model's name still found under /v1)
        native = tmp_path / "native.json"
        rc = bench_main([
            "serve", "--base-url", f"http://127.0.0.1:{port}", "--tokenizer", tiny, "--num-prompts", "3",
            "--random-input-len", "8", "--random-output-len", "4", "--endpoint-type", "llamacpp",
            "--json", str(native), "--no-progress",
        ])  # fmt: skip
        assert rc == 0
        (r,) = json.loads(native.read_text())["results"]
        assert (r["completed"], r["failed"], r["total_output_tokens"]) == (3, 0, 12)
        assert r["usage_reported"] and r["total_input_tokens"] > 0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def test_shared_prefix_prompts_and_presets():
    """--random-prefix-len: every prompt starts with the same text; --preset fills the flags
    left at their defaults, a flag given before or after it wins."""
    from roseinfer.bench.cli import build_parser
    from roseinfer.bench.serve_prompts import random_prompts

    specs = random_prompts(5, 6, 4, 0.0, seed=1, tok=None, prefix_len=30)
    prefix = specs[0].prompt.split()[:30]
    assert all(s.prompt.split()[:30] == prefix and s.prompt_len == 36 for s in specs)
    assert len({s.prompt for s in specs}) == 5
    assert random_prompts(2, 6, 4, 0.0, seed=1, tok=None)[0].prompt_len == 6
    args = build_parser().parse_args(["serve", "--preset", "shared-prefix"])
    assert (args.random_prefix_len, args.random_input_len, args.concurrency) == (1000, 24, [32])
    args = build_parser().parse_args(["serve", "--concurrency", "4", "--preset", "long-prompt",
                                      "--num-prompts", "3"])  # fmt: skip
    assert (args.random_input_len, args.concurrency, args.num_prompts) == (2000, [4], [3])


def test_a_flag_given_before_a_preset_wins_even_at_its_default_value():
    """`--random-input-len 70 --preset long-prompt` runs 70-token prompts: what the user gave is
    kept, not only values that differ from the defaults; the JSON config records no marker."""
    from roseinfer.bench.cli import build_parser
    from roseinfer.bench.metrics import jsonable_args
    from roseinfer.bench.serve import PRESETS

    defaults = build_parser().parse_args(["serve"])
    given = {"random_input_len": "70", "random_output_len": "128", "concurrency": "0",
             "num_prompts": "32", "temperature": "0", "random_prefix_len": "0"}  # fmt: skip
    for name, preset in PRESETS.items():
        for key in preset:
            flag = "--" + key.replace("_", "-")
            for argv in (
                [flag, given[key], "--preset", name],
                ["--preset", name, flag, given[key]],
            ):
                args = build_parser().parse_args(["serve", *argv])
                assert getattr(args, key) == getattr(defaults, key), argv
                others = {k: v for k, v in preset.items() if k != key}
                assert {k: getattr(args, k) for k in others} == others, argv
                assert all(not k.startswith("_") for k in jsonable_args(args))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--preset", "long-prompt", "--preset", "shared-prefix"])


def test_seed_help_says_it_seeds_the_workload(capsys):
    """bench throughput's and benchmark_scheduler's --seed also draws the random prompts."""
    from roseinfer.benchmark_scheduler import main

    for run in (lambda: bench_main(["throughput", "--help"]), lambda: main(["--help"])):
        with pytest.raises(SystemExit):
            run()
        out = " ".join(capsys.readouterr().out.split())
        assert "--seed SEED seed of the" in out and "seed for requests that set none" not in out


def test_issue22_summary_reads_each_round_and_judges_each_goal(tmp_path, capsys, monkeypatch):
    """benchmarks/issue22_summary.py over the files issue22_goals.sh writes (lines as its tools
    print them): each goal's ratio per round against the peer of the same round, and a goal
    missed in any round is not met."""
    spec = importlib.util.spec_from_file_location(
        "issue22_summary", os.path.join(ROOT, "benchmarks", "issue22_summary.py")
    )
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "issue22_summary", mod)  # its dataclass looks itself up
    spec.loader.exec_module(mod)
    served = {
        1: ["874.96", "874.39", "1455.45", "696.85", "1703.22"],
        2: ["800.00", "900.00", "1600.00", "630.00", "2000.00"],
    }
    for r, (vllm_tok, vllm_ttft, bf16_tok, bf16_ttft, int8_tok) in served.items():
        (tmp_path / f"served_{r}.txt").write_text(
            "# 2026-11-28 13:51 UTC, Model name: AMD EPYC, model 2, roseinfer cf2b6b6\n"
            f"13:52:42 vllm_bf16  short          out tok/s {vllm_tok}, TTFT p50 638.94 ms, "
            "TPOT p50 32.39 ms, failed 0\n"
            f"13:52:56 vllm_bf16  long-prompt    out tok/s 23.79, TTFT p50 {vllm_ttft} ms, "
            "TPOT p50 15.11 ms, failed 0\n"
            f"13:53:40 rose_bf16  short          out tok/s {bf16_tok}, TTFT p50 283.74 ms, "
            "TPOT p50 19.77 ms, failed 0\n"
            f"13:53:50 rose_bf16  long-prompt    out tok/s 35.68, TTFT p50 {bf16_ttft} ms, "
            "TPOT p50 6.31 ms, failed 0\n"
            f"13:54:29 rose_int8_kv8 short          out tok/s {int8_tok}, TTFT p50 243.85 ms, "
            "TPOT p50 16.61 ms, failed 0\n"
        )
    (tmp_path / "offline_1.txt").write_text(
        "rose bf16: Output token throughput: 890.97 tok/s\n"
        "openvino fp16: openvino-genai 2026.4.1.0 /w/ov_fp16: 64 requests, 4598 output tokens "
        "in 7.91 s: 581.4 output tok/s\n"
    )
    (tmp_path / "one_stream.txt").write_text(
        "read bandwidth per `sum`: median 44.9 GB/s (quartiles 43.5-46.1)\n"
        "int8: step 3.65 ms, 1.32x that round's floor (quartiles 1.18-1.28)\n"
        "int8 (the 3 steps after the first, in a row): step 3.30 ms, 1.10x that round's floor "
        "(quartiles 1.05-1.15)\n"
        "handoff between the threads per round: median 0.19 µs (quartiles 0.17-0.70)\n"
        "rounds whose handoff was 0.45 µs or more: 40\n"
        "  int8: step 3.10 ms, 1.62x that round's floor (quartiles 1.55-1.70)\n"
    )
    (tmp_path / "one_stream_served.txt").write_text(
        "int8 served: TPOT p50 2.58 ms, 1.43x the weight-read floor (1.80 ms; sum 75.4 / 73.7 "
        "GB/s; handoff 0.71 / 0.80 µs)\n"
        "int8 served: TPOT p50 3.25 ms, 1.15x the weight-read floor (2.83 ms; sum 47.7 / 47.3 "
        "GB/s)\n"
    )
    mod.main([str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert "32 streams, bf16 (>= 1.5x): 1.66x / 2.00x: met" in lines
    # 1703.22 / 874.96 = 1.95x in round 1: one round short is not met.
    assert "32 streams, fastest (int8 + int8 KV) (>= 2.0x): 1.95x / 2.50x: NOT met" in lines
    assert "2,000-token TTFT, bf16 (<= 0.8x): 0.80x / 0.70x: met" in lines
    assert "offline bf16 vs OpenVINO fp16 (>= 1.3x): 1.53x: met" in lines
    # The first step of each turn, the steps after it and served, each a line of its own; the
    # rounds of one placement of the threads (indented) are not the goal's figure.
    assert "one stream, int8, of the weight-read floor (<= 1.25x): 1.32x: NOT met" in lines
    assert "one stream in a row, int8, of the weight-read floor (<= 1.25x): 1.10x: met" in lines
    assert (
        "one stream served, int8, of the weight-read floor (<= 1.25x): 1.43x / 1.15x: NOT met"
        in lines
    )
    assert "8 such prompts at once, bf16 (>= 1.25x): not measured: -" in lines


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--request-rate", "-5"], "--request-rate"),
        (["--request-rate", "0"], "--request-rate"),
        (["--num-warmups", "-1"], "--num-warmups"),
        (["--dataset-path", "p.jsonl"], "--dataset-path"),
        (["--dataset", "jsonl", "--dataset-path", "p.jsonl", "--random-input-len", "5"],
         "--random-input-len"),
        (["--dataset", "jsonl", "--dataset-path", "p.jsonl", "--random-range-ratio", "0.5"],
         "--random-range-ratio"),
        (["--dataset", "jsonl", "--dataset-path", "p.jsonl", "--preset", "long-prompt"],
         "--preset long-prompt"),
    ],
)  # fmt: skip
def test_bench_serve_refuses_flags_that_would_not_act(argv, named):
    """Read and then unused (a path without --dataset jsonl, random-prompt settings with it), or
    a rate that would silently mean "all at once": refused before any request, naming the flag."""
    from roseinfer.bench.cli import build_parser
    from roseinfer.bench.serve import check_flags

    args = build_parser().parse_args(["serve", *argv])
    with pytest.raises(ValueError, match=named):
        check_flags(args)
