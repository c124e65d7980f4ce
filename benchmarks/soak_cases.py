"""The soak's request mix (`benchmarks/soak.py`): what each client sends next (`pick`) and what
a 200 must hold (each `Case`'s check). A fifth of the requests go to /v1/responses, a few to
/v1/embeddings, to llama.cpp's native /completion and /embedding, and to /rerank and /score."""

from __future__ import annotations

import base64
import json
import random
import re
from collections.abc import Callable

import jsonschema
import numpy as np
from soak_case import Case
from soak_llamacpp import pick_llamacpp

CHAT = [{"role": "user", "content": "Tell me about the sea in one sentence."}]

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "maxLength": 16}},
        "required": ["city"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"], "additionalProperties": False}}},
]  # fmt: skip
TOOL_SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
REGEX = "[a-z]{2,8}( [a-z]{2,8}){0,3}\\."
CHOICES = ["red", "green", "blue"]


def stopped(choice: dict) -> bool:
    return choice.get("finish_reason") == "stop"


def check_schema(text: str, schema: dict) -> str | None:
    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError) as e:
        return f"breaks its schema: {text[:80]!r} ({type(e).__name__})"
    return None


def check_json(r: dict) -> str | None:
    c = r["choices"][0]
    return check_schema(c["message"]["content"], SCHEMA) if stopped(c) else None


def check_regex(r: dict) -> str | None:
    texts = [c["text"] for c in r["choices"] if stopped(c)]
    bad = [t for t in texts if not re.fullmatch(REGEX, t)]
    return f"breaks the regex: {bad[0][:80]!r}" if bad else None


def check_choice(r: dict) -> str | None:
    text = r["choices"][0]["message"]["content"]
    return None if text in CHOICES else f"not a choice: {text[:80]!r}"


def check_calls(r: dict) -> str | None:
    c = r["choices"][0]
    calls = c["message"].get("tool_calls") or []
    if c["finish_reason"] == "length":
        return None
    if not calls or c["message"]["content"] is not None:
        return f"required call missing or content beside it: {c['message']}"[:160]
    for call in calls:
        fault = check_schema(call["function"]["arguments"], TOOL_SCHEMAS[call["function"]["name"]])
        if fault:
            return fault
    return None


def check_stop(r: dict) -> str | None:
    bad = [c["text"] for c in r["choices"] if "e" in c["text"]]
    return f"stop string in the text: {bad[0][:80]!r}" if bad else None


def check_echo_logprobs(r: dict) -> str | None:
    for c in r["choices"]:
        lp = c["logprobs"]
        n = len(lp["tokens"])
        if not (
            n == len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"])
        ):
            return "logprobs lists of different lengths"
        # (the tokens are not always the text: a special token is skipped from the text)
        if lp["token_logprobs"][0] is not None or not "".join(lp["tokens"]).startswith("The sea"):
            return "echo: the prompt's tokens do not come first, or the first has a logprob"
        if any(len(t) > 4 for t in lp["top_logprobs"][1:]):
            return "more than logprobs + 1 entries in top_logprobs"
    return None


def check_chat_logprobs(r: dict) -> str | None:
    content = r["choices"][0]["logprobs"]["content"]
    if len(content) != r["usage"]["completion_tokens"]:
        return f"{len(content)} logprobs for {r['usage']['completion_tokens']} tokens"
    if any(len(t["top_logprobs"]) != 2 for t in content):
        return "not 2 top_logprobs"
    return None


def check_prompt_logprobs(r: dict) -> str | None:
    plp = r["choices"][0].get("prompt_logprobs")
    if not plp or plp[0] is not None or len(plp) != r["usage"]["prompt_tokens"]:
        return f"prompt_logprobs: {str(plp)[:80]} for {r['usage']['prompt_tokens']} tokens"
    return None


def check_stream_n(chunks: list[dict]) -> str | None:
    finished = {
        c["index"] for ch in chunks for c in ch.get("choices", []) if c.get("finish_reason")
    }
    usage = [ch["usage"] for ch in chunks if ch.get("usage")]
    if finished != {0, 1, 2} or len(usage) != 1:
        return f"choices finished {sorted(finished)}, {len(usage)} usage chunks"
    return None


