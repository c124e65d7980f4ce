"""Resident memory after loading the default model with the default options (fp32 on AVX2-only
CPUs). Run from a tree: `PYTHONPATH=TREE .venv/bin/python docs/bench/session23/rss.py TREE`."""

import os
import sys

import psutil

from roseinfer.engine import InferenceEngine

engine = InferenceEngine(model="smollm2")
print(sys.argv[1], "RSS MB", psutil.Process(os.getpid()).memory_info().rss / 2**20)
