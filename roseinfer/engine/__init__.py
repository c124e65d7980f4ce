"""The engine stages: scheduler -> block manager -> model runner, and the seeds' front ends."""

from roseinfer.engine.inference import InferenceEngine, InferenceSession
from roseinfer.engine.llm_engine import InvalidRequestError, LLMEngine, StepOutput
from roseinfer.engine.schedulers import OfflineScheduler, OnlineScheduler

__all__ = [
    "InferenceEngine",
    "InferenceSession",
    "InvalidRequestError",
    "LLMEngine",
    "OfflineScheduler",
    "OnlineScheduler",
    "StepOutput",
]
