"""The seeds' import path of `SchedulerManager` (a thin wrapper in `roseinfer.compat` over
`roseinfer.engine.client.EngineClient`, which the server uses)."""

from roseinfer.compat import SchedulerManager
from roseinfer.engine.client import EngineEvent

__all__ = ["EngineEvent", "SchedulerManager"]
