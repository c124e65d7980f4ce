"""The server's own work on a streamed /v1/completions body of 2,000 token ids, by part, in ms a call:
the JSON read, the field table's check, pydantic's validation, `check_prompt_ids`.

    .venv/bin/python docs/bench/session73/handler_parts.py
"""

import json
import random
import time

from roseinfer.engine.requests import check_prompt_ids
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.body_check import check_body
from roseinfer.server.errors import validated
from roseinfer.server.jsonbody import read_json

rng = random.Random(5)
ids = [rng.randrange(100, 40000) for _ in range(2000)]
raw = json.dumps({"prompt": ids, "max_tokens": 1, "temperature": 0, "stream": True}).encode()


def t(f, n=200):
    for _ in range(5):
        f()
    s = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - s) / n * 1e3


data = read_json(raw)
print("read_json", round(t(lambda: read_json(raw)), 3), "ms")
print(
    "check_body",
    round(t(lambda: check_body(read_json(raw), F.COMPLETIONS)) - t(lambda: read_json(raw)), 3),
)
checked = check_body(read_json(raw), F.COMPLETIONS)
print("validated", round(t(lambda: validated(P.CompletionRequest, dict(checked))), 3))
print("check_prompt_ids", round(t(lambda: check_prompt_ids(ids, 49152)), 3))
