"""roseinfer: a small, readable LLM inference engine and OpenAI-compatible server."""

from roseinfer.config import EngineConfig, SamplingParams
from roseinfer.engine import InferenceEngine, InferenceSession, OfflineScheduler, OnlineScheduler
from roseinfer.llm import LLM, RequestOutput

__all__ = [
    "LLM",
    "EngineConfig",
    "InferenceEngine",
    "InferenceSession",
    "OfflineScheduler",
    "OnlineScheduler",
    "RequestOutput",
    "SamplingParams",
]
__version__ = "0.1.0"
