"""The server flags a vLLM or llama.cpp user reaches for (issue 21, point 4): several
--served-model-name values, API keys from --api-key (comma-separated) and --api-key-file,
--allowed-origins (CORS, off by default), --chat-template, --model ORG/NAME from the local Hugging
Face cache, and `roseinfer --version`."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import httpx
import pytest
from conftest import make_tiny_model, serve_in_process

from roseinfer import LLM, __version__
from roseinfer.server.cli import build_parser, serve_main, server_config_from_args
from roseinfer.server.config import ServerConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def config(*argv: str) -> ServerConfig:
    return server_config_from_args(build_parser().parse_args(list(argv)))


def test_flags_map_onto_the_server_config(tmp_path, monkeypatch):
    monkeypatch.delenv("ROSEINFER_API_KEY", raising=False)
    keys = tmp_path / "keys"
    keys.write_text("# the team's keys\nfile-key-1\n\n  file-key-2  \n")
    cfg = config("--served-model-name", "rose", "gpt-4o", "--api-key", "a, b",
                 "--api-key-file", str(keys), "--allowed-origins", "https://example.com", "*")  # fmt: skip
    assert cfg.served_model_names == ("rose", "gpt-4o")
    assert cfg.api_keys == ("a", "b", "file-key-1", "file-key-2")
    assert cfg.allowed_origins == ("https://example.com", "*")
    assert config() == ServerConfig()  # nothing given: one name (the model's), open, no CORS
    assert config("--reasoning-parser", "qwen3").reasoning_parser == "qwen3"
    with pytest.raises(SystemExit):  # (argparse's choices: a usage error naming them)
        config("--reasoning-parser", "r1")
    with pytest.raises(OSError, match="--api-key-file .*missing"):
        config("--api-key-file", str(tmp_path / "missing"))
    (tmp_path / "empty").write_text("# nothing\n")
    with pytest.raises(ValueError, match="holds no key"):
        config("--api-key-file", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="scheme://host"):
        config("--allowed-origins", "example.com")


@pytest.mark.parametrize("value", ["", ",", " , "])
def test_an_api_key_that_holds_no_key_is_refused_not_an_open_server(value, monkeypatch):
    monkeypatch.delenv("ROSEINFER_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"--api-key \(or \$ROSEINFER_API_KEY\) holds no key"):
        config("--api-key", value)
    monkeypatch.setenv("ROSEINFER_API_KEY", value)  # the flag's default: the same check
    with pytest.raises(ValueError, match="holds no key"):
        config()
    r = subprocess.run(
        [sys.executable, "-m", "roseinfer.server", "--api-key", value, "--model", "/nonexistent",
         "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "holds no key" in r.stderr


def test_a_bad_key_file_fails_before_the_model_loads(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "roseinfer.server", "--api-key-file", str(tmp_path / "nope"),
         "--port", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        f"roseinfer serve: error: --api-key-file {tmp_path / 'nope'}: No such file or directory"
    ]


@pytest.mark.parametrize(
    "kwargs,flag",
    [
        (dict(port=99999), "--port must be in 0..65535, got 99999"),
        (dict(port=-1), "--port must be in 0..65535"),
        (dict(max_waiting_requests=0), "--max-waiting-requests must be >= 1"),
        (dict(max_waiting_requests=-3), "--max-waiting-requests must be >= 1"),
        (dict(max_request_bytes=-1), "--max-request-bytes must be >= 0"),
        (dict(log_stats_interval=-1.0), "--log-stats-interval must be a number of seconds >= 0"),
        (dict(log_stats_interval=float("nan")), "--log-stats-interval"),
        (dict(stream_interval=0), "--stream-interval must be >= 1, got 0"),
        (dict(stream_interval=2.0), "--stream-interval must be >= 1"),
        (dict(log_level="loud"), "--log-level must be one of"),
        (dict(host=""), "--host"),
        (dict(served_model_names=("a", "a", "b")), "--served-model-name lists a name twice"),
        # an Origin header has no path: "http://example.com/" would match no page's
        (dict(allowed_origins=("http://example.com/",)), "scheme://host[:port]"),
        (dict(allowed_origins=("https://example.com/app",)), "scheme://host[:port]"),
    ],
)
def test_server_config_refuses_each_bad_value_naming_its_flag(kwargs, flag):
    with pytest.raises(ValueError, match=re.escape(flag)):
        ServerConfig(**kwargs)


def test_bad_server_flag_values_fail_before_the_model_loads(monkeypatch, capsys):
    """Checked once, in ServerConfig: the same line from the flag, exit 2, no model read."""
    monkeypatch.delenv("ROSEINFER_API_KEY", raising=False)
    with pytest.raises(ValueError, match="--max-request-bytes must be >= 0"):
        config("--max-request-bytes", "-1")
    for argv, line in [
        (["--max-request-bytes", "-1"], "--max-request-bytes must be >= 0 (0: no limit), got -1"),
        (["--max-waiting-requests", "0"], "--max-waiting-requests must be >= 1 (leave it out "
                                          "for no limit), got 0"),
    ]:  # fmt: skip
        assert serve_main(["--model", "/nonexistent/model", "--port", "0", *argv]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [f"roseinfer serve: error: {line}"]
    assert ServerConfig(max_waiting_requests=1, max_request_bytes=0, port=0).max_request_bytes == 0


def test_the_app_streams_at_the_server_configs_stream_interval(tiny_model_dir):
    """ServerConfig.stream_interval is the one place it is set: create_app hands it to the
    client; a client built with another interval is refused, not silently kept."""
    from fastapi.testclient import TestClient

    from roseinfer.config import EngineConfig
    from roseinfer.engine import InferenceEngine
    from roseinfer.engine.client import EngineClient
    from roseinfer.server.app import create_app

    engine = InferenceEngine(
        EngineConfig(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=16)
    )
    body = {"prompt": [5, 6, 7], "max_tokens": 12, "temperature": 0, "stream": True,
            "ignore_eos": True}  # fmt: skip

    def chunks(interval: int, **request) -> int:
        app = create_app(EngineClient(engine.new_core()), ServerConfig(stream_interval=interval))
        with TestClient(app) as http, http.stream("POST", "/v1/completions",
                                                  json={**body, **request}) as r:  # fmt: skip
            return len([line for line in r.iter_lines() if line.startswith('data: {"')])

    assert chunks(1) > 4
    assert 2 <= chunks(4) <= 4  # 12 tokens: 1, then 4 at a time (the detokenizer may merge)
    # a request's own (vLLM's field) beats the server's, either way
    assert chunks(4, stream_interval=1) > 4
    assert 2 <= chunks(1, stream_interval=4) <= 4
    app = create_app(EngineClient(engine.new_core()), ServerConfig())
    with TestClient(app) as http:
        r = http.post("/v1/completions", json={**body, "stream_interval": 0})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "stream_interval")
    with pytest.raises(ValueError, match="stream_interval is 1: set it in ServerConfig only"):
        create_app(EngineClient(engine.new_core(), stream_interval=4), ServerConfig())


@pytest.fixture(scope="module")
def server(tiny_model_dir):
    """The tiny model under two names, two keys and one allowed origin."""
    cfg = ServerConfig(served_model_names=("rose", "alias"), api_keys=("k1", "k2"),
                       allowed_origins=("https://app.example",))  # fmt: skip
    with serve_in_process(tiny_model_dir("llama"), server_config=cfg) as (_, url):
        yield url


def test_every_served_name_answers_and_responses_carry_the_first(server):
    with httpx.Client(base_url=server, timeout=60, headers={"Authorization": "Bearer k2"}) as http:
        assert [m["id"] for m in http.get("/v1/models").json()["data"]] == ["rose", "alias"]
        assert http.get("/v1/models/alias").json()["id"] == "alias"
        body = {"model": "alias", "prompt": "hi", "max_tokens": 2}
        r = http.post("/v1/completions", json=body)
        assert r.status_code == 200 and r.json()["model"] == "rose"
        r = http.post("/v1/completions", json={**body, "model": "other"})
        assert r.status_code == 404 and r.json()["error"]["param"] == "model"
        assert "`rose`, `alias`" in r.json()["error"]["message"]


def test_each_key_opens_the_api(server):
    for key, status in [("k1", 200), ("k2", 200), ("k3", 401), ("k1,k2", 401)]:
        r = httpx.get(server + "/v1/models", headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == status, key
    assert httpx.get(server + "/v1/models").status_code == 401
    # an unknown path under /v1 asks for the key first, as vLLM's: without one a client learns
    # nothing of which routes exist (it had answered 404); with one, the 404 naming it
    assert httpx.post(server + "/v1/moderations", json={}).status_code == 401
    assert httpx.get(server + "/v1/completions").status_code == 401  # (a 405 with the key)
    key = {"Authorization": "Bearer k1"}
    assert httpx.post(server + "/v1/moderations", json={}, headers=key).status_code == 404
    assert httpx.get(server + "/v1/completions", headers=key).status_code == 405
    embed = {"input": "x"}
    assert httpx.post(server + "/v1/embeddings", json=embed).status_code == 401
    assert httpx.post(server + "/v1/embeddings", json=embed, headers=key).status_code == 200
    assert httpx.get(server + "/nope").status_code == 404  # outside the API: as before


def test_cors_answers_the_allowed_origin_only(server, tiny_server):
    preflight = {"Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}  # fmt: skip
    r = httpx.options(server + "/v1/chat/completions",
                      headers={**preflight, "X-Request-Id": "pre-1"})  # fmt: skip
    assert r.status_code == 200 and r.headers["x-request-id"] == "pre-1"
    assert r.headers["access-control-allow-origin"] == "https://app.example"
    r = httpx.get(server + "/v1/models", headers={"Origin": "https://app.example",
                                                  "Authorization": "Bearer k1"})  # fmt: skip
    assert r.headers["access-control-allow-origin"] == "https://app.example"
    # a page may read when to retry a 503 and the response's id
    exposed = r.headers["access-control-expose-headers"].lower()
    assert "retry-after" in exposed and "x-request-id" in exposed
    other = {**preflight, "Origin": "https://evil.example"}
    r = httpx.options(server + "/v1/chat/completions", headers=other)
    assert "access-control-allow-origin" not in r.headers
    # off by default: no CORS headers at all
    r = httpx.get(tiny_server[1] + "/v1/models", headers={"Origin": "https://app.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_chat_template_flag_replaces_the_models(tiny_model_dir, tmp_path):
    template = tmp_path / "template.jinja"
    template.write_text("{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}>>")
    args = build_parser().parse_args(["--chat-template", str(template)])
    assert args.chat_template == str(template)
    llm = LLM(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=16,
              chat_template=str(template))  # fmt: skip
    ids = llm.encode_chat([{"role": "user", "content": "hello there"}])
    assert llm.engine.tokenizer.decode(ids) == "[user] hello there\n>>"
    with pytest.raises(FileNotFoundError, match="chat template file not found: nope.jinja"):
        LLM(model=tiny_model_dir("llama"), num_kv_blocks=16, chat_template="nope.jinja")


def test_model_org_name_loads_from_the_local_hub_cache(tmp_path, monkeypatch):
    """vLLM's habit, `--model org/name`: found in the cache like --hf-model-id, never fetched;
    not there, the error says how to pass a path."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--tiny-org--tiny-llama"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    make_tiny_model("llama", str(repo / "snapshots" / commit))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    llm = LLM(model="tiny-org/tiny-llama", dtype="float32", num_kv_blocks=16)
    assert llm.engine.model_name == "tiny-org/tiny-llama"
    with pytest.raises(FileNotFoundError, match="--model /path/to/dir"):
        LLM(model="tiny-org/not-cached", num_kv_blocks=16)


def test_roseinfer_version():
    r = subprocess.run([sys.executable, "-m", "roseinfer.cli", "--version"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 0 and r.stdout.strip() == f"roseinfer {__version__}"
