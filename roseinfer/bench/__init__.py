"""Benchmarks: `roseinfer bench serve|throughput|scheduler` (see BENCHMARKS.md).

- `serve`: an HTTP load generator for any OpenAI-compatible server (vLLM's metric names); its
  prompts, load client and reporting are `serve_prompts`, `serve_client` and `serve_report`.
- `throughput`: offline throughput on a seeded random workload (nano-vllm's protocol, scaled).
- `scheduler`: the seeds' `python -m roseinfer.benchmark_scheduler` (now `bench/scheduler.py`, with
  `scheduler_workload` and `scheduler_runs`).
- `trace.StepTracer`: an opt-in per-step record of the engine loop, saved as JSON or a PNG.

Benchmarks measure; tests only check that these tools run and report well-formed results.
"""
