"""Input at the edge of what the server takes, through a real server and HTTP client: each bad
request is a 400 naming the field the client sent (never a 500, never a cut stream), and the
numbers a client reads back (usage) are OpenAI's. One in-process server over the tiny random
llama (`tiny_server` in conftest.py: vocabulary of 383 tokens, context of 256, stop tokens
<|endoftext|> = 0 and <|im_end|> = 2)."""

from __future__ import annotations

import json

import httpx
import pytest

C, CC, G = "/v1/completions", "/v1/chat/completions", "/generate"
CHAT = [{"role": "user", "content": "Hello, world!"}]
PROMPT = "The quick brown fox"
S = r"\ud800"  # a lone surrogate, as a JSON escape: Python's json decodes it to a str


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=60) as c:
        yield c


def post(http: httpx.Client, path: str, body: dict | str) -> httpx.Response:
    content = body if isinstance(body, str) else json.dumps(body)
    return http.post(path, content=content, headers={"Content-Type": "application/json"})


def error_of(r: httpx.Response) -> dict:
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    return error


def prompt_count(http: httpx.Client, text: str) -> int:
    return http.post("/tokenize", json={"prompt": text}).json()["count"]


# ---- lone surrogates -----------------------------------------------------------------------

SURROGATES = [
    (C, f'{{"prompt": "{S}"}}', "prompt"),
    (C, f'{{"prompt": ["fine", "x{S}y"]}}', "prompt.1"),
    (CC, f'{{"messages": [{{"role": "user", "content": "a{S}"}}]}}', "messages.0.content"),
    (CC, f'{{"messages": [{{"role": "user", "content": [{{"type": "text", "text": "{S}"}}]}}]}}',
     "messages.0.content.0.text"),
    (C, f'{{"prompt": "hi", "bad_words": ["{S}"]}}', "bad_words.0"),
    (C, f'{{"prompt": "hi", "stop": "{S}"}}', "stop"),
    (C, f'{{"prompt": "hi", "request_id": "{S}", "stream": true}}', "request_id"),
    (C, f'{{"prompt": "hi", "model": "{S}"}}', "model"),
    (C, f'{{"prompt": "hi", "{S}x": 1}}', S + "x"),
    (CC, f'{{"messages": {json.dumps(CHAT)}, "chat_template_kwargs": {{"{S}": 1}}}}',
     f"chat_template_kwargs.{S}"),
    (G, f'{{"prompt": "{S}"}}', "prompt"),
    ("/tokenize", f'{{"prompt": "{S}"}}', "prompt"),
    ("/tokenize", f'{{"messages": [{{"role": "user", "content": "{S}"}}]}}', "messages.0.content"),
    ("/detokenize", f'{{"tokens": [1], "model": "{S}"}}', "model"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body", "param"), SURROGATES)
def test_a_lone_surrogate_is_a_400_naming_where_it_is(http, path, body, param):
    error = error_of(post(http, path, body))
    assert error["param"] == param and "surrogate" in error["message"]


def test_a_surrogate_pair_is_a_character_and_fine(http):
    r = post(http, C, '{"prompt": "smile \\ud83d\\ude00", "max_tokens": 2}')
    assert r.status_code == 200, r.text


# ---- values JSON cannot say once: a key twice, NaN and Infinity ------------------------------

SCHEMA_AT = "response_format.json_schema.schema"
UNREADABLE = [
    # the earlier value had been dropped unread: the stop string was never applied
    (C, '{"prompt": "hi", "stop": ["-"], "stop": null}', "stop", "more than once"),
    (CC, '{"messages": [{"role": "user", "content": "a", "content": "b"}]}',
     "messages.0.content", "more than once"),
    # a schema's NaN or 1e400 (inf) had reached the grammar as null: a 200 whose output broke it
    (CC, '{"messages": [{"role": "user", "content": "a"}], "response_format": {"type": '
     '"json_schema", "json_schema": {"name": "n", "schema": {"properties": {"a": {"const": '
     '1e400}}}}}}', SCHEMA_AT, f"{SCHEMA_AT} holds inf at properties.a.const, a number JSON "
     "cannot hold (beyond a double)"),
    (CC, '{"messages": [{"role": "user", "content": "a"}], "response_format": {"type": '
     '"json_schema", "json_schema": {"name": "n", "schema": {"enum": [1, NaN]}}}}',
     f"{SCHEMA_AT}.enum.1", "NaN and Infinity"),
    (C, '{"prompt": "hi", "temperature": -Infinity}', "temperature", "NaN and Infinity"),
    # a schema as JSON text: the same (it had reached the grammar as null too)
    (C, '{"prompt": "hi", "guided_json": "{\\"const\\": 1e400}"}', "guided_json",
     "guided_json holds inf at const"),
    (C, '{"prompt": "hi", "structured_outputs": {"json": {"const": 1e400}}}', "structured_outputs",
     "structured_outputs.json holds inf at const"),
    # a key both repeated and not valid Unicode: named escaped (it had been a 500)
    (C, '{"prompt": "hi", "\\ud800": 1, "\\ud800": 2}', "\\ud800", "surrogate"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body", "param", "why"), UNREADABLE)
def test_a_key_given_twice_or_a_non_finite_number_is_a_400_naming_where(
    http, path, body, param, why
):
    error = error_of(post(http, path, body))
    assert error["param"] == param and why in error["message"], error


# ---- response_format -----------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


@pytest.mark.parametrize("kind", ["json_object", "text"])
def test_json_schema_with_another_response_format_type_is_refused(http, kind):
    fmt = {"type": kind, "json_schema": {"name": "x", "schema": SCHEMA}}
    error = error_of(post(http, CC, {"messages": CHAT, "response_format": fmt}))
    assert error["param"] == "response_format.json_schema" and "json_schema" in error["message"]


def test_json_schema_description_is_a_no_op(http):
    def text(**extra) -> str:
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA, **extra}}
        body = {"messages": CHAT, "response_format": fmt, "max_tokens": 12, "temperature": 0}
        r = post(http, CC, body)
        assert r.status_code == 200, r.text
        return r.json()["choices"][0]["message"]["content"]

    assert text(description="Say a number as field a.") == text()


# ---- numbers too large for the sampler -----------------------------------------------------


@pytest.mark.parametrize("top_k", [2**63, 2**31])
def test_a_huge_top_k_is_a_400(http, top_k):
    error = error_of(post(http, C, {"prompt": "hi", "top_k": top_k, "max_tokens": 2}))
    assert error["param"] == "top_k" and "2147483647" in error["message"]


def test_top_k_at_least_the_vocabulary_keeps_every_token(http):
    def text(top_k: int) -> str:
        body = {"prompt": PROMPT, "top_k": top_k, "seed": 7, "max_tokens": 8, "ignore_eos": True}
        r = post(http, C, body)
        assert r.status_code == 200, r.text
        return r.json()["choices"][0]["text"]

    assert text(2**31 - 1) == text(383) == text(0)


@pytest.mark.parametrize("key", ["9" * 5000, "9" * 30, "383"])
def test_logit_bias_keys_past_the_vocabulary_are_a_400(http, key):
    error = error_of(post(http, C, {"prompt": "hi", "logit_bias": {key: 1}, "max_tokens": 2}))
    assert error["param"] == "logit_bias" and "Exceeds the limit" not in error["message"]


@pytest.mark.parametrize("ids", [[1000000], [383], [5, 2**70]])
def test_stop_token_ids_past_the_vocabulary_are_a_400(http, ids):
    body = {"prompt": "hi", "stop_token_ids": ids, "min_tokens": 2, "max_tokens": 4}
    error = error_of(post(http, C, body))
    assert error["param"] == "stop_token_ids" and "383" in error["message"]


def test_stop_takes_at_most_64_strings(http):
    """Each stop string is looked for at every token, on the loop every running request waits
    on: 10,000 of them had cost every request in the batch 5-8 ms a token. Repeats count once."""
    many = [f"zq{i}" for i in range(65)]
    error = error_of(post(http, C, {"prompt": "hi", "stop": many, "max_tokens": 2}))
    assert error["param"] == "stop" and "at most 64" in error["message"]
    within = many[:64] + many[:64]
    r = post(http, C, {"prompt": "hi", "stop": within, "max_tokens": 2})
    assert r.status_code == 200, r.text
    # and 16,384 characters in all (prepared for matching once a request, on the event loop)
    long = ["#" * 8192, "b" * 8193]
    error = error_of(post(http, C, {"prompt": "hi", "stop": long, "max_tokens": 2}))
    assert error["param"] == "stop" and "16384 characters" in error["message"]
    r = post(http, C, {"prompt": "hi", "stop": ["#" * 8192, "b" * 8192], "max_tokens": 2})
    assert r.status_code == 200, r.text


# ---- masks that leave no token -------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"allowed_token_ids": [0, 2], "min_tokens": 1},  # the model's stop tokens
        {"allowed_token_ids": [0, 2], "min_tokens": 1, "ignore_eos": True},  # masked all the same
        {"allowed_token_ids": [5, 0], "stop_token_ids": [5], "min_tokens": 3},
        {"allowed_token_ids": [359], "bad_words": ["fox"]},  # " fox" is one token: always banned
        {"allowed_token_ids": [359, 2], "bad_words": ["fox"], "min_tokens": 1},
    ],
)
def test_allowed_token_ids_that_leave_nothing_are_a_400(http, fields):
    error = error_of(post(http, C, {"prompt": "hi", "max_tokens": 4, **fields}))
    assert error["param"] == "allowed_token_ids" and "no token" in error["message"]


