#!/bin/bash
export PYTHONPATH=/tmp/s51/wt_docs
exec /work/main/.venv/bin/python "$@"
