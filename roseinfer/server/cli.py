"""`roseinfer serve` / `python -m roseinfer.server`: parse flags, load the model, run uvicorn.

Engine flags come from `roseinfer.config.add_engine_args` (one flag per `EngineConfig` field,
shared with `roseinfer generate` and `LLM(...)`); server flags from `add_server_args`.

What can be checked without the model is checked first, so a mistake costs no load time: the
flags (`ServerConfig` and `EngineConfig`, exit 2), the device, and the address, which is bound
before the model loads (and handed to uvicorn). Each failure is one line on stderr and a non-zero exit, never a traceback. "serving
on" is logged once uvicorn listens.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING

from roseinfer.commands import CommandParser, add_log_level_arg
from roseinfer.config import EngineConfig, add_engine_args
from roseinfer.output.reasoning import REASONING_PARSERS

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

    from roseinfer.engine.client import EngineClient
    from roseinfer.server.config import ServerConfig

logger = logging.getLogger("roseinfer.server")


def add_server_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    g = parser.add_argument_group("server")
    g.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    g.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    g.add_argument(
        "--served-model-name",
        nargs="+",
        default=None,
        metavar="NAME",
        help="model names clients may send; responses carry the first (default: the model's)",
    )
    g.add_argument(
        "--api-key",
        default=os.environ.get("ROSEINFER_API_KEY"),
        help="require 'Authorization: Bearer KEY' on /v1/*, /generate, /tokenize and /detokenize; several keys "
        "comma-separated (default: $ROSEINFER_API_KEY)",
    )
    g.add_argument(
        "--api-key-file",
        default=None,
        metavar="FILE",
        help="API keys, one per line (blank lines and # comments skipped), with --api-key's",
    )
    g.add_argument(
        "--allowed-origins",
        nargs="+",
        default=None,
        metavar="ORIGIN",
        help="CORS: origins (scheme://host[:port], or *) whose pages may call the API "
        "(default: none)",
    )
    g.add_argument(
        "--max-waiting-requests",
        type=int,
        default=None,
        help="answer 503 + Retry-After while this many requests wait for a seat beyond the "
        "--max-num-seqs running ones (>= 1; default: no limit)",
    )
    g.add_argument(
        "--max-request-bytes",
        type=int,
        default=4 << 20,
        help="larger request bodies are refused with 413 before parsing (0: no limit; default 4 MiB)",
    )
    g.add_argument(
        "--stream-interval",
        type=int,
        default=1,
        help="streamed tokens per chunk after a request's first (default 1: every token); larger "
        "values cost the server and its clients less CPU per token, as vLLM's and SGLang's flag",
    )
    g.add_argument(
        "--reasoning-parser",
        choices=REASONING_PARSERS,
        default=None,
        help="read a reasoning model's thinking (<think>...</think>) apart from its chat answers, "
        "into `reasoning` and `reasoning_content`, as vLLM's flag (deepseek_r1: everything "
        "before </think>; qwen3: a block the answer opens with); default: none",
    )
    g.add_argument(
        "--request-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a client must send a request's head, and then its body, within this many seconds "
        "each, and read its response without stalling this long: a late head or a stalled read "
        "ends the connection, a late body is a 408 (0: no limit; default 30)",
    )
    g.add_argument(
        "--responses-store-size",
        type=int,
        default=1000,
        metavar="N",
        help="/v1/responses keeps this many responses in memory for GET /v1/responses/{id} and "
        "previous_response_id, the least recently used dropped first (0: none; default 1000)",
    )
    g.add_argument(
        "--responses-store-mib",
        type=int,
        default=256,
        metavar="MIB",
        help="and at most this many MiB of their JSON (default 256)",
    )
    g.add_argument(
        "--conversations-store-size",
        type=int,
        default=1000,
        metavar="N",
        help="/v1/conversations keeps this many conversations in memory, the least recently "
        "used dropped first (0: none; default 1000)",
    )
    g.add_argument(
        "--conversations-store-mib",
        type=int,
        default=256,
        metavar="MIB",
        help="and at most this many MiB of their items' JSON (default 256)",
    )
    add_log_level_arg(g, default="info")
    g.add_argument(
        "--log-stats-interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="log a status line (throughput, running and waiting requests, KV cache use) this "
        "often while busy, as vLLM's (0: never; default 10)",
    )
    return parser


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = CommandParser(
        allow_abbrev=False,
        prog=prog or "python -m roseinfer.server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_server_args(parser)
    add_engine_args(parser, request_defaults=True)
    return parser


def serve_main(argv: list[str] | None = None, prog: str | None = None) -> int:
    args = build_parser(prog).parse_args(argv)
    try:  # the flags first: a bad value costs no load time (exit 2, as argparse's errors)
        server_config = server_config_from_args(args)
        engine_config = EngineConfig.from_args(args)
    except ValueError as e:
        print(f"roseinfer serve: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # an unreadable --api-key-file
        print(f"roseinfer serve: error: {e}", file=sys.stderr)
        return 1
    level = server_config.log_level
    logging.basicConfig(level=level.upper(), format="%(levelname)s %(name)s: %(message)s")
    host, port = server_config.host, server_config.port
    from roseinfer.loader import check_device  # torch: not for --help

    try:
        check_device(engine_config.device, "--device")
        sock = bind_socket(host, port)
    except (ValueError, OSError) as e:
        print(f"roseinfer serve: error: {e}", file=sys.stderr)
        return 1
    try:
        import uvicorn

        from roseinfer.engine.client import EngineClient
        from roseinfer.engine.llm_engine import LLMEngine
        from roseinfer.loader import load_model
        from roseinfer.server.app import create_app
        from roseinfer.server.stats_log import StatsLogger

        loaded = load_model(engine_config)
        core = LLMEngine(loaded, engine_config)
        client = EngineClient(core, start_thread=False)  # create_app sets its stream_interval
        app = create_app(client, server_config)
        frozen = freeze_startup_heap()
    except (ValueError, OSError) as e:  # no such model, unreadable weights, or a flag
        # combination the backend refuses when it is chosen (select_backend)
        sock.close()
        print(f"roseinfer serve: error: {e}", file=sys.stderr)
        return 1
    names = server_config.served_model_names or (loaded.name,)
    logger.info(
        "model %s (served as %s), dtype %s, device %s, context %d tokens",
        loaded.name, ", ".join(repr(n) for n in names), str(loaded.dtype).removeprefix("torch."), engine_config.device,
        core.max_model_len,
    )  # fmt: skip
    logger.info(
        "KV cache: %d blocks x %d tokens = %d tokens; max %d running requests, %d tokens per step "
        "(%d for a long prompt's chunk)",
        core.block_manager.num_blocks, engine_config.block_size, core.runner.capacity_tokens,
        engine_config.max_num_seqs, engine_config.max_num_batched_tokens,
        max(engine_config.max_num_batched_tokens, engine_config.lone_prefill_tokens),
    )  # fmt: skip
    if changed := core.sampling_defaults.changed():  # vLLM says so too: answers differ
        logger.info(
            "sampling defaults from the model's %s, for requests that leave them out: %s "
            "(--generation-config none: OpenAI's)", core.sampling_defaults.origin,
            ", ".join(f"{name} {value}" for name, value in changed.items()),
        )  # fmt: skip
    logger.info("%d objects alive after loading left out of the garbage collector's scans", frozen)
    bound = sock.getsockname()[1]  # --port 0: the one the system picked
    key = ", API key required" if server_config.api_keys else ""
    shown = f"[{host}]" if ":" in host else host
    serving = f"serving on http://{shown}:{bound} (OpenAI API under /v1){key}"
    # The engine loop runs on this (main) thread, which loaded the model, and uvicorn on
    # another. On any other thread, while this one keeps its OpenMP workers, each parallel
    # region first wakes a sleeping worker (`roseinfer.engine.openmp`; before the decoder
    # stack a decode step took 25 ms here and 45 on a worker thread, possibly the same cause).
    server = uvicorn.Server(uvicorn_config(app, host, port, level, server_config.request_timeout))

    def stop(signum: int, _: object) -> None:
        # SIGTERM, and Ctrl-C alike: the engine loop ends its step and fails what runs ("server
        # is shutting down": an error event, then [DONE]); a KeyboardInterrupt out of the loop
        # had skipped that, and the streams hung until uvicorn cut them 5 s later. A second
        # Ctrl-C interrupts at once. From a thread: the handler runs on the main thread, which
        # may hold the wake event's lock it would take (a deadlock).
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        threading.Thread(target=client.shutdown, kwargs={"timeout": 0}, daemon=True).start()

    handlers = {signal.SIGTERM: signal.signal(signal.SIGTERM, stop)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where ignored
        handlers[signal.SIGINT] = signal.signal(signal.SIGINT, stop)
    http = threading.Thread(target=server.run, args=([sock],), name="roseinfer-http", daemon=True)
    http.start()
    watcher = threading.Thread(target=_watch, args=(http, server, client, serving), daemon=True)
    watcher.start()
    stats = None
    if server_config.log_stats_interval > 0:
        stats = StatsLogger(app.state.metrics, server_config.log_stats_interval)
        stats.start()
    try:
        client.run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        if stats is not None:
            stats.stop()
        try:
            server.should_exit = True
            http.join(10)
            client.shutdown(timeout=0)
        finally:  # as found (serve_main may run in a process); a second Ctrl-C comes here too
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
    return 0 if server.started else 1


def uvicorn_config(app: FastAPI, host: str, port: int, log_level: str,
                   request_timeout: float = 30.0) -> uvicorn.Config:  # fmt: skip
    """uvicorn's settings: uvloop's event loop where it is installed (Linux and macOS), and h11
    for HTTP whatever else is installed.

    uvloop: at the end of every step the engine thread hands the step's events to the HTTP
    thread's loop (`call_soon_threadsafe`). asyncio wakes its loop by a socket write that lets
    go of the GIL, and the HTTP thread, woken, takes it for its whole turn (a step's 32
    streams' chunks) while the engine thread waits; uvloop wakes it without letting go. Served,
    32 streams, the engine loop spent 0.37-0.64 s outside its steps per 16,384 tokens with
    asyncio and 0.15-0.20 s with uvloop (BENCHMARKS.md, session 49). HTTP stays h11, which
    uvicorn would swap for httptools where that is installed: httptools answers some malformed
    requests differently (an HTTP/1.1 request without Host is served), and the HTTP thread's
    time was within noise of h11's (0.73-0.85 s against 0.82-0.84 s). `request_timeout`: the
    seconds a request head may take (`http_timeouts.py`; 0: no limit)."""
    import importlib.util

    import uvicorn

    from roseinfer.server.http_timeouts import h11_with_deadlines

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        loop="uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        http=h11_with_deadlines(request_timeout) if request_timeout > 0 else "h11",
        timeout_graceful_shutdown=5,
    )


def freeze_startup_heap() -> int:
    """Collect, then move every object alive into the garbage collector's permanent generation
    (as vLLM's engine does after startup): a full collection of what loading left (~370,000
    objects with SmolLM2) holds the GIL for 175-185 ms, every stream stalled, and two came
    within 600 served requests (BENCHMARKS.md, session 28). Objects made while serving are
    collected as before. Returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def server_config_from_args(args: argparse.Namespace) -> ServerConfig:
    """The server flags as a `ServerConfig` (keys read from --api-key-file); ValueError or
    OSError with one line when a value is wrong or the key file cannot be read."""
    from roseinfer.server.config import ServerConfig

    keys = [k.strip() for k in (args.api_key or "").split(",") if k.strip()]
    if args.api_key is not None and not keys:  # "" or ",": not an open server by mistake
        raise ValueError(
            f"--api-key (or $ROSEINFER_API_KEY) holds no key: {args.api_key!r} (to serve without "
            "a key, give no --api-key and unset $ROSEINFER_API_KEY)"
        )
    if args.api_key_file is not None:
        try:
            with open(args.api_key_file, encoding="utf-8") as f:
                lines = [line.strip() for line in f]
        except OSError as e:
            raise OSError(f"--api-key-file {args.api_key_file}: {e.strerror or e}") from None
        file_keys = [line for line in lines if line and not line.startswith("#")]
        if not file_keys:
            raise ValueError(f"--api-key-file {args.api_key_file} holds no key")
        keys += file_keys
    return ServerConfig(
        host=args.host, port=args.port, served_model_names=tuple(args.served_model_name or ()),
        api_keys=tuple(keys), allowed_origins=tuple(args.allowed_origins or ()),
        max_waiting_requests=args.max_waiting_requests, max_request_bytes=args.max_request_bytes,
        log_level=args.log_level, log_stats_interval=args.log_stats_interval,
        stream_interval=args.stream_interval, responses_store_size=args.responses_store_size,
        responses_store_mib=args.responses_store_mib,
        conversations_store_size=args.conversations_store_size,
        conversations_store_mib=args.conversations_store_mib, request_timeout=args.request_timeout,
        reasoning_parser=args.reasoning_parser,
    )  # fmt: skip


def bind_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound (not yet listening: connections are refused until uvicorn
    listens on it). OSError with one clear line if the address is taken or invalid."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except OSError as e:
        raise OSError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    sock.set_inheritable(True)
    return sock


def _watch(
    http: threading.Thread, server: uvicorn.Server, client: EngineClient, serving: str
) -> None:
    """Log `serving` once uvicorn listens; stop the engine loop once uvicorn has exited."""
    while http.is_alive() and not server.started:
        http.join(0.05)
    if server.started:
        logger.info(serving)
    http.join()
    client.shutdown(timeout=0)
