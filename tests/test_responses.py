"""/v1/responses (OpenAI's Responses API) through a real server and the `openai` client.

The oracle is the chat endpoint: a Responses request runs as the chat request it describes, so
its greedy text, tokens, logprobs and calls must equal chat's for the same conversation and
settings, streamed or not; every body and event must parse as the `openai` package's own
types; fields that cannot act are 400s naming the field as the Responses request sent it."""

from __future__ import annotations

import json
import time

import httpx
import jsonschema
import pytest
from conftest import read_events, response_text, serve_in_process
from openai.types.responses import Response

from roseinfer.outputs import RequestFailed
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.openapi import responses_body_model
from roseinfer.server.responses_fields import RESPONSES_FIELDS

ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
                   "b": {"type": "integer", "minimum": 0, "maximum": 99}},
    "required": ["a", "b"],
    "additionalProperties": False,
}  # fmt: skip
TOOLS = [{"type": "function", "name": "add", "description": "Add two numbers",
          "parameters": ADD, "strict": True}]  # fmt: skip
CHAT_TOOLS = [{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}}
              for t in TOOLS]  # fmt: skip
CALL = {"type": "function_call", "call_id": "call_1", "name": "add", "arguments": '{"a": 1}'}


def create(http: httpx.Client, body: dict) -> dict:
    r = http.post("/v1/responses", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    Response.model_validate(out)  # the openai package's own type
    return out


def chat(http: httpx.Client, body: dict) -> dict:
    r = http.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def refused(http: httpx.Client, body: dict) -> dict:
    r = http.post("/v1/responses", json=body)
    assert r.status_code == 400, r.text
    return r.json()["error"]


def events(http: httpx.Client, body: dict) -> list[dict]:
    """The stream's events, each checked as the openai package's own event type and against
    its `event:` line."""
    with http.stream("POST", "/v1/responses", json={**body, "stream": True}) as r:
        out = read_events(r)
    assert [e["sequence_number"] for e in out] == list(range(len(out)))
    return out


def test_text_equals_chats_streamed_or_not(http, sdk):
    body = {"input": "Hello there", "max_output_tokens": 12, "temperature": 0, "ignore_eos": True}
    response = create(http, body)
    reference = chat(http, {"messages": [{"role": "user", "content": "Hello there"}],
                            "max_tokens": 12, "temperature": 0, "ignore_eos": True})  # fmt: skip
    assert response_text(response) == reference["choices"][0]["message"]["content"]
    use = response["usage"]
    assert (use["input_tokens"], use["output_tokens"]) == (
        reference["usage"]["prompt_tokens"], reference["usage"]["completion_tokens"])  # fmt: skip
    assert use["total_tokens"] == use["input_tokens"] + use["output_tokens"]
    # cut by max_output_tokens: incomplete, as OpenAI's
    assert response["status"] == "incomplete" and response["output"][0]["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["id"].startswith("resp_") and response["object"] == "response"
    assert response["max_output_tokens"] == 12 and response["store"] is True
    stream = events(http, body)
    kinds = [e["type"] for e in stream]
    assert kinds[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]  # fmt: skip
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.incomplete"]  # fmt: skip
    deltas = "".join(e["delta"] for e in stream if e["type"] == "response.output_text.delta")
    assert deltas == response_text(response) == response_text(stream[-1]["response"])
    assert stream[-1]["response"]["usage"]["output_tokens"] == 12
    # the same prompt again: its full blocks come from the prefix cache
    assert stream[-1]["response"]["usage"]["input_tokens_details"]["cached_tokens"] >= 16
    # the SDK reads both
    again = sdk.responses.create(input=body["input"], max_output_tokens=12, temperature=0,
                                 model=response["model"], extra_body={"ignore_eos": True})  # fmt: skip
    assert again.output_text == deltas
    with sdk.responses.stream(input=body["input"], max_output_tokens=12, temperature=0,
                              model=response["model"], extra_body={"ignore_eos": True}) as s:  # fmt: skip
        last = list(s)[-1]  # (get_final_response() wants a completed one, as with OpenAI)
    assert last.type == "response.incomplete" and last.response.output_text == deltas


def test_a_response_that_finishes_is_completed(http):
    body = {"input": "Hi", "max_output_tokens": 40, "temperature": 0, "stop": [" "]}
    reference = chat(http, {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 40,
                            "temperature": 0, "stop": [" "]})  # fmt: skip
    response = create(http, body)
    finish = reference["choices"][0]["finish_reason"]
    assert response["status"] == ("completed" if finish == "stop" else "incomplete")
    assert response_text(response) == reference["choices"][0]["message"]["content"]


def test_instructions_and_input_items_are_the_chat_conversation(http):
    """instructions -> the first system message; items (a developer message, an assistant's
    output_text, its function_call, the call's output) -> chat's messages with tool_calls."""
    items = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text",
                                                             "text": "Be brief."}]},
        {"role": "user", "content": "Add 2 and 3"},
        {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
         "content": [{"type": "output_text", "text": "Calling.", "annotations": [],
                      "logprobs": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
         "arguments": '{"a": 2, "b": 3}', "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "5"},
        {"role": "user", "content": [{"type": "input_text", "text": "And?"}]},
    ]  # fmt: skip
    messages = [
        {"role": "system", "content": "You add."},
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Add 2 and 3"},
        {"role": "assistant", "content": "Calling.", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
        {"role": "user", "content": "And?"},
    ]  # fmt: skip
    settings = {"temperature": 0, "ignore_eos": True}
    response = create(http, {"instructions": "You add.", "input": items, "tools": TOOLS,
                             "tool_choice": "none", "max_output_tokens": 8, **settings})  # fmt: skip
    reference = chat(http, {"messages": messages, "tools": CHAT_TOOLS, "tool_choice": "none",
                            "max_tokens": 8, **settings})  # fmt: skip
    assert response["usage"]["input_tokens"] == reference["usage"]["prompt_tokens"]
    assert response_text(response) == reference["choices"][0]["message"]["content"]
    assert response["instructions"] == "You add." and response["tool_choice"] == "none"
    assert response["tools"][0]["name"] == "add" and response["tools"][0]["strict"] is True


@pytest.mark.parametrize("choice", ["required", {"type": "function", "name": "add"}])
def test_calls_are_function_call_items_streamed_or_not(http, choice):
    body = {"input": "Add 2 and 3", "tools": TOOLS, "tool_choice": choice, "temperature": 0,
            "parallel_tool_calls": False}  # fmt: skip
    response = create(http, body)
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    assert len(calls) == 1 and calls[0]["name"] == "add" and calls[0]["status"] == "completed"
    jsonschema.validate(json.loads(calls[0]["arguments"]), ADD)
    assert calls[0]["call_id"].startswith("call_") and calls[0]["id"].startswith("fc_")
    chat_choice = {"type": "function", "function": {"name": "add"}} if choice != "required" \
        else choice  # fmt: skip
    reference = chat(http, {"messages": [{"role": "user", "content": "Add 2 and 3"}],
                            "tools": CHAT_TOOLS, "tool_choice": chat_choice, "temperature": 0,
                            "parallel_tool_calls": False})  # fmt: skip
    (ref_call,) = reference["choices"][0]["message"]["tool_calls"]
    assert calls[0]["arguments"] == ref_call["function"]["arguments"]
    stream = events(http, body)
    added = [e for e in stream if e["type"] == "response.output_item.added"]
    done = [e for e in stream if e["type"] == "response.function_call_arguments.done"]
    deltas = "".join(e["delta"] for e in stream
                     if e["type"] == "response.function_call_arguments.delta")  # fmt: skip
    assert len(added) == len(done) == 1 and added[0]["item"]["type"] == "function_call"
    assert deltas == done[0]["arguments"] == calls[0]["arguments"]
    assert done[0]["item_id"] == added[0]["item"]["id"]
    assert stream[-1]["type"] == "response.completed"
    assert stream[-1]["response"]["output"][-1]["arguments"] == calls[0]["arguments"]


def test_text_format_holds_the_output_to_the_schema(http):
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0,
              "maximum": 9}}, "required": ["n"], "additionalProperties": False}  # fmt: skip
    fmt = {"type": "json_schema", "name": "digit", "schema": schema, "strict": True}
    for seed in range(3):
        body = {"input": "A digit", "text": {"format": fmt}, "temperature": 1.0, "seed": seed}
        response = create(http, body)
        jsonschema.validate(json.loads(response_text(response)), schema)
        assert response["text"]["format"] == fmt
        stream = events(http, body)
        assert response_text(stream[-1]["response"]) == response_text(
            response
        )  # seeded: the same draw
    bad = json.dumps({"input": "x", "text": {"format": {**fmt, "schema": {"type": "object"}}}})
    bad = bad.replace('{"type": "object"}', '{"type": "object", "maximum": 1e999}')
    r = http.post("/v1/responses", content=bad, headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "text.format.schema"), r.text