@pytest.mark.parametrize(
    "fields",
    [
        {"allowed_token_ids": [0, 2, 50], "min_tokens": 1},
        {"allowed_token_ids": [0, 2], "min_tokens": 0},
        {"allowed_token_ids": [359, 72], "bad_words": ["fox"]},
    ],
)
def test_allowed_token_ids_with_a_way_out_run(http, fields):
    r = post(http, C, {"prompt": "hi", "max_tokens": 3, **fields})
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["finish_reason"] in ("stop", "length")


@pytest.mark.parametrize("stream", [False, True])
def test_a_grammar_and_allowed_token_ids_that_leave_nothing_are_a_400_once_found(http, stream):
    """Only sampling finds that `b+` and the token `a` (id 67) exclude each other: still the
    request's doing, so a 400 (clients do not retry it as they would a 500), streamed or not,
    with the same error object both ways."""
    body = {"prompt": "hi", "max_tokens": 4, "allowed_token_ids": [67], "guided_regex": "b+"}
    error = error_of(post(http, C, body))
    assert "no token may be generated" in error["message"]
    assert (error["type"], error["code"]) == ("invalid_request_error", "invalid_request")
    if not stream:
        return
    with http.stream("POST", C, json={**body, "stream": True}) as r:
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and json.loads(events[-2])["error"] == error


