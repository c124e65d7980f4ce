"""A bounded schema fuzz of every POST endpoint (hypothesis): bodies with random values for the
known fields (typed ones and any JSON), random unknown fields, and arbitrary JSON or bytes.
Whatever comes in: never a 5xx, never a hang (the client's timeout), streams end, and a good
request succeeds after. One in-process server over the tiny random llama (`tiny_server`);
outputs stay short (small token limits), so ~200 examples take well under a minute."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roseinfer.server import fields as F

PATHS = F.ENDPOINTS
SETTINGS = dict(
    deadline=timedelta(seconds=30),  # one example: a request, at most a few hundred tiny tokens
    derandomize=True,  # the same examples on every run: CI stays deterministic
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

text = st.text(max_size=12)  # lone surrogates included: they reach the tokenizer
any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
small_int = st.integers(-2, 6)
number = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-3, 3)
token_ids = st.lists(st.integers(-5, 600), max_size=6)
part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image_url"]) | text},
    optional={"text": text | any_json, "junk": any_json},
)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "system", "assistant", "developer", "tool"]),
     "content": text},
) | st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant"]) | text},
    optional={"content": text | st.lists(part, max_size=2) | any_json, "name": text | any_json,
              "junk": any_json},
)  # fmt: skip
item = message | st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "function_call", "function_call_output", "reasoning"])
     | text},
    optional={"role": st.sampled_from(["user", "assistant"]) | text, "call_id": text,
              "name": text, "arguments": text | any_json, "output": text | any_json,
              "content": text | st.lists(st.fixed_dictionaries(
                  {"type": st.sampled_from(["input_text", "output_text"]) | text},
                  optional={"text": text | any_json}), max_size=2) | any_json},
)  # fmt: skip

# llama.cpp's sampler names (`samplers`), its infill sampler's among them
SAMPLERS = ["top_k", "top_p", "min_p", "temperature", "infill", "penalties", "dry", "Top-K"]
# Typed strategies where a random JSON value would almost always be a plain 400; token limits
# and n stay small so a valid body generates a few tokens. The other known fields get any JSON
# or a value from the table's neutral candidates.
TYPED = {
    "prompt": text | token_ids | st.lists(text, max_size=2) | st.lists(token_ids, max_size=2),
    "content": text | token_ids | st.lists(text | st.integers(-5, 600), max_size=3) | any_json,
    "messages": st.lists(message, max_size=3),
    "input": text | st.lists(item, max_size=3) | any_json, "max_output_tokens": small_int,
    "text": st.fixed_dictionaries({}, optional={"format": st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "json_object", "json_schema"]) | text},
        optional={"schema": any_json, "name": text})}) | any_json,
    "include": st.lists(st.sampled_from(["message.output_text.logprobs"]) | text, max_size=2),
    "max_tokens": small_int, "max_completion_tokens": small_int, "max_new_tokens": small_int,
    "n_predict": small_int, "n": st.integers(-1, 3), "min_tokens": small_int,
    "temperature": number, "top_p": number, "top_k": st.integers(-3, 50),
    "seed": st.integers(-(2**64), 2**65), "stop": text | st.lists(text, max_size=2),
    "stop_token_ids": token_ids, "truncate_prompt_tokens": small_int,
    "stream": st.booleans(), "stream_options": st.dictionaries(
        st.sampled_from(["include_usage", "continuous_usage_stats", "junk"]), any_json),
    "chat_template_kwargs": st.dictionaries(text, any_json, max_size=2),
    "do_sample": st.booleans(), "ignore_eos": st.booleans(), "stop_on_eos": st.booleans(),
    "samplers": st.lists(st.sampled_from(SAMPLERS) | text, max_size=5) | text | any_json,
    "n_indent": st.integers(-2, 8) | any_json, "t_max_predict_ms": number | any_json,
}  # fmt: skip
# In range, so that a good share of the bodies generate (and stream) for real.
VALID = {
    **TYPED, "prompt": st.text(min_size=1, max_size=12), "messages": st.lists(message, min_size=1,
    max_size=2), "input": text | st.lists(item, min_size=1, max_size=2),
    "max_output_tokens": st.integers(1, 6), "max_tokens": st.integers(1, 6), "max_completion_tokens": st.integers(1, 6),
    "max_new_tokens": st.integers(1, 6), "n_predict": st.integers(1, 6), "n": st.integers(1, 2),
    "min_tokens": st.integers(0, 1), "temperature": st.floats(0, 2), "top_p": st.floats(0.05, 1),
    "top_k": st.integers(-1, 20), "seed": st.integers(0, 2**64 - 1),
    "stop_token_ids": st.lists(st.integers(0, 300), max_size=2),
    "truncate_prompt_tokens": st.integers(1, 8), "stream_options": st.just({"include_usage": True}),
    "chat_template_kwargs": st.just({}), "model": st.none(),
    "samplers": st.lists(st.sampled_from(SAMPLERS), unique=True, max_size=5)
    | st.sampled_from(["kpt", "kpi", "tkp", ""]),
    "n_indent": st.integers(0, 4), "t_max_predict_ms": st.integers(-1, 50),
}  # fmt: skip
NEUTRAL = st.sampled_from([0, 1, -1, False, True, "", "none", [], {}, ["text"], {"type": "text"}])
TOKEN_LIMITS = (
    "max_tokens",
    "max_completion_tokens",
    "n_predict",
    "max_new_tokens",
    "max_output_tokens",
)
REQUIRED = {
    F.CHAT: "messages",
    F.RESPONSES: "input",
    F.EMBEDDINGS: "input",
    F.LLAMACPP_EMBEDDING: "content",
}  # the others: prompt


def bodies(endpoint: str) -> st.SearchStrategy[dict]:
    """Typed honoured fields (so some bodies generate), plus up to two other known fields (no-ops
    and refused ones, any JSON or a neutral value) and up to two unknown ones."""
    top = sorted(n for n in F.TABLE[endpoint] if "." not in n)
    honoured = [n for n in top if F.TABLE[endpoint][n].kind is F.Kind.HONOURED]
    others = [n for n in top if n not in honoured]
    required = REQUIRED.get(endpoint, "prompt")
    typed = st.sampled_from([TYPED, VALID]).flatmap(
        lambda strategies: st.fixed_dictionaries(
            {required: strategies[required]},
            optional={n: strategies.get(n, any_json) for n in honoured if n != required},
        )
    )
    other = st.just({})
    if others:  # /generate has none
        other |= st.dictionaries(st.sampled_from(others), any_json | NEUTRAL, max_size=2)
    unknown = st.dictionaries(text, any_json, max_size=2)
    mix = st.tuples(typed, other, st.just({}) | st.just({}) | unknown, st.booleans())
    return mix.map(lambda t: _shape(endpoint, {**t[0], **t[1], **t[2]}, t[3]))


def _shape(endpoint: str, body: dict, drop_required: bool) -> dict:
    if not any(k in body for k in TOKEN_LIMITS):  # chat would generate to the context's end
        limit = {F.GENERATE: "max_new_tokens", F.RESPONSES: "max_output_tokens"}
        body[limit.get(endpoint, "max_tokens")] = 3
    if drop_required and len(body) % 7 == 0:  # now and then the required field is missing
        body.pop(REQUIRED.get(endpoint, "prompt"), None)
    return body


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=httpx.Timeout(30.0)) as c:
        yield c


def send(http: httpx.Client, path: str, content: bytes) -> None:
    """POST and read the whole answer; a 5xx or a hang (timeout) fails."""
    headers = {"Content-Type": "application/json"}
    with http.stream("POST", path, content=content, headers=headers) as r:
        payload = r.read()  # a stream must end; the client's timeout catches a hang
    # (/infill of a model without FIM tokens: llama.cpp's 501 for a model that cannot fill)
    infill = path == PATHS[F.LLAMACPP_INFILL] and r.status_code == 501
    assert r.status_code < 500 or infill, (r.status_code, content[:300], payload[:500])
    if r.status_code >= 400:
        err = json.loads(payload)["error"]
        assert err["message"], payload
    elif r.headers["content-type"].startswith("text/event-stream"):
        assert b"internal error" not in payload, payload[-500:]
        last_event = payload.rstrip().rsplit(b"\n\n", 1)[-1]
        if path == PATHS[F.RESPONSES]:  # its last event ends the response
            last = json.loads(last_event.removeprefix(b"data: "))
            assert last["type"] in ("response.completed", "response.incomplete"), last
        elif path == PATHS[F.LLAMACPP_COMPLETION]:  # llama.cpp's: a result, no [DONE]
            last = json.loads(last_event.removeprefix(b"data: "))
            assert last.get("stop") is True or "error" in last, last
        else:
            assert payload.endswith(b"data: [DONE]\n\n"), payload[-200:]


def dumps(body: object) -> bytes:
    return json.dumps(body, allow_nan=True).encode()  # NaN/Infinity literals, as some clients


@pytest.mark.parametrize("endpoint", list(PATHS))
def test_fuzzed_bodies_never_5xx(http, endpoint):
    @settings(max_examples=50, **SETTINGS)
    @given(bodies(endpoint))
    def check(body: dict) -> None:
        send(http, PATHS[endpoint], dumps(body))

    check()


@settings(max_examples=40, **SETTINGS)
@given(
    st.sampled_from(list(PATHS.values())),
    any_json.map(dumps) | st.binary(max_size=40) | st.just(b"[" * 5000 + b"]" * 5000),
)
def test_arbitrary_json_and_bytes_never_5xx(http, path, content):
    send(http, path, content)


def test_a_good_request_succeeds_after_the_fuzz(http):
    body = {"prompt": "Hello", "max_tokens": 3, "temperature": 0, "ignore_eos": True}
    r = http.post(PATHS[F.COMPLETIONS], json=body)
    assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] == 3, r.text
    chat = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "stream": True}
    with http.stream("POST", PATHS[F.CHAT], json=chat) as s:
        assert s.status_code == 200 and s.read().endswith(b"data: [DONE]\n\n")


@settings(max_examples=60, **SETTINGS)
@given(
    st.sampled_from(["", "/{c}", "/{c}/items"]),
    st.fixed_dictionaries(
        {},
        optional={
            "items": st.lists(item, max_size=3) | any_json,
            "metadata": any_json,
            "junk": any_json,
        },
    ),  # fmt: skip
    st.dictionaries(
        st.sampled_from(["limit", "order", "after", "include", "api-version"]), text, max_size=2
    ),  # fmt: skip
)
def test_the_conversations_api_never_5xx(http, where, body, query):
    """The Conversations API's POSTs and its items' GET: random bodies and queries."""
    conversation = http.post("/v1/conversations", json={}).json()["id"]
    path = "/v1/conversations" + where.format(c=conversation)
    send(http, path, dumps(body))
    r = http.get(f"/v1/conversations/{conversation}/items", params=query)
    assert r.status_code < 500, r.text
    answer = {"conversation": conversation, "input": "Hi", "max_output_tokens": 2}
    r = http.post("/v1/responses", json=answer)  # what the fuzz added, continued
    assert r.status_code < 500, r.text
    http.delete(f"/v1/conversations/{conversation}")
