"""Import path kept for users: the stop-string checker lives in `roseinfer.output`."""

from roseinfer.output.stop import StopStringChecker

__all__ = ["StopStringChecker"]
