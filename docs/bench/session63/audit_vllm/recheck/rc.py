"""Recheck helpers: reuse ../common.py and add compact stream summaries."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import MODEL, both, get, post, stream, text_of, trim  # noqa: E402,F401

CHAT = "/v1/chat/completions"
COMP = "/v1/completions"
MSG = [{"role": "user", "content": "What is the capital of France?"}]
PROMPT = "The capital of France is"


def chunk_summary(c):
    """One line per chunk: per choice index, text delta, ids, finish; plus usage / top-level ids."""
    if not isinstance(c, dict):
        return str(c)
    parts = []
    if "prompt_token_ids" in c and c["prompt_token_ids"] is not None:
        parts.append(f"TOP.prompt_token_ids={c['prompt_token_ids']}")
    for ch in c.get("choices", []) or []:
        d = ch.get("delta")
        txt = (d or {}).get("content") if d is not None else ch.get("text")
        s = f"i={ch.get('index')} txt={txt!r}"
        if d is not None and d.get("role"):
            s += f" role={d['role']}"
        for k in ("prompt_token_ids", "token_ids"):
            if ch.get(k) is not None:
                s += f" {k}={ch[k]}"
        if ch.get("finish_reason") is not None:
            s += f" fin={ch['finish_reason']}"
        if ch.get("stop_reason") is not None:
            s += f" stop_reason={ch['stop_reason']!r}"
        if ch.get("logprobs") is not None:
            s += f" lp={trim(ch['logprobs'], 200)}"
        parts.append("{" + s + "}")
    if c.get("usage") is not None:
        u = c["usage"]
        parts.append(f"usage=({u.get('prompt_tokens')},{u.get('completion_tokens')},{u.get('total_tokens')})")
    return " ".join(parts) if parts else trim(c, 200)


def both_stream(path, body, label=None, maxchunks=40):
    print(f"=== STREAM {label or path}: {trim(body, 300)}")
    res = {}
    for s in ("vllm", "rose"):
        try:
            st, chunks = stream(s, path, body)
        except Exception as e:  # noqa: BLE001
            st, chunks = -1, [repr(e)]
        res[s] = (st, chunks)
        print(f"  [{s}] {st} {len(chunks)} chunks")
        for c in chunks[:maxchunks]:
            print(f"      {chunk_summary(c)}")
        if len(chunks) > maxchunks:
            print(f"      ...(+{len(chunks) - maxchunks} chunks)")
    sys.stdout.flush()
    return res


def joined(chunks, key):
    """Concatenate per-choice lists/strings of a stream. key in ('text','token_ids','prompt_token_ids')."""
    out = {}
    for c in chunks:
        if not isinstance(c, dict):
            continue
        for ch in c.get("choices", []) or []:
            i = ch.get("index", 0)
            if key == "text":
                d = ch.get("delta")
                v = (d or {}).get("content") if d is not None else ch.get("text")
                out[i] = out.get(i, "") + (v or "")
            elif ch.get(key) is not None:
                out[i] = out.get(i, []) + list(ch[key])
    return out


def verdict(label, a, b):
    print(f"  -> {label}: {'SAME' if a == b else 'DIFFERENT'}\n     vllm={trim(a, 400)}\n     rose={trim(b, 400)}")
    sys.stdout.flush()


def usage3(j):
    """(prompt, completion, total) of a response; vLLM's null *_details keys left out."""
    u = (j or {}).get("usage") if isinstance(j, dict) else None
    return None if not u else (u.get("prompt_tokens"), u.get("completion_tokens"), u.get("total_tokens"))
