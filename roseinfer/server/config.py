"""`ServerConfig`: the server's own settings, one field per `roseinfer serve` flag
(`server/cli.py`, `server_config_from_args`), checked here once."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    # Names clients may send; responses carry the first (default: the loaded model's name).
    served_model_names: tuple[str, ...] = ()
    api_keys: tuple[str, ...] = ()  # any of them opens /v1/* and /generate; none: open
    allowed_origins: tuple[str, ...] = ()  # CORS: origins whose pages may call the API; "*": any
    max_waiting_requests: int | None = None  # None: unbounded
    max_request_bytes: int = 4 << 20
    log_level: str = "info"
    log_stats_interval: float = 10.0  # seconds between status lines while busy; 0: none
    stream_interval: int = 1  # streamed tokens per chunk after the first (EngineClient)

    def __post_init__(self) -> None:
        if any(not name for name in self.served_model_names):
            raise ValueError("served model names must not be empty")
        if any(not key or key != key.strip() for key in self.api_keys):
            raise ValueError("API keys must be non-empty, without surrounding spaces")
        for origin in self.allowed_origins:
            if origin != "*" and not origin.startswith(("http://", "https://")):
                raise ValueError(
                    f"allowed origin {origin!r} must be '*' or scheme://host[:port] (http or https)"
                )
