"""`python -m roseinfer.server --model smollm2 --port 8000` (the seeds' entry point)."""

import sys

from roseinfer.server.cli import serve_main

if __name__ == "__main__":
    sys.exit(serve_main())