def test_logprobs_through_include_equal_chats(http):
    body = {"input": "Hello", "max_output_tokens": 5, "temperature": 0, "ignore_eos": True,
            "include": ["message.output_text.logprobs"], "top_logprobs": 3}  # fmt: skip
    response = create(http, body)
    reference = chat(http, {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 5,
                            "temperature": 0, "ignore_eos": True, "logprobs": True,
                            "top_logprobs": 3})  # fmt: skip
    logprobs = response["output"][0]["content"][0]["logprobs"]
    same_as(logprobs, reference["choices"][0]["logprobs"]["content"])
    assert len(logprobs) == 5 and all(len(lp["top_logprobs"]) == 3 for lp in logprobs)
    stream = events(http, body)
    streamed = [lp for e in stream if e["type"] == "response.output_text.delta"
                for lp in e["logprobs"]]  # fmt: skip
    same_as(streamed, logprobs)
    # without include: none returned, and asking for top ones is refused rather than dropped
    assert create(http, {**body, "include": [], "top_logprobs": 0})["output"][0]["content"][0][
        "logprobs"] == []  # fmt: skip
    assert refused(http, {**body, "include": []})["param"] == "top_logprobs"


def same_as(logprobs: list[dict], reference: list[dict]) -> None:
    """The same tokens; logprobs up to rounding (a prefix-cache hit computes the prompt in
    another shape: README, "Alone or batched")."""

    def flat(entries: list[dict]) -> list[tuple]:
        return [(e["token"], e["bytes"], e["logprob"]) for entry in entries
                for e in (entry, *entry["top_logprobs"])]  # fmt: skip

    got, want = flat(logprobs), flat(reference)
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert [g[2] for g in got] == pytest.approx([w[2] for w in want], abs=1e-4)


