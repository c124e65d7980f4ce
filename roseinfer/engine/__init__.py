"""The engine stages: scheduler -> block manager -> model runner, driven by `LLMEngine`.

Names are imported lazily (PEP 562), so `roseinfer.engine.scheduler` and
`roseinfer.engine.block_manager` import without torch.
"""

from __future__ import annotations

from roseinfer.lazy import lazy_getattr

EXPORTS = {
    **dict.fromkeys(("LLMEngine", "StepOutput"), "roseinfer.engine.llm_engine"),
    "InvalidRequestError": "roseinfer.engine.requests",
    "EngineClient": "roseinfer.engine.client",
    # The seeds' classes, kept at their old import path (`from roseinfer.engine import ...`).
    **dict.fromkeys(
        ("InferenceEngine", "InferenceSession", "OfflineScheduler", "OnlineScheduler"),
        "roseinfer.compat",
    ),
}

__all__ = sorted(EXPORTS)
__getattr__ = lazy_getattr(__name__, EXPORTS)
