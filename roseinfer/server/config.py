"""`ServerConfig`: the server's own settings, one field per `roseinfer serve` flag
(`server/cli.py`, `server_config_from_args`), checked here once; errors name the flag."""

from __future__ import annotations

from dataclasses import dataclass

from roseinfer.checks import is_int, is_number
from roseinfer.commands import LOG_LEVELS
from roseinfer.output.reasoning import REASONING_PARSERS, ReasoningParserName


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000  # 0: one the system picks
    # Names clients may send; responses carry the first (default: the loaded model's name).
    served_model_names: tuple[str, ...] = ()
    api_keys: tuple[str, ...] = ()  # any of them opens /v1/* and /generate; none: open
    allowed_origins: tuple[str, ...] = ()  # CORS: origins whose pages may call the API; "*": any
    max_waiting_requests: int | None = None  # >= 1; None: unbounded
    max_request_bytes: int = 4 << 20  # 0: no limit
    log_level: str = "info"
    log_stats_interval: float = 10.0  # seconds between status lines while busy; 0: none
    # Streamed tokens per chunk after a request's first: `create_app` sets its EngineClient's.
    stream_interval: int = 1
    responses_store_size: int = 1000  # /v1/responses kept in memory; 0: none
    responses_store_mib: int = 256  # and at most this much of their JSON
    conversations_store_size: int = 1000  # /v1/conversations kept in memory; 0: none
    conversations_store_mib: int = 256  # and at most this much of their items' JSON
    # seconds for a request's head, then its body, and a stalled read; 0: no limit
    request_timeout: float = 30.0
    # a reasoning model's thinking read apart from chat answers (`reasoning`); None: none
    reasoning_parser: ReasoningParserName | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host:
            raise ValueError(f"--host must be a host name or address, got {self.host!r}")
        if not is_int(self.port) or not 0 <= self.port <= 65535:
            raise ValueError(f"--port must be in 0..65535, got {self.port!r}")
        if any(not name for name in self.served_model_names):
            raise ValueError("served model names must not be empty")
        if len(set(self.served_model_names)) != len(self.served_model_names):
            raise ValueError(f"--served-model-name lists a name twice: {self.served_model_names}")
        if any(not key or key != key.strip() for key in self.api_keys):
            raise ValueError("API keys must be non-empty, without surrounding spaces")
        for origin in self.allowed_origins:
            # A browser's Origin header has no path, not even "/": one here would match nothing.
            if origin != "*" and (
                not origin.startswith(("http://", "https://")) or "/" in origin.split("://", 1)[1]
            ):
                raise ValueError(
                    f"allowed origin {origin!r} must be '*' or scheme://host[:port] (http or https)"
                )
        limit = self.max_waiting_requests
        if limit is not None and (not is_int(limit) or limit < 1):
            # 0 would answer every request 503: no flag value means that.
            raise ValueError(
                f"--max-waiting-requests must be >= 1 (leave it out for no limit), got {limit!r}"
            )
        if not is_int(self.max_request_bytes) or self.max_request_bytes < 0:
            raise ValueError(
                f"--max-request-bytes must be >= 0 (0: no limit), got {self.max_request_bytes!r}"
            )
        if self.log_level not in LOG_LEVELS:
            raise ValueError(
                f"--log-level must be one of {', '.join(LOG_LEVELS)}, got {self.log_level!r}"
            )
        interval = self.log_stats_interval
        if not is_number(interval) or interval < 0:  # is_number: finite
            raise ValueError(
                f"--log-stats-interval must be a number of seconds >= 0, got {interval!r}"
            )
        if not is_int(self.stream_interval) or self.stream_interval < 1:
            raise ValueError(f"--stream-interval must be >= 1, got {self.stream_interval!r}")
        for flag, size in (("--responses-store-size", self.responses_store_size),
                           ("--conversations-store-size", self.conversations_store_size)):  # fmt: skip
            if not is_int(size) or size < 0:
                raise ValueError(f"{flag} must be >= 0, got {size!r}")
        if not is_number(self.request_timeout) or self.request_timeout < 0:
            raise ValueError(
                f"--request-timeout must be a number of seconds >= 0, got {self.request_timeout!r}"
            )
        if self.reasoning_parser is not None and self.reasoning_parser not in REASONING_PARSERS:
            raise ValueError(f"--reasoning-parser must be one of {', '.join(REASONING_PARSERS)}, "
                             f"got {self.reasoning_parser!r}")  # fmt: skip
        for flag, mib in (("--responses-store-mib", self.responses_store_mib),
                          ("--conversations-store-mib", self.conversations_store_mib)):  # fmt: skip
            if not is_int(mib) or mib < 1:
                raise ValueError(f"{flag} must be >= 1, got {mib!r}")
