"""Tool calling (issue 20, point 3): `tools`, `tool_choice`, `parallel_tool_calls`, calls in the
history, through real servers and the `openai` client. Every call's arguments validate against
its function's schema (jsonschema) across seeds and temperatures, streamed and not; the
streamed deltas add up to the non-streamed calls; `auto` on SmolLM2 returns a call when the
model writes one and plain content when it does not."""

from __future__ import annotations

import json
import random

import httpx
import jsonschema
import pytest
from conftest import serve_in_process, tools_model_dir

from roseinfer.chat import ChatMessage, chat_prompt_ids
from roseinfer.output.processor import ChoiceState
from roseinfer.output.tool_calls import ToolCallParser
from roseinfer.sampling_params import SamplingParams
from roseinfer.structured.tools import Tool, ToolUse, tool_prompt
from roseinfer.tokenizer import Tokenizer

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 8},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
ADD = {
    "type": "object",
    "properties": {  # bounded: a random model's digits would otherwise run to max_tokens
        "a": {"type": "integer", "minimum": -999, "maximum": 999},
        "b": {"type": "integer", "minimum": 0, "maximum": 99},
    },
    "required": ["a", "b"],
    "additionalProperties": False,
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                      "parameters": WEATHER}},
    {"type": "function", "function": {"name": "add", "parameters": ADD, "strict": True}},
]  # fmt: skip
SCHEMAS = {"get_weather": WEATHER, "add": ADD}
MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]


def nested(levels: int) -> dict:
    """A schema whose objects nest `levels` deep."""
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


NESTED_500 = nested(250)  # 500 levels of objects


def check_calls(calls: list[dict], names: frozenset[str] = frozenset(SCHEMAS)) -> None:
    assert calls
    for call in calls:
        assert call["type"] == "function" and call["id"].startswith("call_")
        assert call["function"]["name"] in names
        jsonschema.validate(
            json.loads(call["function"]["arguments"]), SCHEMAS[call["function"]["name"]]
        )


def streamed(http: httpx.Client, body: dict) -> tuple[str, list[dict], str]:
    """(content, calls, finish_reason) of a streamed chat answer, the deltas put together as a
    client does (by index: id and name first, then argument fragments)."""
    content, calls, finish = "", {}, ""
    with http.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:])["choices"]:
                delta = choice["delta"]
                content += delta.get("content") or ""
                for d in delta.get("tool_calls") or ():
                    if "id" in d:
                        assert d["index"] not in calls and d["index"] == len(calls)
                        calls[d["index"]] = {"id": d["id"], "type": d["type"],
                                             "function": dict(d["function"])}  # fmt: skip
                    else:
                        calls[d["index"]]["function"]["arguments"] += d["function"]["arguments"]
                finish = choice["finish_reason"] or finish
    return content, [calls[i] for i in sorted(calls)], finish


@pytest.fixture(scope="module")
def tools_server(tmp_path_factory):
    with serve_in_process(tools_model_dir(tmp_path_factory), num_kv_blocks=256) as served:
        yield served[1]


@pytest.fixture(scope="module")
def http(tools_server):
    with httpx.Client(base_url=tools_server, timeout=60) as client:
        yield client


@pytest.mark.parametrize(
    ("choice", "parallel", "names"),
    [
        ("required", True, {"get_weather", "add"}),
        ("required", False, {"get_weather", "add"}),
        ({"type": "function", "function": {"name": "add"}}, True, {"add"}),
    ],
    ids=["required", "required-single", "named"],
)
def test_forced_calls_always_validate(http, choice, parallel, names):
    for seed, temperature in [(0, 0.0), (1, 0.7), (2, 1.0), (3, 1.3)]:
        body = {"messages": MESSAGES, "tools": TOOLS, "tool_choice": choice, "seed": seed,
                "temperature": temperature, "max_tokens": 200, "parallel_tool_calls": parallel}  # fmt: skip
        r = http.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        (out,) = r.json()["choices"]
        if out["finish_reason"] == "length":  # cut short: only a parallel answer may run on
            assert parallel and choice == "required"
            continue
        # OpenAI's: a named function's call ends with "stop", other calls with "tool_calls"
        expected = "stop" if isinstance(choice, dict) else "tool_calls"
        assert out["finish_reason"] == expected, out
        assert out["message"]["content"] is None
        calls = out["message"]["tool_calls"]
        check_calls(calls, names)
        if not parallel or isinstance(choice, dict):
            assert len(calls) == 1
        content, stream_calls, finish = streamed(http, body)
        assert (content, finish) == ("", expected)
        # the same tokens (same seed): the same calls but for their ids
        assert [c["function"] for c in stream_calls] == [c["function"] for c in calls]


def test_auto_with_a_model_that_writes_no_call_gives_content(http):
    body = {"messages": MESSAGES, "tools": TOOLS, "max_tokens": 12, "temperature": 0}
    r = http.post("/v1/chat/completions", json=body)
    (out,) = r.json()["choices"]
    assert out["finish_reason"] in ("stop", "length") and "tool_calls" not in out["message"]
    assert out["message"]["content"] and "<tool_call>" not in out["message"]["content"]
    assert streamed(http, body) == (out["message"]["content"], [], out["finish_reason"])


