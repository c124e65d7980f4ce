"""How every `roseinfer` command line runs its parsed command (`roseinfer`, `roseinfer bench`)."""

from __future__ import annotations

import argparse
import logging
import sys

# Errors a user can cause (bad path, bad model, bad input): one line, no traceback.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, OSError)


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
