"""How every `roseinfer` command line runs its parsed command (`roseinfer`, `roseinfer bench`)."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import NoReturn

from roseinfer.outputs import RequestFailed

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")

# Errors a user can cause (bad path, bad model, bad input), and a generation the engine failed
# (`RequestFailed`: its reason is the whole story): one line, no traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, OSError,
                                                RequestFailed)  # fmt: skip


class CommandParser(argparse.ArgumentParser):
    """argparse's parser whose refusals (an unknown flag, a value of the wrong type) are one line
    on stderr, as every other start-up failure is, not the whole usage block first; exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def run_command(
    args: argparse.Namespace, prog: str, user_errors: tuple[type[BaseException], ...] = USER_ERRORS
) -> int:
    """Run `args.func` with logging at `--log-level`: an error a user can cause is one line
    (no traceback) and exit 1; Ctrl-C is exit 130."""
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except user_errors as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def set_help(parser: argparse.ArgumentParser, dest: str, text: str) -> None:
    """Say what a shared flag (one of `add_engine_args`') does in this command: argparse has no
    public way to reach an action once added."""
    (action,) = [a for a in parser._actions if a.dest == dest]
    action.help = text


def add_log_level_arg(parser: argparse._ActionsContainer, default: str = "warning") -> None:
    """`--log-level`, one of LOG_LEVELS (any case): argparse refuses another with a usage line."""
    parser.add_argument(
        "--log-level",
        default=default,
        type=str.lower,
        choices=LOG_LEVELS,
        help=f"{'|'.join(LOG_LEVELS)} (default {default})",
    )