@pytest.mark.parametrize("logprobs", [None, 1], ids=["", "logprobs"])
@pytest.mark.parametrize("calls", [True, False], ids=["call", "text"])
def test_an_auto_answer_opens_its_stream_as_it_turns_out(calls, logprobs):
    """Under tool_choice "auto" a call answer streams `content: null` first (as OpenAI's, and as
    the answer not streamed has content null: the SDK's stream helper had read "") and a text
    answer `""`: the opening waits for the answer's first chunk of text or calls (a random
    model calls under "auto" by no chance, so the choice's events are played to `sse_stream`
    here). With logprobs, the chunks of logprobs alone before it (the held-back `<` of a
    call) follow the opening (session 60's audit: they had opened the stream with "")."""
    import asyncio
    from types import SimpleNamespace

    from roseinfer.output.tool_calls import ToolCallDelta
    from roseinfer.outputs import Logprob
    from roseinfer.server.params import ResponseOptions
    from roseinfer.server.serving import sse_stream

    call = ToolCallDelta(0, "call_1", "add", '{"a": 1, "b": 2}')
    script = [("", []), ("", [call] if calls else []), ("" if calls else "Hi", [])]

    class Group:
        tool_use = ToolUse((Tool("add", None, ADD),), "auto")
        reasoning = None  # (no reasoning parser)
        choices = [(0, None)]
        num_output_tokens = len(script)

        def state_of(self, index):
            tokenizer = SimpleNamespace(token_text=str, token_bytes=lambda t: str(t).encode())
            return SimpleNamespace(tokenizer=tokenizer)

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return None

        async def events(self):
            for i, (text, new_calls) in enumerate(script):
                finish = ("tool_calls" if calls else "stop") if i == len(script) - 1 else None
                yield 0, SimpleNamespace(new_logprobs=[{i: Logprob(-0.5, 1, str(i))}],
                                         new_tool_calls=new_calls, finished=finish is not None,
                                         finish_reason=finish, token_ids=[i], reasoning=None,
                                         new_reasoning=""), text  # fmt: skip

    async def chunks():
        options = ResponseOptions(chat=True, logprobs=logprobs)
        stream = sse_stream(Group(), "r", 0, "m", options, 3, False)  # type: ignore[arg-type]
        return [line async for line in stream]

    choices = [json.loads(c[6:])["choices"][0] for c in asyncio.run(chunks())
               if c.startswith("data: {")]  # fmt: skip
    deltas = [c["delta"] for c in choices]
    assert deltas[0] == {"role": "assistant", "content": None if calls else ""}
    assert sum("role" in d for d in deltas) == 1
    answer = next(d for d in deltas[1:] if d)  # after the chunks of logprobs alone, if any
    assert ("tool_calls" in answer) == calls and (answer.get("content") == "Hi") != calls
    if logprobs:  # every token's logprob, in order, those held back first
        tokens = [c["logprobs"]["content"][0]["token"] for c in choices[1:]]
        assert tokens == ["0", "1", "2"]


def test_a_chat_message_has_a_null_refusal_as_openais(http):
    body = {"messages": MESSAGES, "max_tokens": 2}
    (out,) = http.post("/v1/chat/completions", json=body).json()["choices"]
    assert out["message"]["refusal"] is None and "refusal" in out["message"]


def test_openai_client_tools_and_its_stream_helper(tools_server):
    from openai import OpenAI, pydantic_function_tool
    from pydantic import BaseModel

    class Add(BaseModel):
        a: int
        b: int

    client = OpenAI(base_url=tools_server + "/v1", api_key="x", max_retries=0)
    model = client.models.list().data[0].id
    resp = client.chat.completions.create(
        model=model, messages=MESSAGES, tools=TOOLS, tool_choice="required",  # type: ignore[arg-type]
        parallel_tool_calls=False, max_tokens=100, temperature=0,
    )  # fmt: skip
    (call,) = resp.choices[0].message.tool_calls or []
    assert resp.choices[0].finish_reason == "tool_calls"
    jsonschema.validate(json.loads(call.function.arguments), SCHEMAS[call.function.name])
    # the streaming helper puts the deltas together and parses strict tools' arguments
    with client.chat.completions.stream(
        model=model, messages=MESSAGES, tools=[pydantic_function_tool(Add)],
        tool_choice={"type": "function", "function": {"name": "Add"}}, max_tokens=100, seed=5,
        temperature=0.8,
    ) as stream:  # fmt: skip
        for _ in stream:
            pass
        final = stream.get_final_completion()
    (call,) = final.choices[0].message.tool_calls or []
    assert isinstance(call.function.parsed_arguments, Add)
    # an answer that must call has no content, streamed as not (the stream had opened with
    # content "", which the helper kept: "" against the non-streamed None)
    assert final.choices[0].message.content is None
    text = client.chat.completions.create(model=model, messages=MESSAGES, max_tokens=4,
                                          stream=True)  # fmt: skip
    assert next(iter(text)).choices[0].delta.content == ""  # a text answer opens with ""


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
         "tool_choice"),
        ({"tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
        ({"tools": [{"type": "function", "function": {"name": "bad name"}}]},
         "tools.0.function.name"),
        ({"tools": [TOOLS[0], {"type": "function", "function": {"name": "f", "parameters":
          {"type": "object", "properties": {"x": {"type": "nonsense"}}}}}]},
         "tools.1.function.parameters"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters":
          {"type": "string"}}}], "tool_choice": "required"}, "tools.0.function.parameters"),
        ({"tools": [{"type": "function", "function": {"name": "f", "strict": True, "parameters":
          {k: v for k, v in WEATHER.items() if k != "additionalProperties"}}}]},
         "tools.0.function.parameters"),
        ({"tools": [{"type": "function", "function": {"name": "f", "strict": True,
                                                      "parameters": WEATHER}}]},
         "tools.0.function.parameters"),
        ({"tools": [{"type": "function", "function": {"name": "f", "strict": True,
                                                      "parameters": {**ADD, "required": True}}}]},
         "tools.0.function.parameters"),
        ({"tools": [TOOLS[1], TOOLS[1]]}, "tools"),
        # beside tools, a format's schema that does not compile is named, not the tools
        ({"tools": TOOLS, "response_format": {"type": "json_schema", "json_schema": {"name": "r",
          "schema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}}}}},
         "response_format.json_schema.schema"),
        ({"tools": [{"type": "retrieval", "function": {"name": "f"}}]}, "tools.0.type"),
        # 500 levels: the walks before the grammar's compiler had overflowed Python's stack (a 500)
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"x": NESTED_500}}}}]}, "tools.0.function.parameters"),
    ],
    ids=["no-tools", "unknown-name", "bad-choice", "bad-name", "bad-schema", "not-an-object", "strict-open", "strict-optional", "strict-malformed", "twice",
         "format-beside-tools", "type", "too-deep"],
)  # fmt: skip
def test_bad_tool_requests_are_400s_naming_the_field(http, extra, param):
    r = http.post("/v1/chat/completions", json={"messages": MESSAGES, **extra})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.text