@pytest.mark.parametrize("fields", [
    {"seed": 3, "temperature": 1.0},
    {"stop": "the plain text's fourth character", "temperature": 0},
    {"top_k": 2, "seed": 1, "temperature": 1.0},
    {"logit_bias": {"65": 100}, "temperature": 0},
    {"repetition_penalty": 3.0, "temperature": 0},
    {"min_p": 0.2, "seed": 2, "temperature": 1.0},
    {"presence_penalty": 2.0, "frequency_penalty": 2.0, "temperature": 0},
    {"structured_outputs": {"choice": ["yes", "no"]}, "temperature": 0},
])  # fmt: skip
def test_chats_fields_act_the_same(http, fields):
    """Fields shared with chat (README's table lists /v1/responses beside them) pass through:
    the text equals chat's with the same fields, and differs from the text without them."""
    base = {"max_output_tokens": 10, "ignore_eos": True}
    if "stop" in fields:  # a stop string the plain greedy text holds
        fields = {**fields, "stop": [response_text(create(http, {"input": "Hello", **base,
                                                            "temperature": 0}))[3]]}  # fmt: skip
    response = create(http, {"input": "Hello", **base, **fields})
    reference = chat(http, {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 10,
                            "ignore_eos": True, **fields})  # fmt: skip
    assert response_text(response) == reference["choices"][0]["message"]["content"]
    without = {k: v for k, v in fields.items() if k in ("temperature", "seed")}
    if without == fields:  # the seed itself: another seed draws another text
        without = {**fields, "seed": fields["seed"] + 100}
    assert response_text(create(http, {"input": "Hello", **base, **without})) != response_text(
        response
    )


def test_echoed_fields_and_request_id(http):
    meta = {"run": "42"}
    records = {"user": "u1", "prompt_cache_key": "k1", "safety_identifier": "s1",
               "prompt_cache_retention": "24h"}  # fmt: skip
    before = int(time.time())
    response = create(http, {"input": "Hi", "max_output_tokens": 2, "metadata": meta,
                             "request_id": "abc", "store": True, **records,
                             "ignore_eos": True, "text": {"verbosity": "medium"}})  # fmt: skip
    assert response["metadata"] == meta and {k: response[k] for k in records} == records
    assert response["status"] == "incomplete" and response["completed_at"] is None
    assert response["text"] == {"format": {"type": "text"}, "verbosity": "medium"}
    done = create(
        http, {"input": "Hi", "max_output_tokens": 16, "structured_outputs": {"choice": ["yes"]}}
    )  # (a grammar that ends)
    assert done["status"] == "completed" and before <= done["completed_at"] <= time.time()
    assert done["prompt_cache_key"] is None and done["safety_identifier"] is None
    bad = refused(http, {"input": "Hi", "prompt_cache_retention": "forever"})
    assert bad["param"] == "prompt_cache_retention"
    # reasoning that asks for nothing (each key null) is as if left out
    nothing = {"reasoning": {"effort": None, "summary": None}}
    assert create(http, {"input": "Hi", "max_output_tokens": 1, **nothing})["reasoning"] is None
    # X-Request-Id names the response too; a gateway's retry with the same one is served (under
    # an id of ours), where a body's request_id reused is the client's mistake (a 400)
    header = {"X-Request-Id": "trace-1"}
    first = http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 2},
                      headers=header).json()  # fmt: skip
    retry = http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 2},
                      headers=header).json()  # fmt: skip
    assert first["id"] == "resp_trace-1"
    assert retry["id"].startswith("resp_") and retry["id"] != first["id"]
    assert response["id"] == "resp_abc" and response["store"] is True
    assert refused(http, {"input": "Hi", "metadata": {"k": 5}})["param"] == "metadata"


