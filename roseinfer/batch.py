"""`roseinfer run-batch`: a file of OpenAI batch requests run offline, vLLM's `run-batch`.

The input is OpenAI's batch file format, one JSON object a line:

    {"custom_id": "q1", "method": "POST", "url": "/v1/chat/completions", "body": {...}}

and the output one line each, in the input's order:

    {"id": "batch_req_...", "custom_id": "q1", "response": {"status_code": 200,
     "request_id": "chatcmpl-...", "body": {...}}, "error": null}

Each body goes through the server's own app (`create_app`, in process, no socket), so it is
checked, run and answered exactly as `roseinfer serve` would: a refused request is its 4xx in
`response` (its body the error), and the others run on. A line that makes no request (not JSON,
no `custom_id`, a `custom_id` seen before, another method or URL, `stream: true`) gets `error`
(`{"code", "message"}`) and no `response`, as OpenAI's error lines. Up to `--max-concurrency`
requests are in flight at once, so the engine batches them as it batches a server's clients; the
output is written as each next line in order is done.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # imported where used: `roseinfer --help` needs neither
    import httpx
    from fastapi import FastAPI

URLS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses")


def _line_error(custom_id: str | None, code: str, message: str) -> dict[str, Any]:
    return {"id": f"batch_req_{uuid.uuid4().hex}", "custom_id": custom_id, "response": None,
            "error": {"code": code, "message": message}}  # fmt: skip


def read_request(text: str, number: int, seen: set[str]) -> tuple[str, str, dict] | dict[str, Any]:
    """A line's (custom_id, url, body), or the error line it gets instead (`number`: from 1)."""
    try:
        line = json.loads(text)
    except ValueError as e:
        return _line_error(None, "invalid_json", f"line {number}: not JSON: {e}")
    if not isinstance(line, dict):
        return _line_error(None, "invalid_json", f"line {number}: not a JSON object")
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return _line_error(None, "missing_custom_id",
                           f"line {number}: custom_id must be a non-empty string")  # fmt: skip
    if custom_id in seen:
        return _line_error(custom_id, "duplicate_custom_id",
                           f"line {number}: custom_id {custom_id!r} was used by an earlier line")  # fmt: skip
    seen.add(custom_id)
    unknown = sorted(set(line) - {"custom_id", "method", "url", "body"})
    if unknown:
        return _line_error(custom_id, "invalid_request",
                           f"line {number}: {unknown[0]!r} is not a field of a batch line")  # fmt: skip
    if line.get("method") != "POST":
        return _line_error(custom_id, "invalid_method",
                           f"line {number}: method must be \"POST\", got {line.get('method')!r}")  # fmt: skip
    url = line.get("url")
    if url not in URLS:
        return _line_error(custom_id, "invalid_url",
                           f"line {number}: url must be one of {', '.join(URLS)}, got {url!r}")  # fmt: skip
    body = line.get("body")
    if not isinstance(body, dict):
        return _line_error(custom_id, "invalid_request", f"line {number}: body must be an object")
    if body.get("stream") is True:
        return _line_error(custom_id, "invalid_request",
                           f"line {number}: stream is not supported in a batch")  # fmt: skip
    return custom_id, url, body


async def send(http: httpx.AsyncClient, custom_id: str, url: str, body: dict) -> dict[str, Any]:
    """One request through the app: its status and its JSON answer (or error)."""
    r = await http.post(url, json=body)
    try:
        answer = r.json()
    except ValueError:  # (every answer of these routes is JSON unless streamed, refused above)
        return _line_error(custom_id, "invalid_response", f"HTTP {r.status_code}: {r.text[:200]}")
    request_id = answer.get("id") if isinstance(answer.get("id"), str) else None
    response = {"status_code": r.status_code,
                "request_id": request_id or f"req_{uuid.uuid4().hex}", "body": answer}  # fmt: skip
    return {"id": f"batch_req_{uuid.uuid4().hex}", "custom_id": custom_id,
            "response": response, "error": None}  # fmt: skip


