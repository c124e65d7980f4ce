"""`roseinfer bench {serve,throughput,scheduler}`."""

from __future__ import annotations

import argparse
import json
import sys

from roseinfer.bench import serve, throughput
from roseinfer.commands import USER_ERRORS as COMMON_USER_ERRORS
from roseinfer.commands import CommandParser, add_log_level_arg, run_command

USER_ERRORS = (*COMMON_USER_ERRORS, json.JSONDecodeError)


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        allow_abbrev=False,
        prog="roseinfer bench",
        description="Benchmarks. Numbers measured on the reference machine are in BENCHMARKS.md.",
    )
    add_log_level_arg(parser)
    sub = parser.add_subparsers(dest="bench", required=True, metavar="{serve,throughput,scheduler}")
    commands = {
        "serve": "load-test an OpenAI-compatible server (vLLM's metrics; --concurrency sweeps and plots)",
        "throughput": "offline throughput on a seeded random workload (nano-vllm's protocol, scaled)",
    }  # fmt: skip
    for (name, help_text), module in zip(commands.items(), (serve, throughput), strict=True):
        p = sub.add_parser(name, allow_abbrev=False, help=help_text, description=module.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
        module.add_args(p)
        p.set_defaults(func=getattr(module, f"{name}_main"))
    sub.add_parser(
        "scheduler",
        allow_abbrev=False,
        help="the seeds' scheduler benchmark (python -m roseinfer.benchmark_scheduler)",
        add_help=False,
    )
    return parser


def bench_main(argv: list[str]) -> int:
    if argv and argv[0] == "scheduler":
        from roseinfer.bench.scheduler import main

        return main(argv[1:])
    args = build_parser().parse_args(argv)
    return run_command(args, f"roseinfer bench {args.bench}", USER_ERRORS)


if __name__ == "__main__":
    sys.exit(bench_main(sys.argv[1:]))