def check_stream_calls(chunks: list[dict]) -> str | None:
    args: dict[int, str] = {}
    names: dict[int, str] = {}
    for ch in chunks:
        for c in ch.get("choices", []):
            if c.get("finish_reason") == "length":
                return None
            for call in c["delta"].get("tool_calls") or []:
                if call.get("function", {}).get("name"):
                    names[call["index"]] = call["function"]["name"]
                args[call["index"]] = args.get(call["index"], "") + call["function"].get(
                    "arguments", ""
                )
    if not names:
        return "no streamed call under tool_choice required"
    for i, name in names.items():
        fault = check_schema(args.get(i, ""), TOOL_SCHEMAS[name])
        if fault:
            return fault
    return None


RESPONSES_TOOLS = [{"type": "function", **t["function"], "strict": True} for t in TOOLS]


def response_text(r: dict) -> str:
    return "".join(p["text"] for item in r["output"] if item["type"] == "message"
                   for p in item["content"])  # fmt: skip


def check_response(r: dict) -> str | None:
    if r.get("object") != "response" or r["status"] not in ("completed", "incomplete"):
        return f"not a finished response: {str(r)[:120]}"
    use = r["usage"]
    if use["total_tokens"] != use["input_tokens"] + use["output_tokens"] or not r["output"]:
        return f"usage or output wrong: {use} {r['output'][:1]}"
    return None


def check_response_calls(r: dict) -> str | None:
    calls = [item for item in r["output"] if item["type"] == "function_call"]
    if r["status"] == "completed" and not calls:
        return "required a call, got none"
    for call in calls if r["status"] == "completed" else ():
        fault = check_schema(call["arguments"], TOOL_SCHEMAS[call["name"]])
        if fault:
            return f"{call['name']}: {fault}"
    return check_response(r)


def check_response_events(events: list[dict]) -> str | None:
    if [e["sequence_number"] for e in events] != list(range(len(events))):
        return "sequence numbers not 0, 1, 2, ..."
    last = events[-1]
    if last["type"] not in ("response.completed", "response.incomplete"):
        return f"ended with {last['type']}"
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    if deltas != response_text(last["response"]):
        return "the deltas are not the final text"
    return check_response(last["response"])


def pick_responses(rng: random.Random) -> Case:
    """/v1/responses: plain, streamed, tools, a stored chain (continued, read, deleted), a
    conversation continued twice, a background one (polled, or cancelled), and a client that
    leaves a stream."""
    base = {"max_output_tokens": rng.randint(4, 48), "temperature": 0.7,
            "instructions": "Answer briefly."}  # fmt: skip
    question = "Tell me about the sea in one sentence."
    roll = rng.random()
    if roll < 0.3:
        return Case("responses", "/v1/responses", {**base, "input": question},
                    check=check_response)  # fmt: skip
    if roll < 0.55:
        body = {**base, "input": question, "stream": True}
        return Case("responses-stream", "/v1/responses", body, check=check_response_events)
    if roll < 0.7:
        body = {**base, "max_output_tokens": 64, "input": question, "tools": RESPONSES_TOOLS,
                "tool_choice": "required", "parallel_tool_calls": False}  # fmt: skip
        return Case("responses-tools", "/v1/responses", body, check=check_response_calls)
    if roll < 0.76:
        return Case("responses-chain", "/v1/responses", {**base, "input": question},
                    check=check_response)  # fmt: skip
    if roll < 0.82:  # two turns on a conversation, its items listed, then deleted (soak.py)
        return Case("responses-conversation", "/v1/responses", {**base, "input": question},
                    check=check_response)  # fmt: skip
    if roll < 0.92:  # polled to its end, or cancelled on the way (soak.py)
        kind = rng.choice(["responses-background", "responses-background-cancel"])
        body = {**base, "input": question, "background": True}
        return Case(kind, "/v1/responses", body, check=check_response)
    body = {**base, "input": question, "stream": True, "max_output_tokens": 200}
    return Case("disconnect-responses", "/v1/responses", body)