# ---- the field named is the field sent -----------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fields", "param"),
    [
        (C, {"prompt": "word " * 300}, "prompt"),
        (C, {"prompt": "word " * 300, "stream": True}, "prompt"),
        (CC, {"messages": [{"role": "user", "content": "word " * 300}]}, "messages"),
        (CC, {"messages": [{"role": "user", "content": "word " * 300}], "max_tokens": 4},
         "messages"),
        (CC, {"messages": CHAT, "max_tokens": 1000}, "max_tokens"),
    ],
)  # fmt: skip
def test_a_request_past_the_context_is_openais_context_length_exceeded(http, path, fields, param):
    """OpenAI's code and words, the same from chat and completions: client libraries read
    "maximum context length" or `context_length_exceeded` to shorten a conversation and try
    again (chat had sent no code, completions "invalid_request", neither those words)."""
    error = error_of(post(http, path, fields))
    assert (error["param"], error["code"]) == (param, "context_length_exceeded"), error
    assert error["message"].startswith("This model's maximum context length is 256 tokens.")


@pytest.mark.parametrize(
    ("path", "fields", "param"),
    [
        (C, {"prompt": "x", "max_tokens": 1000000}, "max_tokens"),
        (C, {"prompt": "x", "max_completion_tokens": 1000000}, "max_completion_tokens"),
        (C, {"prompt": "x", "n_predict": 1000000}, "n_predict"),
        (CC, {"messages": CHAT, "max_completion_tokens": 1000000}, "max_completion_tokens"),
        (G, {"prompt": "x", "max_new_tokens": 1000000}, "max_new_tokens"),
    ],
)
def test_an_output_limit_past_the_context_names_the_field_sent(http, path, fields, param):
    error = error_of(post(http, path, fields))
    assert error["param"] == param
    assert (
        f"{param} (1000000)" in error["message"]
        and "maximum context length is 256 tokens" in error["message"]
    )
    assert error["code"] == "context_length_exceeded"


@pytest.mark.parametrize(
    ("path", "fields", "param"),
    [
        (C, {"prompt": list(range(1, 300)), "max_tokens": 1}, "prompt"),
        (CC, {"messages": [{"role": "user", "content": "Hello, world! " * 100}]}, "messages"),
        (C, {"prompt": [99999]}, "prompt"),
        (C, {"prompt": [-1]}, "prompt"),
        (C, {"prompt": [[1, 2], [5, 383]]}, "prompt"),
        (G, {"prompt": ""}, "prompt"),
    ],
)
def test_a_bad_prompt_is_named(http, path, fields, param):
    assert error_of(post(http, path, fields))["param"] == param


def test_a_default_output_limit_is_cut_to_what_the_context_leaves(http):
    """Completions' 16 by default, for a prompt 7 tokens short of the context: 7 (vLLM's
    `get_max_tokens`), where a limit sent past the context is a 400 naming it."""
    body = {"prompt": list(range(1, 250)), "ignore_eos": True}
    out = post(http, C, body).json()
    assert out["choices"][0]["finish_reason"] == "length"
    assert out["usage"]["completion_tokens"] == 256 - 249
    assert error_of(post(http, C, {**body, "max_tokens": 16}))["param"] == "max_tokens"
    error = error_of(post(http, C, {**body, "min_tokens": 10}))  # past what the context leaves
    assert (error["param"], error["code"]) == ("min_tokens", "context_length_exceeded")
    error = error_of(post(http, C, {"prompt": "Hi", "min_tokens": 20}))  # past the default 16
    assert error["param"] == "min_tokens" and "default output limit, 16" in error["message"]


# ---- usage -----------------------------------------------------------------------------------


