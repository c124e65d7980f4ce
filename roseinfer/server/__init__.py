"""The OpenAI-compatible HTTP server over the online scheduler.

- `protocol.py`  request bodies (pydantic) and response shapes
- `fields.py`, `responses_fields.py`, `field_checks.py`, `body_check.py`  the table of every
  request field, and its check of a body
- `manager.py`   `SchedulerManager`: the engine thread that drives the `OnlineScheduler`
- `serving.py`   per-request detokenization, stop strings, choices of one HTTP request
- `app.py`       `create_app(engine, server_config)`: the FastAPI endpoints
- `params.py`    a request body's `SamplingParams`, and errors naming the fields it sent
- `responses_input.py`, `responses_output.py`, `responses_store.py`, `responses_api.py`
  /v1/responses: its body as a chat request, the answer as OpenAI's Response object and stream
  events, the stored ones and their routes
- `http_timeouts.py`  deadlines on what a client owes a connection (`--request-timeout`)
- `config.py`    `ServerConfig`, one field per server flag
- `chat_prompt.py`, `structured.py`  a chat body's prompt and its constraint (tools too) as 400s
- `stats_log.py` the periodic status line (`--log-stats-interval`)
- `tokenization.py`  POST /tokenize and /detokenize (vLLM's shapes)
- `web.py`, `static/`  the chat page at /, and /docs and /redoc served without a CDN
- `metrics.py`   Prometheus metrics on a private registry
- `errors.py`, `middleware.py`  OpenAI error bodies, the request-size limit
- `cli.py`       `serve_main` / `add_server_args`: `roseinfer serve`, `python -m roseinfer.server`
"""

from roseinfer.server.cli import add_server_args, serve_main

__all__ = ["SchedulerManager", "ServerConfig", "add_server_args", "create_app", "serve_main"]


def __getattr__(name: str):  # the heavy parts (torch, fastapi) load on first use
    if name == "SchedulerManager":
        from roseinfer.server.manager import SchedulerManager

        return SchedulerManager
    if name == "create_app":
        from roseinfer.server.app import create_app

        return create_app
    if name == "ServerConfig":
        from roseinfer.server.config import ServerConfig

        return ServerConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
