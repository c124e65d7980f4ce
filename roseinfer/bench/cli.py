"""`roseinfer bench {serve,throughput,scheduler}`."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from roseinfer.bench import serve, throughput

USER_ERRORS = (ValueError, FileNotFoundError, OSError, json.JSONDecodeError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="roseinfer bench",
        description="Benchmarks. Numbers measured on the reference machine are in BENCHMARKS.md.",
    )
    parser.add_argument("--log-level", default="WARNING")
    sub = parser.add_subparsers(dest="bench", required=True, metavar="{serve,throughput,scheduler}")
    p = sub.add_parser(
        "serve",
        help="load-test an OpenAI-compatible server (vLLM's metrics; --concurrency sweeps and plots)",
        description=serve.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_args(p)
    p.set_defaults(func=serve.serve_main)
    p = sub.add_parser(
        "throughput",
        help="offline throughput on a seeded random workload (nano-vllm's protocol, scaled)",
        description=throughput.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    throughput.add_args(p)
    p.set_defaults(func=throughput.throughput_main)
    sub.add_parser(
        "scheduler",
        help="the seeds' scheduler benchmark (python -m roseinfer.benchmark_scheduler)",
        add_help=False,
    )
    return parser


def bench_main(argv: list[str]) -> int:
    if argv and argv[0] == "scheduler":
        from roseinfer.bench.scheduler import main

        return main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except USER_ERRORS as e:
        print(f"roseinfer bench {args.bench}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(bench_main(sys.argv[1:]))
