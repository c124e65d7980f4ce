"""`roseinfer` command line: generate, chat, run-batch, serve, bench."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from roseinfer.batch import __doc__ as BATCH_DOC
from roseinfer.batch import add_batch_args, cmd_run_batch
from roseinfer.chat_repl import HELP as CHAT_HELP
from roseinfer.chat_repl import ChatSession, enable_line_editing
from roseinfer.commands import CommandParser, add_log_level_arg, run_command
from roseinfer.config import EngineConfig, add_engine_args
from roseinfer.sampling_params import SamplingParams


def add_sampling_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("sampling")
    g.add_argument(
        "--max-new-tokens", type=int, default=128, help="most tokens to generate (default 128)"
    )
    g.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    g.add_argument(
        "--top-k", type=int, default=0, help="sample from the k likeliest (default 0: all)"
    )
    g.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (default 1.0: off)")
    g.add_argument("--ignore-eos", action="store_true", help="do not stop at EOS / chat end tokens")


def sampling_params(args: argparse.Namespace) -> SamplingParams:
    return SamplingParams(
        max_tokens=args.max_new_tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        ignore_eos=args.ignore_eos,
    )


def cmd_generate(args: argparse.Namespace) -> int:
    from roseinfer.llm import LLM

    params = sampling_params(args)
    if not args.prompt:  # refuse before spending seconds loading a model
        raise ValueError("prompt must be a non-empty string")
    if args.chat_template is not None and not args.chat:
        raise ValueError("--chat-template renders chat messages: add --chat (a plain prompt "
                         "is sent as it is)")  # fmt: skip
    llm = LLM(**dataclasses.asdict(EngineConfig.from_args(args)))
    ids = (
        llm.encode_chat([{"role": "user", "content": args.prompt}])
        if args.chat
        else llm.encode(args.prompt)
    )
    for piece in llm.stream(ids, params):
        print(piece, end="", flush=True)
    print()
    return 0


def cmd_chat(args: argparse.Namespace) -> int:
    from roseinfer.llm import LLM

    params = sampling_params(args)
    llm = LLM(**dataclasses.asdict(EngineConfig.from_args(args)))
    # Off a terminal input() does not use readline: nothing to edit, no history to keep.
    save_history = enable_line_editing() if sys.stdin.isatty() else None
    try:
        return ChatSession(llm, params, args.system).run()
    finally:
        if save_history is not None:
            save_history()


def build_parser() -> argparse.ArgumentParser:
    from roseinfer import __version__

    parser = CommandParser(allow_abbrev=False, prog="roseinfer", description=__doc__)
    parser.add_argument("--version", action="version", version=f"roseinfer {__version__}")
    add_log_level_arg(parser)
    sub = parser.add_subparsers(dest="command", required=True)

    gen = sub.add_parser("generate", allow_abbrev=False, help="generate text for one prompt")
    gen.add_argument("--prompt", required=True)
    gen.add_argument(
        "--chat", action="store_true", help="wrap the prompt in the model's chat template"
    )
    add_sampling_args(gen)
    add_engine_args(gen)
    gen.set_defaults(func=cmd_generate)

    chat = sub.add_parser(
        "chat",
        allow_abbrev=False,
        help="interactive chat, streaming tokens (/help inside lists its commands)",
        description="Interactive chat, streaming tokens.\n\n" + CHAT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    chat.add_argument("--system", default=None, help="system prompt")
    add_sampling_args(chat)
    add_engine_args(chat)
    chat.set_defaults(func=cmd_chat)

    batch = sub.add_parser(
        "run-batch",
        allow_abbrev=False,
        help="run a file of OpenAI batch requests offline (vLLM's run-batch)",
        description=BATCH_DOC,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_batch_args(batch)
    add_engine_args(batch, request_defaults=True)
    batch.set_defaults(func=cmd_run_batch)

    sub.add_parser(
        "serve",
        allow_abbrev=False,
        help="OpenAI-compatible server (see `roseinfer serve --help`)",
        add_help=False,
    )
    sub.add_parser(
        "bench",
        allow_abbrev=False,
        help="benchmarks (see `roseinfer bench --help`)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # serve and bench own their argument parsing; `--log-level` given before them is theirs too
    # (it had ended in a traceback there: argparse matched their stubs below)
    i = 0
    while i < len(argv) and argv[i].startswith("--log-level"):
        i += 1 if "=" in argv[i] else 2
    if i < len(argv) and argv[i] == "serve":
        from roseinfer.server.cli import serve_main

        return serve_main(argv[:i] + argv[i + 1 :], prog="roseinfer serve")
    if i < len(argv) and argv[i] == "bench":
        from roseinfer.bench.cli import bench_main

        return bench_main(argv[:i] + argv[i + 1 :])
    return run_command(build_parser().parse_args(argv), "roseinfer")


if __name__ == "__main__":
    sys.exit(main())
