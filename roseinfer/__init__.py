"""roseinfer: a small, readable LLM inference engine and OpenAI-compatible server.

Names are imported lazily (PEP 562): `import roseinfer` costs nothing, and the plain-Python
core (`roseinfer.engine.scheduler`, `roseinfer.engine.block_manager`) imports without torch.
"""

from __future__ import annotations

from roseinfer.lazy import lazy_getattr

__version__ = "0.1.0"

_EXPORTS = {
    "LLM": "roseinfer.llm",
    "EngineConfig": "roseinfer.config",
    "SamplingParams": "roseinfer.config",
    "RequestOutput": "roseinfer.outputs",
    "CompletionOutput": "roseinfer.outputs",
    "EngineClient": "roseinfer.engine.client",
    "InferenceEngine": "roseinfer.compat",
    "InferenceSession": "roseinfer.compat",
    "OfflineScheduler": "roseinfer.compat",
    "OnlineScheduler": "roseinfer.compat",
    "SchedulerManager": "roseinfer.server.manager",
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