def check_embeddings(count: int) -> Callable[[dict], str | None]:
    def check(r: dict) -> str | None:
        data = r["data"]
        if [d["index"] for d in data] != list(range(count)):
            return f"{len(data)} vectors for {count} inputs"
        if isinstance(data[0]["embedding"], str):
            vectors = [np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in data]
        else:
            vectors = [np.array(d["embedding"]) for d in data]
        if len({len(v) for v in vectors}) != 1:
            return "vectors of different lengths"
        if any(abs(float(np.linalg.norm(v)) - 1) > 1e-3 for v in vectors):
            return "a vector not of length 1"
        return None if r["usage"]["prompt_tokens"] >= count else "usage counts too few tokens"

    return check


def pick_embeddings(rng: random.Random) -> Case:
    """/v1/embeddings: a few inputs, as floats or base64; one too long (a 400)."""
    inputs = [CHAT[0]["content"], "word " * rng.randint(1, 300), "The sea"][: rng.randint(1, 3)]
    body = {"input": inputs, "encoding_format": rng.choice(["float", "base64"])}
    if rng.random() < 0.1:
        return Case("embeddings-too-long", "/v1/embeddings", {"input": "word " * 20000}, 400)
    return Case("embeddings", "/v1/embeddings", body, check=check_embeddings(len(inputs)))


def check_scores(count: int) -> Callable[[dict], str | None]:
    def check(r: dict) -> str | None:
        results = r["results"] if "results" in r else r["data"]
        key = "relevance_score" if "results" in r else "score"
        scores = [e[key] for e in results]
        if sorted(e["index"] for e in results) != list(range(count)):
            return f"{len(results)} scores for {count} texts"
        if any(not -1.0001 <= x <= 1.0001 for x in scores):
            return "a cosine out of [-1, 1]"
        if "results" in r and scores != sorted(scores, reverse=True):
            return "not sorted best first"
        return None

    return check


def pick_scores(rng: random.Random) -> Case:
    """/rerank and /score over the embeddings: a query against a few texts."""
    texts = ["The sea is wide.", "word " * rng.randint(1, 100), "Fish swim.", "Cheese"]
    texts = texts[: rng.randint(1, 4)]
    if rng.random() < 0.5:
        body = {"query": "Tell me about the sea", "documents": texts}
        return Case("rerank", "/rerank", body, check=check_scores(len(texts)))
    body = {"text_1": "Tell me about the sea", "text_2": texts}
    return Case("score", "/score", body, check=check_scores(len(texts)))