async def run_batch(app: FastAPI, lines: Iterable[str], out: TextIO, max_concurrency: int,
                    on_done: Callable[[], object] | None = None) -> Counter[str]:  # fmt: skip
    """Run every non-blank line of `lines` through `app`, writing each output line to `out` in
    order; at most `max_concurrency` requests in flight. Counts the outcomes: `ok` (2xx),
    `refused` (4xx), `failed` (5xx) and `invalid` (lines that made no request)."""
    import httpx

    counts: Counter[str] = Counter()
    seen: set[str] = set()
    pending: deque[asyncio.Future[dict[str, Any]]] = deque()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://run-batch",
                                 timeout=None) as http:  # fmt: skip

        async def write_oldest() -> None:
            result = await pending.popleft()
            status = result["response"]["status_code"] if result["response"] else None
            kind = "invalid" if status is None else "ok" if status < 400 else "refused"
            counts["failed" if status is not None and status >= 500 else kind] += 1
            out.write(json.dumps(result, ensure_ascii=False) + "\n")
            out.flush()
            if on_done is not None:
                on_done()

        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            request = read_request(text, number, seen)
            if isinstance(request, dict):
                done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
                done.set_result(request)
                pending.append(done)
            else:
                pending.append(asyncio.ensure_future(send(http, *request)))
            if len(pending) >= max_concurrency:
                await write_oldest()
        while pending:
            await write_oldest()
    return counts


def add_batch_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--input-file", required=True,
                        help="the batch file, OpenAI's format (`-`: standard input)")  # fmt: skip
    parser.add_argument("-o", "--output-file", required=True,
                        help="where the results go, one line each in the input's order "
                        "(`-`: standard output)")  # fmt: skip
    parser.add_argument("--max-concurrency", type=int, default=64,
                        help="requests in flight at once (default 64)")  # fmt: skip
    parser.add_argument("--served-model-name", nargs="+", default=None,
                        help="the names the lines' `model` may give (default: the model's)")  # fmt: skip


def cmd_run_batch(args: argparse.Namespace) -> int:
    from roseinfer.config import EngineConfig
    from roseinfer.engine.client import EngineClient
    from roseinfer.engine.llm_engine import LLMEngine
    from roseinfer.loader import load_model
    from roseinfer.progress import progress
    from roseinfer.server.app import create_app
    from roseinfer.server.config import ServerConfig

    if args.max_concurrency < 1:
        raise ValueError(f"--max-concurrency must be >= 1, got {args.max_concurrency}")
    engine_config = EngineConfig.from_args(args)
    config = ServerConfig(served_model_names=tuple(args.served_model_name or ()))
    source = sys.stdin if args.input_file == "-" else open(args.input_file, encoding="utf-8")  # noqa: SIM115
    sink: TextIO | None = None
    result: list[Counter[str]] = []
    failure: list[BaseException] = []
    try:
        total = 0 if source is sys.stdin else sum(1 for line in source if line.strip())
        if source is not sys.stdin:
            source.seek(0)
        client = EngineClient(LLMEngine(load_model(engine_config), engine_config),
                              start_thread=False)  # fmt: skip
        app = create_app(client, config)
        sink = (
            sys.stdout if args.output_file == "-" else open(args.output_file, "w", encoding="utf-8")
        )  # noqa: SIM115
        bar = progress(total, "Running batch", "req", disable=source is sys.stdin)

        def run() -> None:  # the requests on this thread, the engine loop on the main one (serve's)
            try:
                assert sink is not None
                result.append(asyncio.run(run_batch(app, source, sink, args.max_concurrency,
                                                    lambda: bar.update(1))))  # fmt: skip
            except BaseException as e:  # raised again on the main thread
                failure.append(e)
            finally:
                client.shutdown(timeout=0)

        worker = threading.Thread(target=run, name="roseinfer-batch", daemon=True)
        worker.start()
        try:
            client.run_forever()
            worker.join()
        finally:
            bar.close()
    finally:
        for f in (source, sink):
            if f is not None and f not in (sys.stdin, sys.stdout):
                f.close()
    if failure:
        raise failure[0]
    counts = result[0]
    print(f"run-batch: {sum(counts.values())} lines: {counts['ok']} answered, {counts['refused']} "
          f"refused (4xx), {counts['failed']} failed (5xx), {counts['invalid']} not requests "
          "(see their `error`)", file=sys.stderr)  # fmt: skip
    return 0
