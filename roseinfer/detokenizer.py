"""The seeds' import path of the incremental detokenizer (it lives in `roseinfer.output`)."""

from roseinfer.output.detokenizer import IncrementalDetokenizer

__all__ = ["IncrementalDetokenizer"]
