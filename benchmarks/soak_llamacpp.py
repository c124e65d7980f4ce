"""The soak's llama.cpp cases (`soak_cases.pick` sends some of its requests here): its native
/completion (several prompts, streamed, a grammar, what llama.vim sends), /embedding, and a
client that leaves a stream."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
from soak_case import Case


def check_llamacpp(prompts: int) -> Callable[[dict | list], str | None]:
    """A /completion answer (a result, or a list of them) or its stream's events."""

    def check(r: dict | list) -> str | None:
        results = [e for e in r if e.get("stop")] if isinstance(r, list) else [r]
        if sorted(e["index"] for e in results) != list(range(prompts)):
            return f"{len(results)} results for {prompts} prompts"
        for e in results:
            if e["stop_type"] not in ("eos", "word", "limit"):
                return f"stop_type {e['stop_type']!r}"
            probs = e.get("completion_probabilities")
            if probs is not None and len(probs) > e["tokens_predicted"]:
                return "more probabilities than tokens"
            if e["tokens"] and len(e["tokens"]) != e["tokens_predicted"]:
                return "tokens and tokens_predicted disagree"
        return None

    return check


def pick_llamacpp(rng: random.Random) -> Case:
    """llama.cpp's native API: /completion (several prompts, streamed or not, probabilities,
    a grammar), /embedding (unit vectors), and a client that leaves a stream."""
    base = {"n_predict": rng.randint(4, 40), "temperature": 0.7, "n_probs": rng.choice([0, 2])}
    roll = rng.random()
    if roll < 0.1:  # what llama.vim sends with each completion (SmolLM2 has no FIM tokens)
        indent = rng.randint(1, 4)
        body = {**base, "prompt": "def f(x):\n    ", "samplers": ["top_k", "top_p", "infill"],
                "top_k": 40, "top_p": 0.9, "n_indent": indent, "t_max_predict_ms": 300,
                "n_probs": 3, "post_sampling_probs": True,
                "response_fields": ["content", "stop_type", "timings/predicted_n",
                                    "completion_probabilities"]}  # fmt: skip
        return Case("llamacpp-llama.vim", "/completion", body, check=check_fill(indent))
    if roll < 0.35:
        body = {**base, "prompt": ["Once upon a time", [504, 3458]], "stop": ["."],
                "return_tokens": True}  # fmt: skip
        return Case("llamacpp", "/completion", body, check=check_llamacpp(2))
    if roll < 0.55:
        body = {**base, "prompt": "The sea", "stream": True, "n": 2}
        return Case("llamacpp-stream", "/completion", body, check=check_llamacpp(2))
    if roll < 0.7:
        body = {**base, "prompt": "Answer:", "grammar": 'root ::= "yes" | "no"'}
        return Case("llamacpp-grammar", "/completion", body,
                    check=lambda r: None if r["content"] in ("yes", "no") else
                    f"breaks the grammar: {r['content'][:80]!r}")  # fmt: skip
    if roll < 0.85:
        content = ["The sea", "word " * rng.randint(1, 200)]

        def unit(r: dict | list) -> str | None:
            vectors = [np.array(e["embedding"][0]) for e in r]
            if len(vectors) != 2 or any(abs(np.linalg.norm(v) - 1) > 1e-3 for v in vectors):
                return "not two unit vectors"
            return None

        return Case("llamacpp-embedding", "/embedding", {"content": content}, check=unit)
    return Case("disconnect-llamacpp", "/completion", {**base, "prompt": "Count:",
                                                       "n_predict": 200, "stream": True})  # fmt: skip


def check_fill(n: int) -> Callable[[dict], str | None]:
    """llama.cpp's `n_indent`: no line after the first indented by less than n, but the last,
    cut before its first other character (spaces and tabs only); `post_sampling_probs`: each
    token's `prob` in (0, 1], among its `top_probs` where those hold it, which sum to 1 at
    most."""

    def check(r: dict) -> str | None:
        lines = r["content"].split("\n")
        for i, line in enumerate(lines[1:], 1):
            indent = len(line) - len(line.lstrip(" \t"))
            if indent < n and (i < len(lines) - 1 or line[indent:]):
                return f"line {i} indented by {indent} < {n}: {r['content'][:120]!r}"
        if set(r) - {"completion_probabilities"} != {"content", "stop_type", "timings/predicted_n"}:
            return f"response_fields: {sorted(r)}"
        for e in r.get("completion_probabilities", []):
            top = {t["id"]: t["prob"] for t in e["top_probs"]}
            if not 0 < e["prob"] <= 1 or sum(top.values()) > 1 + 1e-4:
                return f"post-sampling probabilities: {e}"
            if e["id"] in top and abs(top[e["id"]] - e["prob"]) > 1e-6:
                return f"the token's prob is not its top_probs': {e}"
        return None

    return check