def pick(rng: random.Random) -> Case:
    roll = rng.random()
    if roll < 0.2:
        return pick_responses(rng)
    if roll < 0.26:
        return pick_embeddings(rng)
    if roll < 0.32:
        return pick_llamacpp(rng)
    if roll < 0.35:
        return pick_scores(rng)
    base = {"model": None, "max_tokens": rng.randint(4, 48), "temperature": 0.7}
    roll = rng.random()
    if roll < 0.10:
        return Case("chat", "/v1/chat/completions", {**base, "messages": CHAT})
    if roll < 0.16:
        return Case(
            "chat-stream", "/v1/chat/completions", {**base, "messages": CHAT, "stream": True}
        )
    if roll < 0.20:
        return Case("completion", "/v1/completions", {**base, "prompt": "Once upon a time", "n": 2})
    if roll < 0.25:
        return Case("disconnect", "/v1/completions", {**base, "prompt": "Count:", "stream": True,
                                                      "max_tokens": 200})  # fmt: skip
    if roll < 0.27:
        return Case("bad-json", "/v1/completions", b'{"prompt": "x", "max_tokens": ', 400)
    if roll < 0.29:
        return Case(
            "unknown-field", "/v1/completions", {**base, "prompt": "x", "frobnicate": 1}, 400
        )
    if roll < 0.31:
        return Case("too-long", "/v1/completions", {**base, "prompt": "word " * 20000}, 400)
    if roll < 0.34:
        seed = rng.choice([99999999999999999999, 2**64 - 1, -5, 2**63])
        body = {**base, "messages": CHAT, "seed": seed, "n": 2}
        return Case("odd-seed", "/v1/chat/completions", body, 400 if seed > 2**64 - 1 else 200)
    if roll < 0.36:
        temperature = rng.choice([1e-40, 1e-300, float("nan")])
        body = {**base, "prompt": "Hi", "temperature": temperature}
        return Case(
            "odd-temperature", "/v1/completions", body, 200 if temperature == temperature else 400
        )
    if roll < 0.42:
        body = {**base, "max_tokens": 64, "messages": CHAT,
                "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}}  # fmt: skip
        return Case("json-schema", "/v1/chat/completions", body, check=check_json)
    if roll < 0.46:
        body = {**base, "prompt": "Say:", "n": 2, "structured_outputs": {"regex": REGEX}}
        return Case("regex", "/v1/completions", body, check=check_regex)
    if roll < 0.49:
        return Case("choice", "/v1/chat/completions", {**base, "messages": CHAT, "guided_choice": CHOICES},
                    check=check_choice)  # fmt: skip
    if roll < 0.54:
        body = {
            **base,
            "max_tokens": 64,
            "messages": CHAT,
            "tools": TOOLS,
            "tool_choice": "required",
        }
        return Case("tools-required", "/v1/chat/completions", body, check=check_calls)
    if roll < 0.58:
        body = {**base, "max_tokens": 64, "messages": CHAT, "tools": TOOLS, "tool_choice": "required",
                "stream": True}  # fmt: skip
        return Case("tools-stream", "/v1/chat/completions", body, check=check_stream_calls)
    if roll < 0.61:
        body = {**base, "max_tokens": 200, "messages": CHAT, "stream": True,
                "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}}  # fmt: skip
        return Case("disconnect-structured", "/v1/chat/completions", body)
    if roll < 0.65:
        body = {**base, "prompt": "The sea", "echo": True, "logprobs": 3, "n": 2}
        return Case("echo-logprobs", "/v1/completions", body, check=check_echo_logprobs)
    if roll < 0.68:
        body = {**base, "messages": CHAT, "logprobs": True, "top_logprobs": 2}
        return Case("chat-logprobs", "/v1/chat/completions", body, check=check_chat_logprobs)
    if roll < 0.71:
        body = {**base, "prompt": "The sea is deep and", "prompt_logprobs": 2}
        return Case("prompt-logprobs", "/v1/completions", body, check=check_prompt_logprobs)
    if roll < 0.74:
        return Case("stop-string", "/v1/completions", {**base, "prompt": "Hello", "stop": ["e"], "n": 2},
                    check=check_stop)  # fmt: skip
    if roll < 0.78:
        body = {**base, "messages": CHAT, "stream": True, "n": 3,
                "stream_options": {"include_usage": True}}  # fmt: skip
        return Case("stream-n3-usage", "/v1/chat/completions", body, check=check_stream_n)
    if roll < 0.86:
        body = {**base, "prompt": "Once upon a time", "seed": rng.randrange(2**32), "top_k": 40,
                "top_p": 0.9, "min_p": 0.02, "presence_penalty": 0.5, "frequency_penalty": 0.3,
                "repetition_penalty": 1.1, "logit_bias": {"28": -100}}  # fmt: skip
        return Case("seeded-repeat", "/v1/completions", body, repeat=True)
    if roll < 0.92:
        body = {**base, "temperature": 0, "messages": CHAT}
        return Case("greedy-repeat", "/v1/chat/completions", body, repeat=True)
    if roll < 0.94:
        body = {**base, "prompt": "x", "response_format": {"type": "json_schema", "json_schema": {
            "name": "bad", "schema": {"type": "object", "properties": {"a": {"$ref": "#/nope"}}}}}}  # fmt: skip
        return Case("bad-schema", "/v1/completions", body, 400)
    if roll < 0.97:
        body = {**base, "prompt": "Answer:", "grammar": 'root ::= ("yes" | "no") "."'}
        return Case("gbnf", "/v1/completions", body,
                    check=lambda r: None if r["choices"][0]["text"] in ("yes.", "no.") else
                    f"breaks the grammar: {r['choices'][0]['text'][:80]!r}")  # fmt: skip
    body = {**base, "prompt": "hi " * 1500, "max_tokens": 16}
    return Case("long-prompt", "/v1/completions", body)


def text_of(r: dict) -> list[str]:
    return [c.get("text") or (c.get("message") or {}).get("content") or "" for c in r["choices"]]