def test_usage_counts_each_prompt_once_whatever_n(http):
    count = prompt_count(http, PROMPT)
    body = {"prompt": PROMPT, "n": 3, "max_tokens": 2, "ignore_eos": True}
    usage = post(http, C, body).json()["usage"]
    assert usage == {"prompt_tokens": count, "completion_tokens": 6, "total_tokens": count + 6}
    two = post(http, C, {**body, "prompt": [PROMPT, "Hello"]}).json()["usage"]
    assert two["prompt_tokens"] == count + prompt_count(http, "Hello")
    assert two["completion_tokens"] == 12


def test_streamed_usage_counts_each_prompt_once_whatever_n(http):
    messages = [{"role": "user", "content": PROMPT}]
    count = http.post("/tokenize", json={"messages": messages}).json()["count"]
    body = {"messages": messages, "n": 2, "max_tokens": 3, "ignore_eos": True, "stream": True,
            "stream_options": {"include_usage": True}}  # fmt: skip
    with http.stream("POST", CC, json=body) as r:
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    usage = json.loads(events[-2])["usage"]
    assert usage == {"prompt_tokens": count, "completion_tokens": 6, "total_tokens": count + 6}


# ---- echo ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("prompt", ["<|im_start|>Hello", "Hello<|endoftext|>", [1, 72, 0]])
def test_echo_keeps_special_tokens_as_sent(http, prompt, stream):
    body = {"prompt": prompt, "echo": True, "logprobs": 0, "max_tokens": 2, "ignore_eos": True,
            "temperature": 0, "stream": stream}  # fmt: skip
    if stream:
        with http.stream("POST", C, json=body) as r:
            events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
        choices = [json.loads(e)["choices"][0] for e in events[:-1]]
        text = "".join(c["text"] for c in choices)
        tokens = [t for c in choices for t in c["logprobs"]["tokens"]]
        offsets = [o for c in choices for o in c["logprobs"]["text_offset"]]
    else:
        choice = post(http, C, body).json()["choices"][0]
        text, tokens = choice["text"], choice["logprobs"]["tokens"]
        offsets = choice["logprobs"]["text_offset"]
    sent = prompt
    if not isinstance(prompt, str):  # the ids' text, special tokens kept (as /detokenize)
        sent = http.post("/detokenize", json={"tokens": prompt}).json()["prompt"]
        assert sent.startswith("<|im_start|>") and sent.endswith("<|endoftext|>")
    assert text.startswith(sent)
    # a token of part of a character is named by its bytes (`bytes:\\x9f`, OpenAI's legacy form)
    raw = [bytes.fromhex(t[6:].replace("\\x", "")) if t.startswith("bytes:") else t.encode()
           for t in tokens]  # fmt: skip
    assert b"".join(raw).decode("utf-8", "replace") == text
    assert all(text[o:].startswith(t) for o, t in zip(offsets, tokens, strict=True)
               if not t.startswith("bytes:"))  # fmt: skip