@pytest.mark.parametrize("parallel", [True, False])
def test_tools_beside_a_response_format_call_or_answer_in_the_format(http, parallel):
    """OpenAI's: with tools (tool_choice auto) and response_format an answer either calls a
    tool or is JSON in the format (the Agents SDK sends both for an agent with an output type;
    it had been a 400). Each answer here is one or the other, never free text."""
    answer = {"type": "object", "properties": {"temp": {"type": "integer", "minimum": 0,
              "maximum": 99}}, "required": ["temp"], "additionalProperties": False}  # fmt: skip
    fmt = {"type": "json_schema", "json_schema": {"name": "reply", "schema": answer,
                                                  "strict": True}}  # fmt: skip
    kinds = set()
    for seed in range(8):
        body = {"messages": MESSAGES, "tools": TOOLS, "response_format": fmt, "seed": seed,
                "temperature": 1.0, "max_tokens": 120, "parallel_tool_calls": parallel}  # fmt: skip
        r = http.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        (out,) = r.json()["choices"]
        if out["finish_reason"] == "length":
            continue
        message = out["message"]
        if message.get("tool_calls"):
            assert out["finish_reason"] == "tool_calls" and message["content"] is None, out
            check_calls(message["tool_calls"], {"get_weather", "add"})
            assert parallel or len(message["tool_calls"]) == 1
            kinds.add("calls")
        else:
            assert out["finish_reason"] == "stop", out
            jsonschema.validate(json.loads(message["content"]), answer)
            kinds.add("answer")
        content, calls, finish = streamed(http, body)  # the same seed, streamed
        assert (content or None, finish) == (message["content"], out["finish_reason"])
        assert [c["function"] for c in calls] == [
            c["function"] for c in message.get("tool_calls") or []
        ]
    assert kinds, "every answer was cut by max_tokens"


def test_parameters_without_a_type_still_give_object_arguments(http):
    """A schema that leaves "type" out would also match a string: the grammar holds a call's
    arguments to an object, so a forced call is always a call, never text in the content."""
    # bounded, so that a random model's calls close within max_tokens
    params = {"properties": {"city": {"type": "string", "maxLength": 8}}, "required": ["city"]}
    tools = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    calls = forced_calls(http, tools, seeds=4, max_tokens=80)
    assert len(calls) >= 2  # not every answer cut short
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)


def test_a_function_without_parameters_is_called_with_an_object(http):
    """OpenAI's `parameters` is optional (a function that takes no arguments); the schema depth
    check of 68912d4 had made such a tool a 500."""
    tools = [{"type": "function", "function": {"name": "get_time"}}]
    calls = forced_calls(http, tools, seeds=3, max_tokens=120)  # each a 200
    assert all(c["function"]["name"] == "get_time" for c in calls)
    assert all(isinstance(json.loads(c["function"]["arguments"]), dict) for c in calls)


def forced_calls(http, tools: list[dict], seeds: int, max_tokens: int) -> list[dict]:
    """The one call of each answer under tool_choice "required" (seeds 0.. at temperature 1),
    leaving out answers cut short by max_tokens."""
    calls = []
    for seed in range(seeds):
        body = {"messages": MESSAGES, "tools": tools, "tool_choice": "required", "seed": seed,
                "temperature": 1.0, "max_tokens": max_tokens, "parallel_tool_calls": False}  # fmt: skip
        r = http.post("/v1/chat/completions", json=body)
        assert r.status_code == 200, r.text
        (out,) = r.json()["choices"]
        if out["finish_reason"] != "length":
            assert out["finish_reason"] == "tool_calls", out
            (call,) = out["message"]["tool_calls"]
            calls.append(call)
    return calls


def test_parameters_with_definitions_give_calls_that_follow_them(http):
    """pydantic writes nested models and enums as `$defs` and `$ref`s: the call's grammar finds
    them (they had been a 400: "Pointer '/$defs/Color' does not exist"), for two tools whose
    definitions share a name too."""
    color = {"enum": ["red", "blue"], "type": "string"}

    def tool(name: str, color_def: dict) -> dict:
        params = {"$defs": {"Color": color_def, "Point": {
            "type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9}},
            "required": ["x"], "additionalProperties": False}},
            "type": "object", "properties": {"at": {"$ref": "#/$defs/Point"},
                                             "color": {"$ref": "#/$defs/Color"}},
            "required": ["at", "color"], "additionalProperties": False}  # fmt: skip
        return {"type": "function", "function": {"name": name, "parameters": params}}

    tools = [tool("paint", color), tool("tint", {"enum": ["green"], "type": "string"})]
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    calls = forced_calls(http, tools, seeds=3, max_tokens=160)
    assert calls
    for call in calls:
        function = call["function"]
        jsonschema.validate(json.loads(function["arguments"]), schemas[function["name"]])


