"""Structured output: grammars compiled and enforced by llguidance (BENCHMARKS.md, session 10,
"grammar engines")."""
