"""`roseinfer serve` / `python -m roseinfer.server` flags (no model is loaded here)."""

from __future__ import annotations

import os
import subprocess
import sys

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
        "rose",
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


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--model", "/nonexistent/model"], 1, "/nonexistent/model"),  # while loading
        (["--stream-interval", "0"], 2, "--stream-interval must be >= 1"),  # before loading
    ],
)
def test_bad_flags_are_a_one_line_error(args, code, message):
    r = subprocess.run(
        [sys.executable, "-m", "roseinfer.server", *args, "--port", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == code
    assert "error" in r.stderr and message in r.stderr and "Traceback" not in r.stderr