def test_a_compressed_body_is_a_415_naming_its_encoding(http):
    """gzip had been read as if plain: a 400 saying the body was not valid JSON."""
    import gzip

    raw = gzip.compress(json.dumps({"prompt": "hi", "max_tokens": 2}).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    r = http.post("/v1/completions", content=raw, headers=headers)
    assert r.status_code == 415 and "'gzip' is not supported" in r.json()["error"]["message"]
    r = http.post("/tokenize", content=raw, headers=headers)
    assert r.status_code == 415, r.text


@pytest.mark.parametrize(
    "content_type",
    ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data", None],
)
def test_a_body_that_is_not_declared_json_is_a_415(http, tiny_server, content_type):
    """The types a page of another origin may post without a CORS preflight (and a body with
    no type) are refused before anything runs: a server without an API key had generated for
    whatever page a user opened. curl's `-d` without `-H` sends a form type: the message says
    what to send."""
    before = tiny_server[0].state.client.engine.stats().num_running  # (nothing queued below)
    raw = json.dumps({"prompt": "hi", "max_tokens": 2}).encode()
    headers = {} if content_type is None else {"Content-Type": content_type}
    for path in ("/v1/completions", "/v1/chat/completions", "/tokenize", "/generate"):
        r = http.post(path, content=raw, headers=headers)
        assert r.status_code == 415, (path, r.text)
        error = r.json()["error"]
        assert error["code"] == "unsupported_media_type" and "application/json" in error["message"]
    assert tiny_server[0].state.client.engine.stats().num_running == before
    for declared in ("application/json; charset=utf-8", "Application/JSON", "application/x+json"):
        r = http.post("/v1/completions", content=raw, headers={"Content-Type": declared})
        assert r.status_code == 200, (declared, r.text)


def test_bad_words_take_at_most_1024_words_of_100_characters(http):
    """Each sequence's bad words are indexed on the engine loop and looked up at every step
    once per length of their heads: 400,000 words had taken 2 s to index."""
    for words in ([f"w{i}" for i in range(1025)], ["x" * 101]):
        error = error_of(post(http, C, {"prompt": "hi", "bad_words": words, "max_tokens": 2}))
        assert error["param"] == "bad_words" and "at most 1024 words" in error["message"]
    within = {"prompt": "hi", "bad_words": [f"w{i}" for i in range(1024)], "max_tokens": 2}
    assert post(http, C, within).status_code == 200


def test_a_burst_into_an_idle_server_is_not_refused_as_waiting(tiny_model_dir):
    """--max-waiting-requests bounds the requests waiting for a seat: 8 sent at once to an idle
    server with 64 seats all run. They had been counted as waiting until the engine thread took
    them in, and 6 of the 8 were refused (503) every time with a limit of 2."""
    import asyncio

    from conftest import serve_in_process

    from roseinfer.server.config import ServerConfig

    async def burst(url: str) -> list[int]:
        body = {"prompt": "burst", "max_tokens": 2}
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            replies = await asyncio.gather(*(client.post("/v1/completions", json=body)
                                             for _ in range(8)))  # fmt: skip
        return [r.status_code for r in replies]

    config = ServerConfig(max_waiting_requests=2)
    with serve_in_process(tiny_model_dir("llama"), server_config=config) as (app, url):
        for _ in range(3):
            assert asyncio.run(burst(url)) == [200] * 8


def test_the_x_request_id_header_names_the_response_and_comes_back(http):
    """vLLM's: a request's `X-Request-Id` names its response (`chatcmpl-<id>`) where the body
    gives no `request_id`, and comes back as a header on every response, errors included (it
    had been ignored)."""
    headers = {"Content-Type": "application/json", "X-Request-Id": "gw-42"}
    r = http.post(CC, json={"messages": CHAT, "max_tokens": 2}, headers=headers)
    assert (r.json()["id"], r.headers["x-request-id"]) == ("chatcmpl-gw-42", "gw-42")
    with http.stream("POST", C, json={"prompt": "x", "max_tokens": 2, "stream": True},
                     headers=headers) as r:  # fmt: skip
        assert r.headers["x-request-id"] == "gw-42"
        ids = {json.loads(line[6:])["id"] for line in r.iter_lines()
               if line.startswith("data: {")}  # fmt: skip
    assert ids == {"cmpl-gw-42"}
    r = http.post(C, json={"prompt": "x", "max_tokens": 2, "request_id": "own"}, headers=headers)
    assert (r.json()["id"], r.headers["x-request-id"]) == ("cmpl-own", "gw-42")  # the body's
    r = http.post(C, json={"prompt": "x", "max_tokens": 0}, headers=headers)
    assert (r.status_code, r.headers["x-request-id"]) == (400, "gw-42")
    assert "x-request-id" not in http.post(C, json={"prompt": "x", "max_tokens": 1}).headers
    # UTF-8 (as clients send it), not read as Latin-1
    r = http.post(C, json={"prompt": "x", "max_tokens": 1},
                  headers={"Content-Type": "application/json",
                           "X-Request-Id": "café".encode()})  # fmt: skip
    assert r.json()["id"] == "cmpl-café"


@pytest.mark.parametrize("stream", [False, True])
def test_echo_with_max_tokens_0_is_the_prompt_alone_with_its_logprobs(http, stream):
    """OpenAI's old scoring form, as vLLM answers it: `echo` with `max_tokens: 0` gives the
    prompt and its logprobs, no completion (it had been a 400: max_tokens must be >= 1)."""
    body = {"prompt": "score this text", "max_tokens": 0, "echo": True, "logprobs": 1, "n": 2,
            "stream": stream, **({"stream_options": {"include_usage": True}} if stream else {})}  # fmt: skip
    whole = http.post(C, json={**body, "max_tokens": 4, "stream": False,
                               "stream_options": None}).json()  # fmt: skip
    prompt_lp = whole["choices"][0]["logprobs"]
    if stream:
        with http.stream("POST", C, json=body) as r:
            events = [json.loads(line[6:]) for line in r.iter_lines()
                      if line.startswith("data: {")]  # fmt: skip
        usage = events[-1]["usage"]
        choices: dict[int, dict] = {}
        for event in events[:-1]:
            for c in event["choices"]:
                got = choices.setdefault(c["index"], {"text": "", "tokens": [], "finish": None})
                got["text"] += c["text"]
                got["tokens"] += (c["logprobs"] or {}).get("tokens", [])
                got["finish"] = c["finish_reason"] or got["finish"]
        read = [(c["text"], c["tokens"], c["finish"]) for _, c in sorted(choices.items())]
    else:
        r = http.post(C, json=body).json()
        usage = r["usage"]
        read = [(c["text"], c["logprobs"]["tokens"], c["finish_reason"]) for c in r["choices"]]
    n_prompt = usage["prompt_tokens"]
    assert usage["completion_tokens"] == 0 and len(read) == 2
    for text, tokens, finish in read:
        assert (text, finish) == ("score this text", "length")
        assert tokens == prompt_lp["tokens"][:n_prompt] and len(tokens) == n_prompt
    r = http.post(C, json={"prompt": "x", "max_tokens": 0})  # without echo: still a 400
    assert error_of(r)["param"] == "max_tokens"
    r = http.post(C, json={"prompt": "x", "max_tokens": 0, "echo": True, "min_tokens": 1})
    assert error_of(r)["param"] == "min_tokens"  # not "max_tokens=1", which nobody sent


def test_an_unknown_url_or_method_is_named_in_the_error(http):
    """OpenAI's "Invalid URL (POST /v1/moderations)": the error says which (it said "Not Found")."""
    r = http.post("/v1/moderations", json={"input": "x"})
    assert r.status_code == 404 and "POST /v1/moderations" in r.json()["error"]["message"]
    r = http.delete("/health")
    assert r.status_code == 405 and "DELETE /health" in r.json()["error"]["message"]


def test_requests_held_back_by_the_kv_cache_count_as_waiting(tiny_model_dir):
    """With the KV cache full, requests wait while seats (`max_num_seqs`) are free: they count
    toward --max-waiting-requests all the same (the free seats had cancelled them out, and
    nothing was refused); once they are gone (aborted, no step since), a burst is taken."""
    import asyncio
    import time

    from conftest import serve_in_process

    from roseinfer.server.config import ServerConfig

    body = {"prompt": "word " * 40, "max_tokens": 150, "ignore_eos": True}

    async def crowd(url: str, client) -> int:
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            running = [asyncio.ensure_future(http.post("/v1/completions", json=body))
                       for _ in range(12)]  # fmt: skip
            deadline = time.monotonic() + 60
            held = client.engine.last_step  # a step's stats, after it scheduled
            while held.num_waiting < 2 and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
                held = client.engine.last_step
            assert held.num_waiting >= 2 and held.num_running < 64, held  # seats were free
            late = await http.post("/v1/completions", json={**body, "max_tokens": 1})
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            # the held-back requests gone with their clients, the idle server takes a burst
            while client.engine.has_unfinished() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            short = {"prompt": "burst", "max_tokens": 1}
            burst = await asyncio.gather(*(http.post("/v1/completions", json=short)
                                           for _ in range(8)))  # fmt: skip
            return late.status_code, [r.status_code for r in burst]

    config = ServerConfig(max_waiting_requests=2)
    with serve_in_process(tiny_model_dir("llama"), 16, config) as (app, url):
        assert asyncio.run(crowd(url, app.state.client)) == (503, [200] * 8)


def test_structured_outputs_holding_only_options_asks_for_nothing(http):
    """vLLM's options without a constraint key (beside response_format, or alone) ask for no
    constraint of their own, as vLLM reads them (they had been a 400: 'exactly one of')."""
    plain = post(http, C, {"prompt": "hi", "max_tokens": 3, "temperature": 0}).json()
    options = {"disable_fallback": True, "disable_any_whitespace": False}
    r = post(http, C, {"prompt": "hi", "max_tokens": 3, "temperature": 0,
                       "structured_outputs": options})  # fmt: skip
    assert r.status_code == 200 and r.json()["choices"] == plain["choices"], r.text
    fmt = {"type": "json_object"}
    r = post(http, CC, {"messages": CHAT, "max_tokens": 8, "response_format": fmt,
                        "structured_outputs": options})  # fmt: skip
    assert r.status_code == 200, r.text


def test_max_waiting_requests_counts_what_a_request_adds(tiny_model_dir, monkeypatch):
    """A request of several prompts (or n choices, or embedding inputs) adds that many engine
    requests: with some waiting, it is refused where they would pass the limit (one HTTP request
    of 2,048 inputs had counted as one); an empty queue takes it whole."""
    from conftest import serve_in_process

    from roseinfer.engine.client import EngineClient
    from roseinfer.server.config import ServerConfig

    waiting = [1]
    monkeypatch.setattr(EngineClient, "num_waiting", property(lambda self: waiting[0]))
    config = ServerConfig(max_waiting_requests=2)
    with serve_in_process(tiny_model_dir("llama"), server_config=config) as (_, url):

        def status(path: str, body: dict) -> int:
            r = httpx.post(url + path, json=body, timeout=60)
            assert r.status_code != 503 or "this request adds" in r.text or waiting[0] >= 2
            return r.status_code

        one = {"prompt": "x", "max_tokens": 1}
        assert status("/v1/completions", one) == 200  # 1 waiting + 1 = the limit
        assert status("/v1/completions", {**one, "prompt": ["x", "y"]}) == 503
        assert status("/v1/completions", {**one, "n": 2}) == 503
        assert status("/v1/embeddings", {"input": ["x", "y"]}) == 503
        assert status("/v1/embeddings", {"input": ["x"]}) == 200
        waiting[0] = 0  # an empty queue takes a request larger than the limit whole
        assert status("/v1/completions", {**one, "prompt": ["x", "y", "z"]}) == 200
        assert status("/v1/embeddings", {"input": ["x", "y", "z"]}) == 200
        waiting[0] = 2
        assert status("/v1/completions", one) == 503


# ---- vLLM's return_token_ids and continuous_usage_stats ------------------------------------


def streamed(http: httpx.Client, path: str, body: dict) -> list[dict]:
    with http.stream("POST", path, json={**body, "stream": True}) as r:
        assert r.status_code == 200, r.read()
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    return [json.loads(e) for e in events[:-1]]


def test_return_token_ids_in_chat_alone_and_streamed(http):
    body = {"messages": CHAT, "max_tokens": 8, "temperature": 0, "ignore_eos": True, "n": 2,
            "return_token_ids": True}  # fmt: skip
    r = post(http, CC, body).json()
    prompt = http.post("/tokenize", json={"messages": CHAT}).json()["tokens"]
    assert r["prompt_token_ids"] == prompt
    for choice in r["choices"]:
        ids = choice["token_ids"]
        assert len(ids) == 8 and r["usage"]["completion_tokens"] == 16
        text = http.post("/detokenize", json={"tokens": ids}).json()["prompt"]
        assert text == choice["message"]["content"]
    chunks = streamed(http, CC, body)
    for index in (0, 1):
        mine = [c for c in chunks if c["choices"] and c["choices"][0]["index"] == index]
        assert mine[0]["prompt_token_ids"] == prompt  # the opening chunk's
        assert all("prompt_token_ids" not in c for c in mine[1:])
        joined = [t for c in mine for t in c["choices"][0]["token_ids"]]
        assert joined == r["choices"][index]["token_ids"]
    assert "prompt_token_ids" not in post(http, CC, {**body, "return_token_ids": False}).json()


@pytest.mark.parametrize("echo", [False, True])
def test_return_token_ids_in_completions_alone_and_streamed(http, echo):
    body = {"prompt": [PROMPT, "Hello"], "max_tokens": 6, "temperature": 0, "ignore_eos": True,
            "echo": echo, "return_token_ids": True}  # fmt: skip
    r = post(http, C, body).json()
    for choice, text in zip(r["choices"], body["prompt"], strict=True):
        prompt = http.post("/tokenize", json={"prompt": text}).json()["tokens"]
        assert choice["prompt_token_ids"] == prompt and len(choice["token_ids"]) == 6
        out = http.post("/detokenize", json={"tokens": choice["token_ids"]}).json()["prompt"]
        assert choice["text"] == (text if echo else "") + out
    chunks = streamed(http, C, body)
    for choice in r["choices"]:
        mine = [c["choices"][0] for c in chunks if c["choices"][0]["index"] == choice["index"]]
        assert mine[0]["prompt_token_ids"] == choice["prompt_token_ids"]
        assert all("prompt_token_ids" not in c for c in mine[1:])
        assert [t for c in mine for t in c["token_ids"]] == choice["token_ids"]
    # echo with max_tokens 0, the prompt alone: no output ids
    r = post(http, C, {**body, "echo": True, "max_tokens": 0}).json()
    assert all(c["token_ids"] == [] for c in r["choices"])


def test_continuous_usage_stats_counts_each_choices_tokens_so_far(http):
    body = {"messages": CHAT, "max_tokens": 5, "temperature": 0, "ignore_eos": True, "n": 2,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}}  # fmt: skip
    chunks = streamed(http, CC, body)
    prompt = http.post("/tokenize", json={"messages": CHAT}).json()["count"]
    *choice_chunks, last = chunks
    assert last["choices"] == [] and last["usage"]["completion_tokens"] == 10
    for index in (0, 1):
        mine = [c for c in choice_chunks if c["choices"][0]["index"] == index]
        counts = [c["usage"]["completion_tokens"] for c in mine]
        assert counts[0] == 0 and counts == sorted(counts) and counts[-1] == 5
        assert all(c["usage"]["prompt_tokens"] == prompt for c in mine)
        assert all(
            c["usage"]["total_tokens"] == prompt + n for c, n in zip(mine, counts, strict=True)
        )
    body = {"prompt": PROMPT, "max_tokens": 3, "echo": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}}  # fmt: skip
    counts = [c["usage"]["completion_tokens"] for c in streamed(http, C, body)]
    assert counts[0] == 0 and counts[-2] == counts[-1] == 3  # the echo chunk; the usage chunk
    r = post(http, CC, {"messages": CHAT, "stream": True,
                        "stream_options": {"continuous_usage_stats": True}})  # fmt: skip
    assert error_of(r)["param"] == "stream_options.continuous_usage_stats"