def test_parameters_with_refs_to_their_own_root_and_properties_give_calls_that_follow_them(http):
    """A tool's local `$ref`s other than `#/$defs/...` point into its own parameters: a
    recursive `"$ref": "#"` had held a call's `child` to the call object's schema (a 200 whose
    arguments broke the schema), and `#/properties/...`, a `$defs` below the root and a root
    `$id` had been a 400 naming `tools`."""
    node = {"type": "object", "properties": {
        "v": {"type": "integer", "minimum": 0, "maximum": 9},
        "child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
        "required": ["v", "child"], "additionalProperties": False}  # fmt: skip
    pair = {"type": "object", "properties": {
        "a": {"type": "string", "maxLength": 3},
        "b": {"$ref": "#/properties/a"},
        "c": {"$defs": {"D": {"enum": ["x", "y"]}}, "$ref": "#/properties/c/$defs/D"}},
        "required": ["a", "b", "c"], "additionalProperties": False}  # fmt: skip
    unit = {"$id": "https://example.com/unit.json", "$defs": {"Unit": {"enum": ["c", "f"]}},
            "type": "object", "properties": {"unit": {"$ref": "#/$defs/Unit"}},
            "required": ["unit"], "additionalProperties": False}  # fmt: skip
    tools = [{"type": "function", "function": {"name": name, "parameters": params}}
             for name, params in (("tree", node), ("pair", pair), ("unit", unit))]  # fmt: skip
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for tool in tools:  # each alone (its schema at the call's root) and all three (in anyOf)
        for given in ([tool], tools):
            calls = forced_calls(http, given, seeds=3, max_tokens=200)
            assert calls
            for call in calls:
                function = call["function"]
                arguments = json.loads(function["arguments"])
                jsonschema.validate(arguments, schemas[function["name"]])
                assert "name" not in json.dumps(arguments)  # no call object inside


def test_tools_are_refused_on_completions(http):
    r = http.post("/v1/completions", json={"prompt": "x", "tools": TOOLS})
    assert r.status_code == 400 and r.json()["error"]["param"] == "tools"


# ---- the prompt: templates with and without tool support ---------------------------------------

HISTORY = [
    {"role": "user", "content": "Weather in Paris and Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'}},
        {"id": "c2", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Rome", "unit": "celsius"}'}},
    ]},
    {"role": "tool", "tool_call_id": "c2", "content": "Rome: 25"},
    {"role": "tool", "tool_call_id": "c1", "content": "Paris: 18"},
]  # fmt: skip

# Qwen 2.5's way of rendering tools, calls and results, cut down.
TOOL_TEMPLATE = (
    "{% if tools %}<|im_start|>system\n# Tools\n<tools>{% for t in tools %}\n{{ t | tojson }}"
    "{% endfor %}\n</tools><|im_end|>\n{% endif %}"
    "{% for m in messages %}{% if m.role == 'tool' %}<|im_start|>user\n<tool_response>\n"
    "{{ m.content }}\n</tool_response><|im_end|>\n{% else %}<|im_start|>{{ m.role }}\n"
    "{{ m.content or '' }}{% for c in m.tool_calls or [] %}\n<tool_call>\n"
    '{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n'
    "</tool_call>{% endfor %}<|im_end|>\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def parsed(messages: list[dict]) -> list[ChatMessage]:
    return [ChatMessage.model_validate(m) for m in messages]


def test_a_template_with_tool_support_renders_them_as_transformers_does(tiny_model_dir):
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    hf.chat_template = TOOL_TEMPLATE
    tools = tuple(Tool(t["function"]["name"], t["function"].get("description"),
                       t["function"]["parameters"]) for t in TOOLS)  # fmt: skip
    ids = chat_prompt_ids(Tokenizer(hf), parsed(HISTORY), tools)
    as_objects = [dict(m) for m in HISTORY]
    as_objects[1] = {**HISTORY[1], "content": "", "tool_calls": [
        {**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
        for c in HISTORY[1]["tool_calls"]]}  # fmt: skip
    expected = hf.apply_chat_template(as_objects, tools=[t.as_json() for t in tools],
                                      tokenize=False, add_generation_prompt=True)  # fmt: skip
    assert hf.decode(ids) == expected
    assert '"arguments": {"city": "Paris", "unit": "celsius"}' in expected


def test_a_template_without_tool_support_gets_the_hermes_format(tiny_model_dir):
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    tools = (Tool("get_weather", "Weather in a city", WEATHER),)
    text = hf.decode(chat_prompt_ids(Tokenizer(hf), parsed(HISTORY), tools))
    assert text.startswith(f"<|im_start|>system\n{tool_prompt(tools)}<|im_end|>")
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome", "unit": ' in text
    # the results in the calls' order (Paris's first), in one user turn
    assert text.endswith(
        "<|im_start|>user\n<tool_response>\nParis: 18\n</tool_response>\n<tool_response>\n"
        "Rome: 25\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
    )


@pytest.mark.parametrize(
    ("message", "param"),
    [
        ({"role": "tool", "tool_call_id": "c9", "content": "x"}, "messages.2.tool_call_id"),
        ({"role": "user", "tool_call_id": "c1", "content": "x"}, "messages.2.tool_call_id"),
    ],
)
def test_a_result_must_answer_a_call(http, message, param):
    r = http.post("/v1/chat/completions", json={"messages": [*HISTORY[:2], message]})
    assert r.status_code == 400 and r.json()["error"]["param"] == param, r.text


def test_every_call_in_the_history_needs_its_result(http):
    """OpenAI's rule: a call without its result before the next message is a 400 naming the
    call; a model shown it would answer as if it had one. A conversation may end with calls
    (to count its tokens, or to continue it), and a result after another message answers
    nothing."""
    messages = [*HISTORY[:3], {"role": "user", "content": "And?"}]  # Rome's result only
    r = http.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 2})
    error = r.json()["error"]
    assert (r.status_code, error["param"]) == (400, "messages.1.tool_calls.0.id"), r.text
    assert "'c1'" in error["message"] and "'c2'" not in error["message"]
    r = http.post("/tokenize", json={"messages": HISTORY[:2]})  # ends with the calls
    assert r.status_code == 200, r.text
    late = [*HISTORY, {"role": "user", "content": "And?"}, HISTORY[2]]  # c2 answered again
    r = http.post("/v1/chat/completions", json={"messages": late, "max_tokens": 2})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.5.tool_call_id")
    twice = [*HISTORY[:4], HISTORY[2]]  # one call, two results (OpenAI: "Duplicate value")
    r = http.post("/v1/chat/completions", json={"messages": twice, "max_tokens": 2})
    error = r.json()["error"]
    assert (r.status_code, error["param"]) == (400, "messages.4.tool_call_id"), r.text
    assert "Duplicate value for 'tool_call_id'" in error["message"]
    assert "messages[2] and messages[4]" in error["message"]
    # Ending on results counts as the next message: one left unanswered is refused too
    # (session 60's audit: a 200 whose prompt showed a call without its result).
    for path, extra in (("/v1/chat/completions", {"max_tokens": 2}), ("/tokenize", {})):
        r = http.post(path, json={"messages": HISTORY[:3], **extra})  # Rome's result only
        error = r.json()["error"]
        assert (r.status_code, error["param"]) == (400, "messages.1.tool_calls.0.id"), r.text
        assert "'c1'" in error["message"] and "'c2'" not in error["message"]


def test_the_calls_of_one_message_have_ids_of_their_own(http):
    """Two calls of one message under one id: no result could say which it answers."""
    history = json.loads(json.dumps(HISTORY))
    history[1]["tool_calls"][1]["id"] = "c1"
    r = http.post("/v1/chat/completions", json={"messages": history[:3], "max_tokens": 2})
    error = r.json()["error"]
    assert (r.status_code, error["param"]) == (400, "messages.1.tool_calls.1.id"), r.text
    assert "'c1'" in error["message"]


def test_history_arguments_must_be_json_objects(http):
    bad = json.loads(json.dumps(HISTORY[:2]))
    bad[1]["tool_calls"][1]["function"]["arguments"] = "[1, 2]"
    r = http.post("/v1/chat/completions", json={"messages": bad})
    assert r.status_code == 400
    assert r.json()["error"]["param"] == "messages.1.tool_calls.1.function.arguments"


def test_a_conversation_with_calls_and_results_is_answered(http):
    r = http.post("/v1/chat/completions", json={"messages": HISTORY, "tools": TOOLS,
                                               "max_tokens": 8})  # fmt: skip
    assert r.status_code == 200, r.text


# ---- the grammar and the parser, without a model -----------------------------------------------


def test_the_auto_grammar_takes_text_and_holds_calls_to_their_schema(tiny_model_dir):
    import llguidance
    import llguidance.hf
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    use = ToolUse((Tool("add", None, ADD),), "auto", None, parallel=False)
    matcher = llguidance.LLMatcher(llguidance.hf.from_tokenizer(hf), use.grammar(), log_level=0)

    def accepts(text: str) -> bool:
        m = matcher.deep_copy()
        return m.consume_tokens(hf.encode(text)) and not m.is_error()

    assert accepts("Plain text, <tool and all.")
    assert accepts(
        'Sure. <tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'
    )
    assert not accepts('<tool_call>\n{"name": "add", "arguments": {"a": 1}}')  # b is required
    assert not accepts('<tool_call>\n{"name": "sub", "arguments": {"a": 1, "b": 2}}')
    assert not accepts(  # one call only
        '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call> more'
    )


# A string argument may hold the tags themselves: the close tag counts past the arguments only.
CITY = 'Pa"ri}s </tool_call> <tool_call>'
TEXT = (
    'Let me check.  \n<tool_call>\n{"name": "get_weather", "arguments": {"city": '
    f'{json.dumps(CITY)}, "n": [1, {{"a": 2}}]}}}}\n</tool_call>\n<tool_call>\n'
    '{"arguments": {"x": 1}, "name": "add"}\n</tool_call>\n'
)


def test_the_parser_gives_the_same_calls_however_the_text_is_cut():
    whole = ToolCallParser(frozenset(SCHEMAS))
    assert whole.feed(TEXT, True)[0] == "Let me check."
    assert [(c.name, json.loads(c.arguments)) for c in whole.calls] == [
        ("get_weather", {"city": CITY, "n": [1, {"a": 2}]}),
        ("add", {"x": 1}),
    ]
    rng = random.Random(0)
    for _ in range(100):
        cuts = sorted(rng.sample(range(1, len(TEXT)), rng.randint(1, 40)))
        parser = ToolCallParser(frozenset(SCHEMAS))
        content, arguments = "", ["", ""]
        pieces = [TEXT[a:b] for a, b in zip([0, *cuts], [*cuts, len(TEXT)], strict=True)]
        for i, piece in enumerate(pieces):
            text, deltas = parser.feed(piece, i == len(pieces) - 1)
            content += text
            for d in deltas:
                arguments[d.index] += d.arguments
        assert content == "Let me check."
        assert arguments == [c.arguments for c in whole.calls]


@pytest.mark.parametrize(
    ("pieces", "content"),
    [
        (["a <tool_ca", "ll> not json"], "a <tool_call> not json"),
        (['x <tool_call>{"name": "other", "arguments": {}}</tool_call>'],
         'x <tool_call>{"name": "other", "arguments": {}}</tool_call>'),
        (["no calls \n", ""], "no calls \n"),
    ],
)  # fmt: skip
def test_text_that_is_no_call_of_ours_stays_content(pieces, content):
    parser = ToolCallParser(frozenset(SCHEMAS))
    out = "".join(parser.feed(p, i == len(pieces) - 1)[0] for i, p in enumerate(pieces))
    assert out == content and parser.calls == []


# ---- auto on a real model ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2_server(tmp_path_factory):
    with serve_in_process("smollm2") as served:
        yield served[1]


def test_auto_returns_the_call_smollm2_writes(smollm2_server):
    """Asked with a bare "<tool_call>", SmolLM2 answers with a call; the grammar holds its
    arguments to the schema; asked about Paris it writes prose, which comes back as content."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]  # fmt: skip
    with httpx.Client(base_url=smollm2_server, timeout=120) as http:
        body = {"messages": [{"role": "system", "content": "You call tools."},
                             {"role": "user", "content": "<tool_call>"}],
                "tools": tools, "max_tokens": 40, "temperature": 0}  # fmt: skip
        (out,) = http.post("/v1/chat/completions", json=body).json()["choices"]
        (call,) = out["message"]["tool_calls"]
        assert call["function"]["name"] == "get_weather"
        assert isinstance(json.loads(call["function"]["arguments"])["city"], str)
        content, calls, finish = streamed(http, body)
        assert [c["function"] for c in calls] == [call["function"]]
        assert (content or None, finish) == (out["message"]["content"], out["finish_reason"])
        # tool_choice "none": no grammar, nothing read from the text (SmolLM2 free writes only
        # the tags), which comes back as written
        (plain,) = http.post("/v1/chat/completions",
                             json={**body, "tool_choice": "none"}).json()["choices"]  # fmt: skip
        assert "tool_calls" not in plain["message"]
        assert plain["message"]["content"].startswith("<tool_call>")
        body["messages"][1]["content"] = "What is the capital of France?"
        (out,) = http.post("/v1/chat/completions", json=body).json()["choices"]
        assert "tool_calls" not in out["message"] and "Paris" in out["message"]["content"]


# ---- LLM.chat: the same tools in Python ---------------------------------------------------------


def test_llm_chat_takes_tools_and_returns_calls(tools_server, tmp_path_factory):
    from roseinfer import LLM, SamplingParams

    app_dir = tools_model_dir(tmp_path_factory)
    llm = LLM(model=app_dir, dtype="float32", num_kv_blocks=128)
    named = {"type": "function", "function": {"name": "add"}}
    for seed in range(3):
        (out,) = llm.chat(MESSAGES, SamplingParams(max_tokens=100, seed=seed, temperature=1.0),
                          use_tqdm=False, tools=TOOLS, tool_choice=named)  # fmt: skip
        choice = out.outputs[0]
        assert choice.finish_reason == "stop" and choice.text == ""  # named: OpenAI's "stop"
        (call,) = choice.tool_calls or []
        assert call.name == "add" and call.id.startswith("call_")
        jsonschema.validate(json.loads(call.arguments), ADD)
    # the server's prompt, token for token
    body = {"messages": MESSAGES, "tools": TOOLS}
    served = httpx.post(tools_server + "/tokenize", json=body).json()["tokens"]
    (out,) = llm.chat(MESSAGES, SamplingParams(max_tokens=1), use_tqdm=False, tools=TOOLS)
    assert out.prompt_token_ids == served
    with pytest.raises(ValueError, match="structured_outputs and tools"):
        from roseinfer.sampling_params import StructuredOutputs

        llm.chat(MESSAGES, SamplingParams(structured_outputs=StructuredOutputs(regex="a")),
                 tools=TOOLS, tool_choice="required")  # fmt: skip
    with pytest.raises(ValueError, match="not in tools"):
        llm.chat(MESSAGES, tools=TOOLS, tool_choice={"type": "function", "function": {"name": "x"}})


def test_every_stop_token_may_end_a_finished_grammar(tiny_model_dir):
    """The grammar allows each of the model's end-of-sequence / end-of-turn ids where it may
    end: free text under tool_choice "auto" can stop with <|im_end|> as well as <|endoftext|>."""
    import torch

    from roseinfer.sampling_params import StructuredOutputs
    from roseinfer.structured.grammar import GrammarCompiler, fill_bitmask

    tokenizer = Tokenizer.from_pretrained(tiny_model_dir("llama"))
    compiler = GrammarCompiler(tokenizer, tokenizer.vocab_size)
    use = ToolUse((Tool("add", None, ADD),), "auto")
    matcher = compiler.matcher(StructuredOutputs(grammar=use.grammar()))
    allowed = fill_bitmask([matcher], tokenizer.vocab_size)[0]
    bits = (allowed[:, None] >> torch.arange(32)) & 1
    ok = bits.flatten()[: tokenizer.vocab_size].bool()
    assert len(tokenizer.stop_token_ids) == 2
    assert all(ok[i] for i in tokenizer.stop_token_ids)


@pytest.mark.parametrize(
    ("stop", "finish", "arguments"),
    [
        ((), "tool_calls", '{"city": "Paris"}'),
        (("Par",), "stop", '{"city": "'),  # the stop string cut the arguments
        (("\n\n",), "tool_calls", '{"city": "Paris"}'),  # after the call: it is whole
    ],
)
def test_a_call_cut_by_a_stop_string_does_not_finish_as_tool_calls(
    tiny_model_dir, stop, finish, arguments
):
    """finish_reason "tool_calls" promises calls whose arguments are whole JSON: a stop string
    that cuts one leaves "stop", the call as far as it got."""
    tokenizer = Tokenizer.from_pretrained(tiny_model_dir("llama"))
    text = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n\n'
    params = SamplingParams(max_tokens=200, stop=stop)
    use = ToolUse((Tool("get_weather"),))
    choice = ChoiceState(0, [1], params, tokenizer, frozenset(), use)
    ids = tokenizer.encode(text, add_special_tokens=False)
    for i, token in enumerate(ids):
        choice.feed((token,), "stop" if i == len(ids) - 1 else None)
        if choice.finished:
            break
    assert choice.finish_reason == finish
    assert [(c.name, c.arguments) for c in choice.tool_calls] == [("get_weather", arguments)]


@pytest.mark.parametrize("choice", ["auto", "required", "named"])
@pytest.mark.parametrize("cut", ["<tool_", '<tool_call>\n{"name": "get_weather", "argu'])
def test_a_forced_call_cut_before_its_arguments_leaves_no_markup_as_content(
    tiny_model_dir, choice, cut
):
    """Under tool_choice "required" or a named function the grammar writes nothing but calls:
    a cut (max_tokens, a stop string) before a call's arguments began had come back as content
    (`<tool_call>\\n{"name` in `message.content`). With "auto" such text was the model's own to
    write, and stays content."""
    tokenizer = Tokenizer.from_pretrained(tiny_model_dir("llama"))
    use = ToolUse((Tool("get_weather"),), choice, "get_weather" if choice == "named" else None)
    choice_state = ChoiceState(0, [1], SamplingParams(max_tokens=200), tokenizer, frozenset(), use)
    ids = tokenizer.encode(cut, add_special_tokens=False)
    pieces = []
    for i, token in enumerate(ids):
        pieces.append(choice_state.feed((token,), "length" if i == len(ids) - 1 else None))
    assert choice_state.finish_reason == "length" and not choice_state.tool_calls
    assert "".join(pieces) == choice_state.text == ("" if choice != "auto" else cut)


def test_a_served_forced_call_cut_short_has_no_content(http):
    """The same through the server, streamed and not: max_tokens cuts each forced answer
    before, inside and after its call's header."""
    named = {"type": "function", "function": {"name": "get_weather"}}
    for tool_choice in ("required", named):
        for max_tokens in (2, 5, 9, 14):
            body = {"messages": MESSAGES, "tools": TOOLS, "tool_choice": tool_choice,
                    "max_tokens": max_tokens, "temperature": 0}  # fmt: skip
            r = http.post("/v1/chat/completions", json=body)
            (out,) = r.json()["choices"]
            assert out["finish_reason"] == "length", out
            assert out["message"]["content"] is None, out  # as the stream's helper reads it
            content, _, finish = streamed(http, body)
            assert (content, finish) == ("", "length")


def test_only_schemas_refs_move_not_data_or_property_names():
    """A tool's `$ref`s are moved under the call's `arguments`; a `const`/`enum` value holding
    "$ref" is data, and properties named "const" or "$ref" are schemas all the same."""
    from roseinfer.structured.tools import call_schema

    params = {"type": "object", "properties": {
        "a": {"const": {"$ref": "#"}, "enum": [{"$ref": "#/x"}]},
        "const": {"$ref": "#/properties/a"},
        "$ref": {"type": "string"}}, "items": [{"$ref": "#"}]}  # fmt: skip
    moved = call_schema([Tool("f", parameters=params)])["properties"]["arguments"]
    at = "#/properties/arguments"
    assert moved["properties"]["a"] == params["properties"]["a"]
    assert moved["properties"]["const"] == {"$ref": f"{at}/properties/a"}
    assert moved["properties"]["$ref"] == {"type": "string"} and moved["items"] == [{"$ref": at}]
    two = call_schema([Tool("f", parameters=params), Tool("g")])["anyOf"][0]
    assert two["properties"]["arguments"]["items"] == [{"$ref": "#/anyOf/0/properties/arguments"}]
    # a ref naming the root's $id (dropped) by its URI is a local one
    uri = "https://example.com/unit.json"
    for root_id in (uri, uri + "#"):
        named = {"$id": root_id, "$defs": {"U": {"enum": ["c"], "$anchor": "aa"}},
                 "type": "object", "properties": {
                     "u": {"$ref": f"{uri}#/$defs/U"}, "v": {"$ref": uri},
                     "w": {"$ref": "unit.json#/$defs/U"}, "x": {"$ref": f"{uri}#aa"},
                     "y": {"$ref": "#aa"}, "z": {"$ref": "https://other.example/s.json"}}}  # fmt: skip
        moved = call_schema([Tool("f", parameters=named)])["properties"]["arguments"]
        assert "$id" not in moved and moved["properties"] == {
            "u": {"$ref": f"{at}/$defs/U"}, "v": {"$ref": at}, "w": {"$ref": f"{at}/$defs/U"},
            "x": {"$ref": "#aa"}, "y": {"$ref": "#aa"},
            "z": {"$ref": "https://other.example/s.json"}}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "finish", "content", "calls"),
    [
        ('{"temp": "<tool_call>x"}', "stop", '{"temp": "<tool_call>x"}', 0),  # a JSON answer
        ('{"temp": 1', "length", '{"temp": 1', 0),  # cut: the answer as far as it got
        ('<tool_call>\n{"name": "get_weather", "argu', "length", "", 0),  # a call cut early
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>',
         "stop", "", 1),
    ],
)  # fmt: skip
def test_tools_beside_a_format_read_a_json_answer_whole_and_a_cut_call_as_nothing(
    tiny_model_dir, text, finish, content, calls
):
    """Beside response_format an answer is calls or JSON, its first character telling which:
    a JSON answer is content whole (a "<tool_call>" in its strings included), and a call cut
    before its arguments is not content (it had come back as `<tool_call>\\n{"name` there)."""
    tokenizer = Tokenizer.from_pretrained(tiny_model_dir("llama"))
    use = ToolUse((Tool("get_weather"),), answer_schema={"type": "object"})
    choice = ChoiceState(0, [1], SamplingParams(max_tokens=200), tokenizer, frozenset(), use)
    ids = tokenizer.encode(text, add_special_tokens=False)
    pieces = [choice.feed((t,), finish if i == len(ids) - 1 else None) for i, t in enumerate(ids)]
    assert "".join(pieces) == choice.text == content and len(choice.tool_calls) == calls
    assert choice.finish_reason == ("tool_calls" if calls else finish)


