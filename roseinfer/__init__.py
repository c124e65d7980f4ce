"""roseinfer: a small, readable LLM inference engine and OpenAI-compatible server.

Names are imported lazily (PEP 562): `import roseinfer` costs nothing, and the plain-Python
core (`roseinfer.engine.scheduler`, `roseinfer.engine.block_manager`) imports without torch.
"""

from __future__ import annotations

from roseinfer import engine
from roseinfer.lazy import lazy_getattr

__version__ = "0.1.0"

_EXPORTS = {
    "LLM": "roseinfer.llm",
    "EngineConfig": "roseinfer.config",
    **dict.fromkeys(("SamplingParams", "StructuredOutputs"), "roseinfer.sampling_params"),
    "PoolingParams": "roseinfer.pooling_params",
    **dict.fromkeys(
        ("RequestOutput", "CompletionOutput", "EmbeddingOutput", "EmbeddingRequestOutput"),
        "roseinfer.outputs",
    ),
    "SchedulerManager": "roseinfer.compat",
    **engine.EXPORTS,  # LLMEngine, EngineClient and the seeds' classes
}

__all__ = sorted(_EXPORTS)
__getattr__ = lazy_getattr(__name__, _EXPORTS)
