#!/bin/bash
# F3: the top-level --log-level (shown by `roseinfer --help` before the command) breaks `serve` and `bench`.
cd /tmp/s50/wt; R="env PYTHONPATH=/tmp/s50/wt /work/main/.venv/bin/python -m roseinfer.cli"
$R --log-level debug serve; echo "rc=$?"                       # AttributeError traceback
$R --log-level info bench; echo "rc=$?"                        # AttributeError traceback
$R --log-level debug serve --port 8874; echo "rc=$?"           # "unrecognized arguments: --port 8874"
$R --log-level info serve --help 2>&1 | tail -1                # "unrecognized arguments: --help"