@pytest.mark.parametrize(
    "tool_choice", ["required", {"type": "function", "function": {"name": "add"}}]
)
def test_a_forced_call_beside_a_response_format_calls_and_checks_the_format(http, tool_choice):
    """The Agents SDK's first turn of an agent with tools and an output type sends
    `tool_choice: "required"` with `response_format`: the answer must call, so the format has
    no text to shape: checked, then a no-op (as vLLM; it had been a 400). A format that does
    not compile is still a 400 naming it."""
    fmt = {"type": "json_schema", "json_schema": {"name": "final_output", "strict": True,
           "schema": {"type": "object", "properties": {"t": {"type": "integer"}},
                      "required": ["t"], "additionalProperties": False}}}  # fmt: skip
    body = {"messages": MESSAGES, "tools": TOOLS, "tool_choice": tool_choice, "max_tokens": 120,
            "response_format": fmt, "parallel_tool_calls": False, "temperature": 0}  # fmt: skip
    r = http.post("/v1/chat/completions", json=body)
    assert r.status_code == 200, r.text
    (out,) = r.json()["choices"]
    assert out["message"]["content"] is None
    if out["finish_reason"] != "length":
        check_calls(out["message"]["tool_calls"])
    bad = {**fmt, "json_schema": {"name": "f", "schema": {"type": "object", "properties": {
        "a": {"type": "string", "pattern": "(("}}}}}  # fmt: skip
    r = http.post("/v1/chat/completions", json={**body, "response_format": bad})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "response_format.json_schema.schema"


