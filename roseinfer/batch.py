"""`roseinfer run-batch`: a file of OpenAI batch requests run offline, vLLM's `run-batch`.

The input is OpenAI's batch file format, one JSON object a line:

    {"custom_id": "q1", "method": "POST", "url": "/v1/chat/completions", "body": {...}}

and the output one line each, in the input's order:

    {"id": "batch_req_...", "custom_id": "q1", "response": {"status_code": 200,
     "request_id": "chatcmpl-...", "body": {...}}, "error": null}

Each body goes through the server's own app (`create_app`, in process, no socket), so it is
read, checked, run and answered exactly as `roseinfer serve` would: a refused request is its
4xx in `response` (its body the error), and the others run on. A line that makes no request
(not UTF-8 or not JSON as the server reads JSON, no `custom_id`, one seen before, another
method or URL, `stream: true`, a response's `background: true`) gets `error` (`{"code",
"message"}`) and no `response`, as OpenAI's error lines (vLLM's put a refused request's error
there too, its `response.body` null; here, as OpenAI's, it is the 4xx's body). Up to
`--max-concurrency` requests are in flight at once, so the engine batches them as it batches a
server's clients; a slow request holds back only the writing of the lines after it (up to
`READ_AHEAD_LINES` x the concurrency of them, `READ_AHEAD_BYTES` of their output), not their
running.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # imported where used: `roseinfer --help` needs neither
    import httpx
    from fastapi import FastAPI

URLS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses",
        "/score", "/v1/score", "/rerank", "/v1/rerank")  # fmt: skip
# Lines started but not yet written (behind a slower one): at most this many times the
# concurrency, and their finished output lines at most this many bytes, before reading waits.
READ_AHEAD_LINES = 64
READ_AHEAD_BYTES = 256 << 20

Result = dict[str, Any]


def line_error(custom_id: str | None, code: str, message: str) -> Result:
    return {"id": f"batch_req_{uuid.uuid4().hex}", "custom_id": custom_id, "response": None,
            "error": {"code": code, "message": message}}  # fmt: skip


def read_request(raw: bytes, number: int, seen: set[str]) -> tuple[str, str, dict] | Result:
    """A line's (custom_id, url, body), or the error line it gets instead (`number`: from 1).
    Read as the server reads a body (`read_json`): a key given twice, NaN or a lone surrogate
    is refused by path, where `json.loads` would have kept the last value or failed later."""
    from roseinfer.server.errors import APIError
    from roseinfer.server.jsonbody import read_json

    try:
        line = read_json(raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw)
    except APIError as e:
        return line_error(None, e.code or "invalid_json", f"line {number}: {e.message}")
    if not isinstance(line, dict):
        return line_error(None, "invalid_json", f"line {number}: not a JSON object")
    custom_id = line.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        return line_error(None, "missing_custom_id",
                          f"line {number}: custom_id must be a non-empty string")  # fmt: skip
    if custom_id in seen:
        return line_error(
            custom_id,
            "duplicate_custom_id",
            f"line {number}: custom_id {custom_id!r} was used by an earlier line",
        )
    seen.add(custom_id)
    unknown = sorted(set(line) - {"custom_id", "method", "url", "body"})
    if unknown:
        return line_error(
            custom_id,
            "invalid_request",
            f"line {number}: {unknown[0]!r} is not a field of a batch line",
        )
    if line.get("method") != "POST":
        return line_error(
            custom_id,
            "invalid_method",
            f'line {number}: method must be "POST", got {line.get("method")!r}',
        )
    url = line.get("url")
    if url not in URLS:
        return line_error(
            custom_id,
            "invalid_url",
            f"line {number}: url must be one of {', '.join(URLS)}, got {url!r}",
        )
    body = line.get("body")
    if not isinstance(body, dict):
        return line_error(custom_id, "invalid_request", f"line {number}: body must be an object")
    if body.get("stream") is True:
        return line_error(custom_id, "invalid_request",
                          f"line {number}: stream is not supported in a batch")  # fmt: skip
    if url == "/v1/responses" and body.get("background") is True:  # its answer: "queued"
        return line_error(custom_id, "invalid_request",
                          f"line {number}: background is not supported in a batch (a line's "
                          "answer is the finished response)")  # fmt: skip
    return custom_id, url, body


async def send(http: httpx.AsyncClient, custom_id: str, url: str, body: dict) -> Result:
    """One request through the app: its status and its JSON answer (or error). The body is
    sent as JSON text again: it passed `read_json`, so it holds nothing that text cannot."""
    r = await http.post(url, content=json.dumps(body).encode(),
                        headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        answer = r.json()
    except ValueError:  # (every answer of these routes is JSON unless streamed, refused above)
        return line_error(custom_id, "invalid_response", f"HTTP {r.status_code}: {r.text[:200]}")
    request_id = answer.get("id") if isinstance(answer, dict) else None
    if not isinstance(request_id, str):  # (an error body has none)
        request_id = f"req_{uuid.uuid4().hex}"
    response = {"status_code": r.status_code, "request_id": request_id, "body": answer}
    return {"id": f"batch_req_{uuid.uuid4().hex}", "custom_id": custom_id,
            "response": response, "error": None}  # fmt: skip


def outcome(result: Result) -> str:
    """`ok` (2xx), `refused` (4xx), `failed` (5xx) or `invalid` (a line that made no request)."""
    if result["response"] is None:
        return "invalid"
    status = result["response"]["status_code"]
    return "ok" if status < 400 else "refused" if status < 500 else "failed"


async def run_batch(app: FastAPI, lines: Iterable[bytes], out: TextIO, max_concurrency: int,
                    on_done: Callable[[], object] | None = None) -> Counter[str]:  # fmt: skip
    """Run every non-blank line of `lines` through `app`, writing each output line to `out` in
    order as soon as the lines before it are written; at most `max_concurrency` requests in
    flight, the next line read only when one may start (so no body waits in memory). Lines are
    read on a worker thread: standard input waiting for more holds back nothing already done.
    Counts `outcome`s."""
    import httpx

    counts: Counter[str] = Counter()
    seen: set[str] = set()
    slots = asyncio.Semaphore(max_concurrency)
    order: asyncio.Queue[asyncio.Future[tuple[str, str]] | None] = asyncio.Queue()
    held = [0, 0]  # output lines done or running but not written: [their number, bytes done]
    written = asyncio.Event()
    # raise_app_exceptions=False: a handler's bug is that request's 500, as when served
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)

    def done(result: Result) -> tuple[str, str]:
        text = json.dumps(result, ensure_ascii=False) + "\n"
        held[1] += len(text)
        return outcome(result), text

    async def run(http: httpx.AsyncClient, custom_id: str, url: str, body: dict) -> tuple[str, str]:
        try:  # (its slot taken by the reader)
            return done(await send(http, custom_id, url, body))
        except Exception as e:  # a failure of the transport, not of the request's handler
            return done(line_error(custom_id, "request_failed", f"{type(e).__name__}: {e}"))
        finally:
            slots.release()

    async def writer() -> None:
        while (future := await order.get()) is not None:
            kind, text = await future
            counts[kind] += 1
            held[0] -= 1
            held[1] -= len(text)
            out.write(text)
            out.flush()
            written.set()
            if on_done is not None:
                on_done()

    async def reader(http: httpx.AsyncClient) -> None:
        source = iter(lines)
        number = 0
        while True:
            # behind a slow line: at most so many lines, and bytes of their output, held
            while held[0] > READ_AHEAD_LINES * max_concurrency or held[1] > READ_AHEAD_BYTES:
                written.clear()
                await written.wait()
            await slots.acquire()
            raw = await asyncio.to_thread(next, source, None)
            if raw is None:
                slots.release()
                return
            number += 1
            request = read_request(raw, number, seen) if raw.strip() else None
            if not isinstance(request, tuple):
                slots.release()
                if request is None:  # a blank line
                    continue
                future: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
                future.set_result(done(request))
            else:
                future = asyncio.ensure_future(run(http, *request))
            held[0] += 1
            order.put_nowait(future)

    async with httpx.AsyncClient(transport=transport, base_url="http://run-batch",
                                 timeout=None) as http:  # fmt: skip
        writing = asyncio.ensure_future(writer())
        try:
            await reader(http)
            order.put_nowait(None)
            await writing
        finally:  # stopped early (Ctrl-C, a closed output): nothing left running unread
            writing.cancel()
            left = []
            while not order.empty():
                if (future := order.get_nowait()) is not None:
                    future.cancel()
                    left.append(future)
            await asyncio.gather(writing, *left, return_exceptions=True)
    return counts


def add_batch_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--input-file", required=True,
                        help="the batch file, OpenAI's format (`-`: standard input)")  # fmt: skip
    parser.add_argument("-o", "--output-file", required=True,
                        help="where the results go, one line each in the input's order "
                        "(`-`: standard output)")  # fmt: skip
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        help="requests in flight at once (default: twice --max-num-seqs)",
    )
    parser.add_argument(
        "--served-model-name",
        nargs="+",
        default=None,
        help="the names the lines' `model` may give (default: the model's)",
    )
    parser.add_argument("--max-request-bytes", type=int, default=4 << 20,
                        help="largest body a line may hold, as serve's (default 4 MiB; 0: no "
                        "limit)")  # fmt: skip


def _check_paths(input_file: str, output_file: str) -> None:
    """Refuse, before any model loads, an output that cannot be written or that is the input
    (opened for writing, it would be emptied before it is read)."""
    if output_file == "-":
        return
    if os.path.isdir(output_file):
        raise OSError(f"the output file {output_file} is a folder")
    if input_file != "-" and os.path.exists(output_file) and os.path.exists(input_file):
        if os.path.samefile(input_file, output_file):
            raise ValueError(f"the output file is the input file ({output_file}): writing the "
                             "results would empty it before it is read")  # fmt: skip
    folder = os.path.dirname(os.path.abspath(output_file))
    writable = os.access(output_file, os.W_OK) if os.path.exists(output_file) else (
        os.path.isdir(folder) and os.access(folder, os.W_OK))  # fmt: skip
    if not writable:
        raise OSError(f"cannot write the output file {output_file}")


def cmd_run_batch(args: argparse.Namespace) -> int:
    # What needs no model is refused before the imports below, which take seconds (torch's).
    if args.max_concurrency is not None and args.max_concurrency < 1:
        raise ValueError(f"--max-concurrency must be >= 1, got {args.max_concurrency}")
    _check_paths(args.input_file, args.output_file)
    from_stdin = args.input_file == "-"
    source = sys.stdin.buffer if from_stdin else open(args.input_file, "rb")  # noqa: SIM115
    sink: TextIO | None = None
    counts: Counter[str] = Counter()
    written = [0]  # lines written so far (told on Ctrl-C)
    failure: list[BaseException] = []
    try:
        from roseinfer.config import EngineConfig
        from roseinfer.engine.client import EngineClient
        from roseinfer.engine.llm_engine import LLMEngine
        from roseinfer.loader import load_model
        from roseinfer.progress import progress
        from roseinfer.server.app import create_app
        from roseinfer.server.config import ServerConfig

        engine_config = EngineConfig.from_args(args)
        concurrency = args.max_concurrency or 2 * engine_config.max_num_seqs  # unset: vLLM's
        config = ServerConfig(served_model_names=tuple(args.served_model_name or ()),
                              max_request_bytes=args.max_request_bytes)  # fmt: skip
        total = 0
        if source.seekable():  # (a pipe is read once: no count, no bar's total)
            total = sum(1 for line in source if line.strip())
            source.seek(0)
        client = EngineClient(LLMEngine(load_model(engine_config), engine_config),
                              start_thread=False)  # fmt: skip
        app = create_app(client, config)
        # UTF-8 either way (standard output's own encoding may not hold every character)
        to_stdout = args.output_file == "-"
        sink = open(sys.stdout.fileno() if to_stdout else args.output_file, "w",  # noqa: SIM115
                    encoding="utf-8", closefd=not to_stdout)  # fmt: skip
        bar = progress(total, "Running batch", "req", disable=not total)

        def done() -> None:
            written[0] += 1
            bar.update(1)

        def run() -> None:  # the requests on this thread, the engine loop on the main one (serve's)
            try:
                assert sink is not None
                counts.update(asyncio.run(run_batch(app, source, sink, concurrency, done)))
            except BaseException as e:  # raised again on the main thread
                failure.append(e)
            finally:
                client.shutdown(timeout=0)

        worker = threading.Thread(target=run, name="roseinfer-batch", daemon=True)
        worker.start()
        try:
            client.run_forever()
            worker.join()
        except KeyboardInterrupt:
            print(f"run-batch: stopped after {written[0]} lines; the output holds them, in order",
                  file=sys.stderr)  # fmt: skip
            raise
        finally:
            bar.close()
            client.shutdown(timeout=0)  # (after Ctrl-C: the requests running get their errors)
    finally:
        for f in (source, sink):
            if f is not None and f is not sys.stdin.buffer:
                f.close()  # (standard output's file stays open: closefd=False)
    if failure:
        raise failure[0]
    print(f"run-batch: {sum(counts.values())} lines: {counts['ok']} answered, "
          f"{counts['refused']} refused (4xx), {counts['failed']} failed (5xx), "
          f"{counts['invalid']} not requests (see their `error`)", file=sys.stderr)  # fmt: skip
    if counts["failed"]:
        print("run-batch: the server failed some requests (5xx): their `response.body` says why",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0