@pytest.mark.parametrize(("body", "param"), [
    ({"previous_response_id": "resp_1"}, "previous_response_id"),
    ({"background": True, "store": False}, "background"),
    ({"include": ["reasoning.encrypted_content"]}, "include.0"),
    ({"tools": [{"type": "web_search"}]}, "tools.0.type"),
    ({"tool_choice": {"type": "allowed_tools", "mode": "auto"}}, "tool_choice.mode"),
    ({"input": [{"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}]},
     "input.0.encrypted_content"),  # (OpenAI's thinking: only OpenAI reads it)
    ({"input": [{"type": "item_reference", "id": "x"}]}, "input.0.type"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
     "input.0.content.0.image_url"),
    ({"input": [{"role": "user", "content": [{"type": "input_file"}]}]}, "input.0.content.0.type"),
    ({"input": [{"role": "user", "content": "x", "call_id": "c"}]}, "input.0.call_id"),
    ({"input": [{"role": "tool", "content": "x"}]}, "input.0.role"),
    ({"input": []}, "input"),
    ({"input": [{"role": "user", "content": 5}]}, "input.0.content"),
    ({"max_output_tokens": 0}, "max_output_tokens"),
    ({"max_output_tokens": 10**6}, "max_output_tokens"),
    ({"input": "x " * 3000}, "input"),
    ({"text": {"verbosity": "high"}}, "text.verbosity"),
    ({"text": {"format": {"type": "text", "schema": {}}}}, "text.format.schema"),
    ({"text": {"format": {"type": "json_schema", "name": "x"}}}, "text.format"),
    ({"text": {"format": "json"}}, "text.format"),
    ({"text": {"format": {"type": "json_schema", "name": "x", "strict": True,
                          "schema": {"type": "object"}}}}, "text.format.schema"),
    ({"tools": [{**TOOLS[0], "parameters": {"type": "string"}}]}, "tools.0.parameters"),
    ({"reasoning": {"effort": "high"}}, "reasoning"),
    ({"truncation": "middle"}, "truncation"),
    ({"tools": TOOLS, "tool_choice": {"type": "function", "name": "nope"}}, "tool_choice"),
    ({"mood": "happy"}, "mood"),
    ({"tools": ["x"]}, "tools.0"),
    ({"input": [{"type": [], "role": "user", "content": "x"}]}, "input.0.type"),
    ({"top_logprobs": False}, "top_logprobs"),
    ({"user": 5}, "user"),
    ({"top_logprobs": 21, "include": ["message.output_text.logprobs"]}, "top_logprobs"),
    ({"tools": TOOLS, "include": ["message.output_text.logprobs"]}, "include"),
    ({"tools": TOOLS, "tool_choice": {"type": "function"}}, "tool_choice.name"),
    ({"tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
    ({"tools": [{**TOOLS[0], "strict": None, "parameters": {"type": "object"}}]},
     "tools.0.parameters"),  # strict by default, as OpenAI's Responses API
    ({"input": [{"role": "user", "content": None}]}, "input.0.content"),
    ({"input": [CALL, {"type": "function_call_output", "call_id": "call_1", "output": 5}]},
     "input.1.output"),
    ({"input": [{"role": "assistant", "content": "x"}, {**CALL, "arguments": {"a": 1}}]},
     "input.1.arguments"),
    ({"input": [{"role": "assistant", "content": "x"}, {**CALL, "arguments": "[1]"}]},
     "input.1.arguments"),
    ({"input": [CALL, {"type": "function_call_output", "call_id": "zz", "output": "5"}]},
     "input.1.call_id"),
    ({"input": [CALL, {"type": "function_call_output", "call_id": "call_1", "output": "5"},
                {"type": "function_call_output", "call_id": "call_1", "output": "6"}]},
     "input.2.call_id"),  # one call, two results: OpenAI's "Duplicate value" 400
    ({"input": [CALL, {**CALL, "call_id": "call_2"},
                {"type": "function_call_output", "call_id": "call_1", "output": "5"},
                {"role": "user", "content": "And?"}]}, "input.1.call_id"),
    ({"input": [CALL, {**CALL, "call_id": "call_2"},  # ends on results, one call unanswered
                {"type": "function_call_output", "call_id": "call_1", "output": "5"}]},
     "input.1.call_id"),
    ({"input": [CALL, {**CALL, "arguments": '{"a": 2}'}]}, "input.1.call_id"),  # one id twice
    ({"stream_options": {"include_usage": True}, "stream": True}, "stream_options.include_usage"),
])  # fmt: skip
def test_what_cannot_act_is_a_400_naming_the_field_sent(http, body, param):
    err = refused(http, {"input": "Hi", **body})
    assert err["param"] == param, err
    for chat_name in (
        "messages",
        "max_completion_tokens",
        "response_format",
        "function.",
        '"function": {',
        "tool_call_id",
    ):
        assert chat_name not in err["message"], err


def test_every_honoured_field_reaches_the_chat_request():
    """The fields /v1/responses honours are chat's own (passed on) or read into chat's
    (`responses_input.py`): none can fall between the two."""
    own = {s.name for s in RESPONSES_FIELDS if s.kind is F.Kind.HONOURED and "." not in s.name
           and "[]" not in s.name}  # fmt: skip
    shared = F.honoured(F.RESPONSES) - own
    assert shared <= set(P.ChatCompletionRequest.model_fields)
    assert set(responses_body_model().model_fields) == F.honoured(F.RESPONSES)  # /docs' body
    assert own == {"input", "instructions", "max_output_tokens", "metadata", "text", "tools",
                   "tool_choice", "include", "top_logprobs", "store", "previous_response_id", "user",
                   "truncation", "background", "conversation", "prompt_cache_key",
                   "prompt_cache_retention", "safety_identifier"}  # fmt: skip


def test_a_failure_mid_stream_is_response_failed(http, served):
    """A request the engine fails after the stream began: a `response.failed` event naming
    the error, and the server serves the next request."""
    client = served[0].state.client
    body = {"input": "Hi", "max_output_tokens": 4, "temperature": 0}

    def failing(state, event):
        raise RequestFailed("boom")

    real_apply = client.apply_event
    client.apply_event = failing
    try:
        stream = events(http, body)
    finally:
        client.apply_event = real_apply
    assert stream[-1]["type"] == "response.failed"
    assert stream[-1]["response"]["error"]["code"] == "server_error"
    assert "boom" in stream[-1]["response"]["error"]["message"]
    assert create(http, body)["status"] == "incomplete"


# ---- stored responses: previous_response_id, GET and DELETE ----------------------------------


def test_previous_response_id_continues_the_conversation(http):
    """Each turn sees the turns before it (their input and answer; not their instructions, as
    OpenAI's), token for token the chat conversation, and the Response says which it continued."""
    greedy = {"max_output_tokens": 6, "temperature": 0, "ignore_eos": True}
    first = create(http, {"instructions": "Be terse.", "input": "Hello", **greedy})
    second = create(http, {"previous_response_id": first["id"], "input": "And then?", **greedy})
    assert second["previous_response_id"] == first["id"] and second["instructions"] is None
    messages = [{"role": "user", "content": "Hello"},
                {"role": "assistant", "content": response_text(first)},
                {"role": "user", "content": "And then?"}]  # fmt: skip
    for response in (second, create(http, {"previous_response_id": second["id"], "input": "Why?",
                                           "instructions": "Be kind.", **greedy})):  # fmt: skip
        reference = chat(http, {"messages": messages, "max_tokens": 6, "temperature": 0,
                                "ignore_eos": True})  # fmt: skip
        assert response["usage"]["input_tokens"] == reference["usage"]["prompt_tokens"]
        assert response_text(response) == reference["choices"][0]["message"]["content"]
        messages = [{"role": "system", "content": "Be kind."}, *messages,
                    {"role": "assistant", "content": response_text(response)},
                    {"role": "user", "content": "Why?"}]  # fmt: skip


def test_a_call_and_its_output_continue_a_stored_response(http):
    first = create(http, {"input": "Add 2 and 3", "tools": TOOLS, "tool_choice": "required",
                          "temperature": 0, "parallel_tool_calls": False})  # fmt: skip
    (call,) = [item for item in first["output"] if item["type"] == "function_call"]
    result = {"type": "function_call_output", "call_id": call["call_id"], "output": "5"}
    greedy = {"temperature": 0, "ignore_eos": True, "tool_choice": "none"}
    second = create(http, {"previous_response_id": first["id"], "input": [result],
                           "tools": TOOLS, "max_output_tokens": 6, **greedy})  # fmt: skip
    messages = [
        {"role": "user", "content": "Add 2 and 3"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": call["call_id"],
         "type": "function", "function": {"name": "add", "arguments": call["arguments"]}}]},
        {"role": "tool", "tool_call_id": call["call_id"], "content": "5"},
    ]  # fmt: skip
    reference = chat(http, {"messages": messages, "tools": CHAT_TOOLS, "max_tokens": 6, **greedy})
    assert second["usage"]["input_tokens"] == reference["usage"]["prompt_tokens"]
    assert response_text(second) == reference["choices"][0]["message"]["content"]
    # continued without the call's result: a 400, as OpenAI's ("no tool output found")
    err = refused(http, {"previous_response_id": first["id"], "input": "Thanks", **greedy})
    assert err["param"] == "previous_response_id" and call["call_id"] in err["message"]


def test_stored_responses_are_read_and_deleted(http, sdk):
    body = {"input": "Hi", "max_output_tokens": 3, "temperature": 0}
    response = create(http, body)
    assert http.get(f"/v1/responses/{response['id']}").json() == response
    assert sdk.responses.retrieve(response["id"]).output_text == response_text(response)
    streamed = events(http, body)[-1]["response"]  # kept when its stream ends
    assert http.get(f"/v1/responses/{streamed['id']}").json() == streamed
    r = http.get(f"/v1/responses/{response['id']}", params={"stream": "true"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "stream")
    assert http.delete(f"/v1/responses/{response['id']}").json() == {
        "id": response["id"], "object": "response", "deleted": True}  # fmt: skip
    sdk.responses.delete(streamed["id"])
    for gone in (response["id"], streamed["id"], "resp_nope"):
        r = http.get(f"/v1/responses/{gone}")
        assert (r.status_code, r.json()["error"]["param"]) == (404, "response_id")
        assert http.delete(f"/v1/responses/{gone}").status_code == 404
        err = refused(http, {**body, "previous_response_id": gone})
        assert err["param"] == "previous_response_id"
        assert err["code"] == "previous_response_not_found" and gone in err["message"]
    unkept = create(http, {**body, "store": False})
    assert unkept["store"] is False
    assert http.get(f"/v1/responses/{unkept['id']}").status_code == 404


def test_the_store_keeps_the_last_used_and_an_old_id_is_not_taken_for_a_new_one(
    tiny_model_dir,
):
    from roseinfer.server.config import ServerConfig

    body = {"input": "Hi", "max_output_tokens": 2, "temperature": 0}
    config = ServerConfig(responses_store_size=2)
    with serve_in_process(tiny_model_dir("llama"), server_config=config) as (_, url), \
            httpx.Client(base_url=url, timeout=60) as client:  # fmt: skip
        x = create(client, body)
        y = create(client, {**body, "previous_response_id": x["id"]})
        create(client, body)  # a third: x, used longest ago, goes
        assert client.get(f"/v1/responses/{x['id']}").status_code == 404
        err = refused(client, {**body, "previous_response_id": y["id"]})
        assert err["param"] == "previous_response_id" and "no longer stored" in err["message"]
        # a client's request_id names its response: one id, one stored or running response
        same = create(client, {**body, "request_id": "a/b"})
        assert client.get("/v1/responses/resp_a/b").json() == same  # (a slash in the id)
        err = refused(client, {**body, "request_id": "a/b"})
        assert err["param"] == "request_id", err
        later = create(client, {**body, "previous_response_id": "resp_a/b"})
        assert client.delete("/v1/responses/resp_a/b").status_code == 200
        create(client, {**body, "request_id": "a/b"})  # the id is free again: another response
        err = refused(client, {**body, "previous_response_id": later["id"]})
        assert "no longer stored" in err["message"]  # never the new one's turns
        # a stream its client leaves is not kept, and its id is free again
        with client.stream("POST", "/v1/responses", json={**body, "stream": True,
                           "request_id": "gone", "max_output_tokens": 200}) as r:  # fmt: skip
            next(r.iter_lines())
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            r = client.post("/v1/responses", json={**body, "request_id": "gone"})
            if r.status_code == 200:
                break
            time.sleep(0.1)
        assert r.status_code == 200, r.text
    with serve_in_process(tiny_model_dir("llama"),
                          server_config=ServerConfig(responses_store_size=0)) as (_, url), \
            httpx.Client(base_url=url, timeout=60) as client:  # fmt: skip
        assert create(client, body)["store"] is False
        for field, value in (("store", True), ("previous_response_id", "resp_1")):
            err = refused(client, {**body, field: value})
            assert err["param"] == field and "--responses-store-size 0" in err["message"]


def test_a_stored_turn_never_changes(http):
    """What a later request sends never alters a stored turn, even a request refused; a cut
    call is left out of the stored turn (no result could answer it), so it can be continued."""
    greedy = {"max_output_tokens": 4, "temperature": 0, "ignore_eos": True}
    first = create(http, {"input": "Hello", **greedy})
    bad = {
        "previous_response_id": first["id"],
        "tools": TOOLS,
        "tool_choice": "bogus",
        "input": [CALL, {"type": "function_call_output", "call_id": "call_1", "output": "5"}],
    }
    refused(http, {**bad, **greedy})
    again = create(http, {"previous_response_id": first["id"], "input": "More", **greedy})
    reference = chat(http, {"messages": [{"role": "user", "content": "Hello"},
                                         {"role": "assistant", "content": response_text(first)},
                                         {"role": "user", "content": "More"}],
                            "max_tokens": 4, "temperature": 0, "ignore_eos": True})  # fmt: skip
    assert again["usage"]["input_tokens"] == reference["usage"]["prompt_tokens"]
    named = {"type": "function", "name": "add"}
    cut = create(http, {"input": "Add", "tools": TOOLS, "tool_choice": named,
                        "max_output_tokens": 3, "temperature": 0})  # fmt: skip
    assert cut["status"] == "incomplete" and cut["output"][-1]["status"] == "incomplete"
    create(http, {"previous_response_id": cut["id"], "input": "Go on", **greedy})


def test_the_store_is_bounded_in_count_and_bytes():
    from roseinfer.server.responses_store import IdTaken, ResponseNotFound, ResponseStore

    store = ResponseStore(capacity=3, max_bytes=210)
    turn = [{"role": "user", "content": "x" * 30}]
    size = 4 + len(json.dumps(turn))  # "{}", the turn's JSON and no items ("[]"): 67 bytes
    for i in range(3):
        assert store.put(f"r{i}", b"{}", turn, None)
    assert len(store) == 3 and store.num_bytes == 3 * size
    store.put("r3", b"{}", turn, None)  # a fourth: past 3, the least recently used goes
    with pytest.raises(ResponseNotFound):
        store.get("r0")
    store.get("r1")  # used: r2, then r3, are now the oldest
    store.put("r4", b"x" * 62, turn, None)  # r2 goes for the count, r3 for the bytes
    assert [len(store), store.num_bytes] == [2, 2 * size + 60]
    store.get("r1"), store.get("r4")
    assert not store.put("r5", b"x" * 300, turn, None)  # alone past the budget: not kept
    store.claim("r6")
    with pytest.raises(IdTaken):
        store.claim("r6")
    with pytest.raises(IdTaken):
        store.claim("r1")
    store.release("r6")
    store.claim("r6")


def test_truncation_auto_drops_the_oldest_messages_to_fit(tiny_model_dir):
    """A conversation past the context (the tiny model's 256 tokens): "disabled" is a 400,
    `context_length_exceeded`; "auto" drops the oldest messages after the system ones (a call
    with its result, never the result alone) and answers from the newest, token for token the
    chat request of what was kept."""
    turns = []
    for i in range(12):
        turns += [{"role": "user", "content": f"Question {i}: what is the weather today?"},
                  {"role": "assistant", "content": f"Answer {i}: sunny and warm."}]  # fmt: skip
    turns += [{"role": "user", "content": "And tomorrow?"}]
    body = {"instructions": "Be brief.", "input": turns, "max_output_tokens": 8,
            "temperature": 0, "ignore_eos": True}  # fmt: skip
    with serve_in_process(tiny_model_dir("llama")) as (_, url), \
            httpx.Client(base_url=url, timeout=60) as client:  # fmt: skip
        err = refused(client, body)
        assert (err["param"], err["code"]) == ("input", "context_length_exceeded"), err
        response = create(client, {**body, "truncation": "auto"})
        assert response["truncation"] == "auto"
        used = response["usage"]["input_tokens"]
        assert used + 8 <= 256
        # the kept messages: the system one, then the newest that fit (from a user message)
        for start in range(len(turns) - 1, -1, -2):  # what is kept starts at a user message
            messages = [{"role": "system", "content": "Be brief."}, *turns[start:]]
            reference = client.post(
                "/v1/chat/completions",
                json={"messages": messages, "max_tokens": 8, "temperature": 0, "ignore_eos": True},
            )
            if reference.status_code != 200 or reference.json()["usage"]["prompt_tokens"] > used:
                break
            fitted = reference.json()
        assert fitted["usage"]["prompt_tokens"] == used
        assert response_text(response) == fitted["choices"][0]["message"]["content"]


def test_fit_conversation_keeps_turns_from_a_user_message_and_renders_little():
    """A chain of 2,001 messages, 10 tokens each, a 100-token limit, a template that wants
    turns to alternate: what is kept starts at a user message and is the most that fits, and
    after the one full render, the renders are of what the context could hold."""
    from roseinfer.chat import ChatMessage
    from roseinfer.server.errors import APIError
    from roseinfer.server.responses_truncation import fit_conversation

    turns = [ChatMessage(role=("user", "assistant")[i % 2], content=str(i)) for i in range(2001)]
    messages = [ChatMessage(role="system", content="s"), *turns]
    rendered: list[int] = []

    def render(conversation: list[ChatMessage]) -> list[int]:
        rendered.append(len(conversation))
        if conversation[1].role != "user":
            raise APIError(400, "roles must alternate")
        return [0] * (10 * len(conversation))

    kept, ids = fit_conversation(messages, render, limit=100)
    assert [m.role for m in kept[:2]] == ["system", "user"] and kept[-1] is turns[-1]
    assert len(ids) == 100  # system + 9 messages; one user turn earlier would be 120
    assert rendered[0] == 2002 and len(rendered) < 20 and sum(rendered[1:]) < 300


def test_a_stored_responses_input_items_are_listed(http, sdk):
    """GET /v1/responses/{id}/input_items (the SDK's `input_items.list`): the response's own
    items as OpenAI lists them, newest first by default, paged by `limit` and `after`."""
    items = [
        {"role": "user", "content": "Add 2 and 3"},
        {**CALL, "id": "fc_given"},
        {"type": "function_call_output", "call_id": "call_1", "output": "3"},
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    ]
    response = create(http, {"input": items, "tools": TOOLS, "tool_choice": "none",
                             "max_output_tokens": 2, "temperature": 0})  # fmt: skip
    listed = sdk.responses.input_items.list(response["id"], order="asc")
    assert [item.type for item in listed.data] == ["message", "function_call",
                                                  "function_call_output", "message"]  # fmt: skip
    assert listed.data[0].content[0].text == "Add 2 and 3" and listed.data[1].id == "fc_given"
    assert listed.data[3].content[0].type == "input_text" and not listed.has_more
    newest = http.get(f"/v1/responses/{response['id']}/input_items", params={"limit": 2}).json()
    assert [i["type"] for i in newest["data"]] == ["message", "function_call_output"]
    assert newest["has_more"] and newest["last_id"] == newest["data"][-1]["id"]
    rest = http.get(f"/v1/responses/{response['id']}/input_items",
                    params={"limit": 2, "after": newest["last_id"]}).json()  # fmt: skip
    assert [i["type"] for i in rest["data"]] == ["function_call", "message"]
    assert not rest["has_more"]
    single = create(http, {"input": "Hi", "max_output_tokens": 2})
    (only,) = sdk.responses.input_items.list(single["id"]).data
    assert (only.role, only.content[0].text) == ("user", "Hi")
    for params, param in (({"limit": 0}, "limit"), ({"order": "up"}, "order"),
                          ({"after": "nope"}, "after"), ({"include": "x"}, "include")):  # fmt: skip
        r = http.get(f"/v1/responses/{single['id']}/input_items", params=params)
        assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text
    assert http.get("/v1/responses/resp_nope/input_items").status_code == 404


def test_input_tokens_counts_the_prompt_a_response_runs(http, sdk):
    """`POST /v1/responses/input_tokens` (`client.responses.input_tokens.count`): the input
    tokens the same body's Response reports: with instructions, tools, a stored conversation
    continued, and a conversation cut by `truncation: "auto"`."""
    greedy = {"max_output_tokens": 3, "temperature": 0}
    first = create(http, {"input": "Hello", **greedy})
    bodies = [
        {"input": "Hi"},
        {"instructions": "Be terse.", "input": [{"role": "user", "content": "Add 2 and 3"}],
         "tools": TOOLS, "tool_choice": "auto"},
        {"previous_response_id": first["id"], "input": "And then?"},
        {"input": [{"role": "user", "content": "word " * 400}, {"role": "assistant",
                    "content": "ok"}, {"role": "user", "content": "Why?"}] * 3,
         "truncation": "auto"},
    ]  # fmt: skip
    for body in bodies:
        answer = http.post("/v1/responses/input_tokens", json=body)
        assert answer.status_code == 200, answer.text
        assert answer.json()["object"] == "response.input_tokens"
        # (cut to leave the output its default room: what the count, with no output limit
        # to read, assumes)
        run = {"temperature": 0} if "truncation" in body else greedy
        assert answer.json()["input_tokens"] == create(http, {**body, **run})["usage"][
            "input_tokens"]  # fmt: skip
    counted = sdk.responses.input_tokens.count(input="Hi")
    assert counted.input_tokens == http.post("/v1/responses/input_tokens",
                                             json={"input": "Hi"}).json()["input_tokens"]  # fmt: skip
    for name, value in (("max_output_tokens", 5), ("stream", True), ("temperature", 0.5),
                        ("conversation", "conv_1"), ("mood", 1)):  # fmt: skip
        r = http.post("/v1/responses/input_tokens", json={"input": "Hi", name: value})
        assert (r.status_code, r.json()["error"]["param"]) == (400, name), r.text
    r = http.post("/v1/responses/input_tokens", json={"input": [{"role": "user", "content": 5}]})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "input.0.content")