def test_names_on_assistant_and_tool_messages_are_accepted(http):
    """LangGraph stamps an agent's name on its replies, the OpenAI cookbook a tool result's
    function: an assistant's name is its own label and a tool result's names its call's
    function, so neither is refused where the template does not show it (they had been 400s);
    a tool result naming another function is; a user's is written before its text (the model
    is to know who speaks)."""
    history = [*HISTORY[:2], {**HISTORY[2], "name": "get_weather"}, HISTORY[3],
               {"role": "assistant", "content": "Rome 25, Paris 18.", "name": "weather_agent"},
               {"role": "user", "content": "Thanks"}]  # fmt: skip
    r = http.post("/v1/chat/completions", json={"messages": history, "max_tokens": 2})
    assert r.status_code == 200, r.text
    wrong = [*history[:2], {**HISTORY[2], "name": "add"}, *history[3:]]
    r = http.post("/v1/chat/completions", json={"messages": wrong, "max_tokens": 2})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.2.name"), r.text
    named_user = [*history[:-1], {"role": "user", "content": "Thanks", "name": "ann"}]
    tokens = http.post("/tokenize", json={"messages": named_user}).json()["tokens"]
    assert "ann: Thanks" in http.post("/detokenize", json={"tokens": tokens}).json()["prompt"]


def test_the_sdks_parse_and_stream_helpers_messages_come_back(http):
    """`messages.append(completion.choices[0].message)` after the openai SDK's `parse()` or
    `stream()`: its message carries `parsed` and `function.parsed_arguments` (400s before)."""
    call = {**HISTORY[1]["tool_calls"][0], "index": 0}
    call["function"] = {**call["function"], "parsed_arguments": {"city": "Paris", "unit": "c"}}
    back = {"role": "assistant", "content": None, "refusal": None, "annotations": None,
            "audio": None, "function_call": None, "tool_calls": [call], "parsed": None}  # fmt: skip
    messages = [HISTORY[0], back, {"role": "tool", "tool_call_id": call["id"], "content": "18"}]
    r = http.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 2})
    assert r.status_code == 200, r.text