@pytest.mark.parametrize("path", [C, CC])
def test_include_stop_str_in_output_keeps_the_stop_string(http, path):
    """vLLM's include_stop_str_in_output: the text ends with the stop string that ended it,
    alone and streamed (a stream holds nothing back then)."""
    body: dict = {"max_tokens": 12, "temperature": 0, "ignore_eos": True}
    body |= {"prompt": PROMPT} if path == C else {"messages": CHAT}

    def text_of(r: dict) -> str:
        choice = r["choices"][0]
        return choice["text"] if path == C else choice["message"]["content"]

    ref = text_of(post(http, path, body).json())
    stop = ref[len(ref) // 2 : len(ref) // 2 + 2]
    assert stop.strip() and ref.find(stop) > 0
    cut = post(http, path, {**body, "stop": [stop]}).json()
    kept = post(http, path, {**body, "stop": [stop], "include_stop_str_in_output": True}).json()
    assert text_of(cut) == ref[: ref.find(stop)] and text_of(kept) == text_of(cut) + stop
    assert kept["choices"][0]["finish_reason"] == "stop"
    chunks = streamed(http, path, {**body, "stop": [stop], "include_stop_str_in_output": True})
    key = "text" if path == C else "content"
    pieces = [c["choices"][0].get(key) if path == C else c["choices"][0]["delta"].get(key)
              for c in chunks]  # fmt: skip
    assert "".join(p for p in pieces if p) == text_of(kept)
    # a stop token's text too (vLLM's), alone and streamed
    ids = post(http, path, {**body, "return_token_ids": True}).json()["choices"][0]["token_ids"]
    stop_id = ids[3]
    cut = ids.index(stop_id) + 1
    want = http.post("/detokenize", json={"tokens": ids[:cut]}).json()["prompt"]
    asked = {**body, "stop_token_ids": [stop_id], "include_stop_str_in_output": True}
    assert text_of(post(http, path, asked).json()) == want
    pieces = [c["choices"][0].get(key) if path == C else c["choices"][0]["delta"].get(key)
              for c in streamed(http, path, asked)]  # fmt: skip
    assert "".join(p for p in pieces if p) == want
    asked["include_stop_str_in_output"] = False
    less = http.post("/detokenize", json={"tokens": ids[: cut - 1]}).json()["prompt"]
    assert text_of(post(http, path, asked).json()) == less


@pytest.mark.parametrize("stream", [False, True])
def test_skip_special_tokens_false_writes_their_text(http, stream):
    """vLLM's skip_special_tokens: false: a special token the output holds is in its text."""
    [special] = http.post("/tokenize", json={"prompt": "<|im_start|>"}).json()["tokens"]
    body = {"prompt": PROMPT, "max_tokens": 3, "temperature": 0, "ignore_eos": True,
            "logit_bias": {str(special): 100}}  # fmt: skip
    texts = {}
    for skip in (True, False):
        if stream:
            chunks = streamed(http, C, {**body, "skip_special_tokens": skip})
            texts[skip] = "".join(c["choices"][0]["text"] for c in chunks)
        else:
            texts[skip] = post(http, C, {**body, "skip_special_tokens": skip}).json()["choices"][0][
                "text"
            ]
    assert texts == {True: "", False: "<|im_start|>" * 3}


@pytest.mark.parametrize("stream", [False, True])
def test_return_tokens_as_token_ids_names_logprobs_tokens_by_id(http, stream):
    """vLLM's return_tokens_as_token_ids: `token_id:N` for each token of the logprobs."""
    common = {"max_tokens": 4, "temperature": 0, "ignore_eos": True, "return_token_ids": True,
              "return_tokens_as_token_ids": True}  # fmt: skip
    for path, body in ((C, {"prompt": PROMPT, "logprobs": 2}),
                       (CC, {"messages": CHAT, "logprobs": True, "top_logprobs": 2})):  # fmt: skip
        if stream:
            choices = [c["choices"][0] for c in streamed(http, path, {**common, **body})
                       if c["choices"]]  # fmt: skip
        else:
            choices = [post(http, path, {**common, **body}).json()["choices"][0]]
        ids = [t for c in choices for t in c["token_ids"]]
        if path == C:
            lp = [c["logprobs"] for c in choices if c["logprobs"]]
            names = [t for one in lp for t in one["tokens"]]
            keys = {k for one in lp for top in one["top_logprobs"] for k in top}
        else:
            content = [e for c in choices if c["logprobs"] for e in c["logprobs"]["content"]]
            names = [e["token"] for e in content]
            keys = {t["token"] for e in content for t in e["top_logprobs"]}
            named = {**common, **body, "return_tokens_as_token_ids": False, "stream": False}
            by_text = post(http, path, named).json()["choices"][0]["logprobs"]["content"]
            assert [e["bytes"] for e in content] == [e["bytes"] for e in by_text]  # its own
        assert names == [f"token_id:{t}" for t in ids] and len(ids) == 4
        assert keys and all(k.startswith("token_id:") and k[9:].isdigit() for k in keys)
