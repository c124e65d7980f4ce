"""Structured output (issue 20, first part): a grammar per request, enforced by llguidance through
a bitmask in the batched sampler. Checked by effect through `LLM.generate` on a tiny random
model: every finished output validates (jsonschema, re.fullmatch, choice membership) across seeds
and temperatures; a constrained request leaves plain ones in its batch unchanged; grammar state
survives preemption; bad grammars are refused before anything is queued."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import httpx
import jsonschema
import pytest
from conftest import record_preemptions

from roseinfer import LLM
from roseinfer.sampling_params import SamplingParams, StructuredOutputs

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 6},
        "ok": {"type": "boolean"},
        "kind": {"enum": ["a", "bb", "ccc"]},
        "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 2},
    },
    "required": ["name", "ok", "kind", "tags"],
    "additionalProperties": False,
}
REGEX = "[a-c]{2,5}-[0-9]{2}"
CHOICE = ("red", "green", "blue")


@pytest.fixture(scope="module")
def llm(tiny_model_dir) -> LLM:
    return LLM(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=256, max_num_seqs=32)


def constrained(spec: StructuredOutputs, temperature: float = 0.0, seed: int = 0, **kw):
    kw.setdefault("max_tokens", 64)
    return SamplingParams(temperature=temperature, seed=seed, structured_outputs=spec, **kw)


@pytest.mark.parametrize("temperature", [0.0, 0.8, 1.5])
def test_every_output_matches_its_grammar(llm, temperature):
    specs = [StructuredOutputs(json=SCHEMA), StructuredOutputs(json=json.dumps(SCHEMA)),
             StructuredOutputs(regex=REGEX), StructuredOutputs(choice=CHOICE),
             StructuredOutputs(grammar='root ::= "yes" | "no" | "maybe"'),
             StructuredOutputs(json_object=True)]  # fmt: skip
    params = [constrained(s, temperature, seed) for s in specs for seed in range(3)]
    outs = llm.generate(["Answer:"] * len(params), params, use_tqdm=False)
    for p, out in zip(params, outs, strict=True):
        spec, text = p.structured_outputs, out.text
        if spec.json_object and out.finish_reason == "length":
            assert text.startswith("{")  # any object: a random model may write one forever
            continue
        assert out.finish_reason == "stop", (spec, text)
        if spec.json is not None:
            jsonschema.validate(json.loads(text), SCHEMA)
        elif spec.json_object:
            assert isinstance(json.loads(text), dict)
        elif spec.regex is not None:
            assert re.fullmatch(REGEX, text), text
        elif spec.choice is not None:
            assert text in CHOICE
        else:
            assert text in ("yes", "no", "maybe")


def test_ignore_eos_still_ends_where_the_grammar_does(llm):
    out = llm.generate("x", constrained(StructuredOutputs(choice=CHOICE), ignore_eos=True),
                       use_tqdm=False)[0]  # fmt: skip
    assert out.finish_reason == "stop" and out.text in CHOICE


def test_constrained_request_leaves_31_plain_ones_unchanged(llm):
    prompts = [f"item {i}: " for i in range(32)]
    plain = [SamplingParams(max_tokens=12, temperature=0, ignore_eos=True) if i % 2 else
             SamplingParams(max_tokens=12, seed=i, ignore_eos=True) for i in range(32)]  # fmt: skip
    spec = constrained(StructuredOutputs(json=SCHEMA), 0.8, 3)
    base = llm.generate(prompts, plain, use_tqdm=False)
    mixed = llm.generate(prompts, [spec, *plain[1:]], use_tqdm=False)
    assert [o.token_ids for o in base[1:]] == [o.token_ids for o in mixed[1:]]
    alone = llm.generate(prompts[0], spec, use_tqdm=False)[0]
    assert mixed[0].token_ids == alone.token_ids
    jsonschema.validate(json.loads(alone.text), SCHEMA)


def test_grammar_state_survives_preemption(tiny_model_dir):
    small = LLM(model=tiny_model_dir("llama"), dtype="float32", block_size=4, num_kv_blocks=16,
                max_num_seqs=4, max_num_batched_tokens=16, lone_prefill_tokens=0)  # fmt: skip
    preempted = record_preemptions(small)
    small_schema = {"type": "object", "properties": {"kind": SCHEMA["properties"]["kind"],
                    "ok": {"type": "boolean"}}, "required": ["kind", "ok"],
                    "additionalProperties": False}  # fmt: skip
    spec = StructuredOutputs(json=small_schema)
    params = [constrained(spec, 0.8, seed, max_tokens=44) for seed in range(4)]
    prompts = ["The quick brown fox", "def add(a, b):", "Hello, world!", "One two three"]
    outs = small.generate(prompts, params, use_tqdm=False)
    assert preempted
    for out, prompt, p in zip(outs, prompts, params, strict=True):
        assert out.finish_reason == "stop"
        jsonschema.validate(json.loads(out.text), small_schema)
        roomy = LLM(model=tiny_model_dir("llama"), dtype="float32", loaded=small.loaded,
                    num_kv_blocks=256)  # fmt: skip
        assert out.token_ids == roomy.generate(prompt, p, use_tqdm=False)[0].token_ids


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (StructuredOutputs(regex="(unclosed"), "unclosed group"),
        (StructuredOutputs(json={"type": "nonsense"}), "nonsense"),
        (StructuredOutputs(json="{not json"), "structured_outputs"),
        (StructuredOutputs(grammar="root ::= missing"), "missing"),
        # a language without text: its first token fails (had been an empty "stop" reply)
        (StructuredOutputs(regex=r"[^\s\S]"), "llguidance"),
        (StructuredOutputs(grammar="start: " + '"a" ' * 17_000), "at most 65536"),
    ],
)  # fmt: skip
def test_bad_grammars_are_refused_before_queueing(llm, spec, message):
    with pytest.raises(ValueError, match="structured_outputs") as e:
        llm.generate("x", constrained(spec), use_tqdm=False)
    assert message in str(e.value)
    assert not llm.engine.has_unfinished()


# A grammar that compiles but that llguidance's parser or lexer cannot follow past its first
# token: a row of 5,000 alternatives (its parser takes 2,000), or 50,000 choices (its lexer runs
# out of expressions, in the template every copy shares).
PAST_LIMITS = {
    "wide-row": StructuredOutputs(grammar="root ::= " + " | ".join(f'"c{i}x"' for i in
                                                                     range(5000))),
    "many-choices": StructuredOutputs(choice=tuple(f"choice number {i}" for i in range(50_000))),
}  # fmt: skip


@pytest.mark.parametrize("spec", PAST_LIMITS.values(), ids=PAST_LIMITS.keys())
def test_a_grammar_past_llguidances_limits_fails_that_request_alone(llm, spec):
    """That request ends with reason "error" naming llguidance's limit, its own doing, and so
    does the next one with the same grammar: the matcher's error state had given an empty reply
    ending "stop", as if the grammar were met (the second always: its copies share the spent
    template's lexer). The plain request beside it is what it is alone."""
    plain = SamplingParams(max_tokens=8, temperature=0)
    (alone,) = llm.generate("hello", plain, use_tqdm=False)
    for _ in range(2):
        outs = llm.generate(["hi", "hello"], [constrained(spec, max_tokens=8), plain],
                            use_tqdm=False)  # fmt: skip
        failed = outs[0].outputs[0]
        assert failed.finish_reason == "error" and failed.text == ""
        assert (failed.error or "").startswith("the grammar failed in llguidance: ")
        assert outs[1].outputs[0].token_ids == alone.outputs[0].token_ids
    assert not llm.engine.has_unfinished()


@pytest.mark.parametrize("stream", [False, True])
def test_a_grammar_that_fails_while_it_runs_is_a_400_naming_its_field(tiny_server, stream):
    """The server's answer to such a request: a 400 naming the field the grammar came in
    (streamed: the error event), with llguidance's reason."""
    body = {"prompt": "hi", "max_tokens": 4, "stream": stream,
            "guided_grammar": PAST_LIMITS["wide-row"].grammar}  # fmt: skip
    r = httpx.post(tiny_server[1] + "/v1/completions", json=body, timeout=120)
    if stream:
        events = [line[6:] for line in r.text.splitlines() if line.startswith("data: ")]
        error = json.loads(events[-2])["error"]
    else:
        assert r.status_code == 400, r.text
        error = r.json()["error"]
    assert error["param"] == "guided_grammar", error
    assert error["message"].startswith("the grammar failed in llguidance: "), error


def test_the_grammar_size_limit_leaves_embedded_schemas_out():
    """The tools' grammar embeds each function's schema (`%json {...}`): a tool with 100 KB of
    schema stays within the limit, which bounds the grammar's own rules."""
    from roseinfer.structured.grammar import MAX_GRAMMAR_CHARS, grammar_text
    from roseinfer.structured.tools import Tool, ToolUse

    properties = {f"p{i}": {"type": "string", "description": "d" * 40} for i in range(2000)}
    tool = Tool("f", None, {"type": "object", "properties": properties})
    grammar = ToolUse((tool,), "required").grammar()
    assert len(grammar) > MAX_GRAMMAR_CHARS
    assert grammar_text(StructuredOutputs(grammar=grammar))


def test_a_deeply_nested_grammar_compiles_instead_of_crashing(tiny_model_dir):
    """A chain of 5,000 one-reference rules (40 KB of Lark) overflowed the 8 MB stack of the
    thread that compiled it: the process died (a segfault), with every request it served. It now
    compiles on a thread of its own stack and constrains the output. Run in a subprocess, so
    that a crash fails this test, not the suite."""
    script = f"""
from roseinfer import LLM
from roseinfer.sampling_params import SamplingParams, StructuredOutputs
def name(i):  # a, b, ..., z, ba, bb, ...: the shortest names, the most levels per character
    return (name(i // 26) if i >= 26 else "") + "abcdefghijklmnopqrstuvwxyz"[i % 26]
names = [name(i) for i in range(5001)]
rules = ["start: a"] + ["%s: %s" % (x, y) for x, y in zip(names, names[1:])]
rules.append('%s: "zz"' % names[-1])
llm = LLM(model={tiny_model_dir("llama")!r}, dtype="float32", num_kv_blocks=64)
params = SamplingParams(max_tokens=8, temperature=0,
                        structured_outputs=StructuredOutputs(grammar="\\n".join(rules)))
print("TEXT", llm.generate("hi", params, use_tqdm=False)[0].outputs[0].text)
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert "TEXT zz" in run.stdout.splitlines()


def test_structured_outputs_takes_exactly_one_form():
    for kw in ({}, {"regex": "a", "choice": ("a",)}, {"choice": ()}, {"regex": ""}):
        with pytest.raises(ValueError, match="structured_outputs"):
            StructuredOutputs(**kw)


# ---- through the server ----------------------------------------------------------------------

BODY = {"prompt": "Answer:", "max_tokens": 64, "temperature": 0.8, "seed": 1}
CHAT = {"messages": [{"role": "user", "content": "Answer in JSON"}], "max_tokens": 64,
        "temperature": 0.8, "seed": 1}  # fmt: skip
FORMS = [
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}},
     "schema"),
    ({"response_format": {"type": "json_object"}}, "object"),
    ({"structured_outputs": {"json": SCHEMA}}, "schema"),
    ({"structured_outputs": {"regex": REGEX}}, "regex"),
    ({"structured_outputs": {"choice": list(CHOICE)}}, "choice"),
    ({"structured_outputs": {"grammar": 'root ::= "yes" | "no"'}}, "yes/no"),
    ({"guided_json": SCHEMA}, "schema"),
    ({"guided_regex": REGEX}, "regex"),
    ({"guided_choice": list(CHOICE)}, "choice"),
    ({"guided_grammar": 'root ::= "yes" | "no"'}, "yes/no"),
    ({"json_schema": SCHEMA}, "schema"),
    ({"grammar": 'root ::= "yes" | "no"'}, "yes/no"),
]  # fmt: skip


def check_text(kind: str, text: str, finish_reason: str) -> None:
    if kind == "object" and finish_reason == "length":
        assert text.startswith("{")
        return
    assert finish_reason == "stop", text
    if kind == "schema":
        jsonschema.validate(json.loads(text), SCHEMA)
    elif kind == "object":
        assert isinstance(json.loads(text), dict)
    elif kind == "regex":
        assert re.fullmatch(REGEX, text)
    elif kind == "choice":
        assert text in CHOICE
    else:
        assert text in ("yes", "no")


def stream_text(http, path: str, body: dict) -> tuple[str, str]:
    text, finish = "", ""
    with http.stream("POST", path, json={**body, "stream": True}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:])["choices"]:
                text += choice.get("text") or (choice.get("delta") or {}).get("content") or ""
                finish = choice["finish_reason"] or finish
    return text, finish


@pytest.mark.parametrize(("form", "kind"), FORMS, ids=[next(iter(f)) + "-" + k for f, k in FORMS])
def test_every_request_form_constrains_the_output(tiny_server, form, kind):
    import httpx

    with httpx.Client(base_url=tiny_server[1], timeout=60) as http:
        r = http.post("/v1/completions", json={**BODY, **form})
        assert r.status_code == 200, r.text
        choice = r.json()["choices"][0]
        check_text(kind, choice["text"], choice["finish_reason"])
        r = http.post("/v1/chat/completions", json={**CHAT, **form})
        assert r.status_code == 200, r.text
        choice = r.json()["choices"][0]
        check_text(kind, choice["message"]["content"], choice["finish_reason"])
        check_text(kind, *stream_text(http, "/v1/chat/completions", {**CHAT, **form}))
        check_text(kind, *stream_text(http, "/v1/completions", {**BODY, **form}))


def test_strict_mode_takes_only_closed_schemas():
    from roseinfer.structured.strict import strict_schema_error

    assert strict_schema_error(SCHEMA) is None
    open_schema = {k: v for k, v in SCHEMA.items() if k != "additionalProperties"}
    assert "additionalProperties" in (strict_schema_error(open_schema) or "")
    optional = {**SCHEMA, "required": ["name"]}
    assert "not ['ok', 'kind', 'tags']" in (strict_schema_error(optional) or "")
    nested = {**SCHEMA, "properties": {**SCHEMA["properties"], "inner": {
        "anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]}},
        "required": [*SCHEMA["required"], "inner"]}  # fmt: skip
    assert (strict_schema_error(nested) or "").startswith("the schema.properties.inner.anyOf.0:")
    refs = {"$defs": {"p": {"type": "object", "properties": {"x": {"type": "integer"}},
            "required": ["x"]}}, "$ref": "#/$defs/p"}  # fmt: skip
    assert (strict_schema_error(refs) or "").startswith("the schema.$defs.p:")
    conditional = {**SCHEMA, "then": {"type": "object", "properties": {"q": {}}}}
    assert (strict_schema_error(conditional) or "").startswith("the schema.then:")
    # a schema of the wrong shape is the compiler's to refuse (a 400), not a crash here
    assert strict_schema_error({**SCHEMA, "required": True}) is None
    assert strict_schema_error({**SCHEMA, "properties": ["name"]}) is None
    # deeper than llguidance reads (128 levels): refused without walking it (500 levels of
    # objects had overflowed Python's stack, a 500)
    deep: dict = {"type": "string"}
    for _ in range(250):
        deep = {"type": "object", "properties": {"a": deep}}
    assert "deeper than 128 levels" in (strict_schema_error(deep) or "")


@pytest.mark.parametrize("strict", [True, False])
def test_a_strict_response_format_refuses_an_open_schema(tiny_server, strict):
    """OpenAI's strict mode: an object left open is a 400 naming the schema; without strict the
    same schema constrains the output as JSON Schema reads it."""
    open_schema = {k: v for k, v in SCHEMA.items() if k != "additionalProperties"}
    fmt = {"type": "json_schema", "json_schema": {"name": "t", "schema": open_schema,
                                                  "strict": strict}}  # fmt: skip
    r = httpx.post(tiny_server[1] + "/v1/chat/completions", json={**CHAT, "response_format": fmt},
                   timeout=60)  # fmt: skip
    if strict:
        assert r.status_code == 400, r.text
        assert r.json()["error"]["param"] == "response_format.json_schema.schema"
        assert "additionalProperties" in r.json()["error"]["message"]
    else:
        assert r.status_code == 200, r.text
        (out,) = r.json()["choices"]
        if out["finish_reason"] == "stop":  # not cut by max_tokens
            jsonschema.validate(json.loads(out["message"]["content"]), open_schema)


@pytest.mark.parametrize(
    ("json_schema", "param", "message"),
    [({"name": "t", "strict": True, "schema": {"type": "array", "items": {"type": "string"}}},
      "response_format.json_schema.schema", "an object at the root"),
     ({"name": "a name with spaces", "schema": SCHEMA}, "response_format.json_schema.name",
      "pattern")],
)  # fmt: skip
def test_a_response_format_openai_refuses_is_refused(tiny_server, json_schema, param, message):
    """A strict schema whose root is not an object, and a name outside OpenAI's pattern: 400s
    naming them, as OpenAI's API answers (both had been taken)."""
    fmt = {"type": "json_schema", "json_schema": json_schema}
    r = httpx.post(tiny_server[1] + "/v1/chat/completions", json={**CHAT, "response_format": fmt},
                   timeout=60)  # fmt: skip
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param and message in r.json()["error"]["message"], r.text


def test_openai_client_response_format(tiny_server):
    from openai import OpenAI

    client = OpenAI(base_url=tiny_server[1] + "/v1", api_key="x", max_retries=0)
    model = client.models.list().data[0].id
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": "thing", "schema": SCHEMA, "strict": True},
    }
    for seed in range(3):
        resp = client.chat.completions.create(model=model, messages=CHAT["messages"],
                                              max_tokens=64, seed=seed, response_format=fmt)  # fmt: skip
        jsonschema.validate(json.loads(resp.choices[0].message.content), SCHEMA)
    plain = client.chat.completions.create(model=model, messages=CHAT["messages"], max_tokens=4,
                                           temperature=0, response_format={"type": "text"})  # fmt: skip
    assert plain.choices[0].finish_reason == "length"


@pytest.mark.parametrize(
    ("form", "param"),
    [
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "x",
          "schema": {"type": "nonsense"}}}}, "response_format.json_schema.schema"),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}},
         "response_format.json_schema"),
        ({"structured_outputs": {"regex": "(x"}}, "structured_outputs"),
        ({"structured_outputs": {"regex": "x", "choice": ["x"]}}, "structured_outputs"),
        ({"structured_outputs": {"pattern": "x"}}, "structured_outputs.pattern"),
        ({"grammar": "root ::= missing"}, "grammar"),
        ({"json_schema": {"type": "nonsense"}}, "json_schema"),
        ({"guided_json": "{not json"}, "guided_json"),
        ({"guided_json": SCHEMA, "json_schema": SCHEMA}, "json_schema"),
    ],
)  # fmt: skip
def test_bad_forms_are_400s_naming_the_field(tiny_server, form, param):
    import httpx

    r = httpx.post(tiny_server[1] + "/v1/chat/completions", json={**CHAT, **form}, timeout=60)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.text


def test_grammar_after_a_prefix_cache_hit(llm):
    prompt = "A long shared prefix that fills several KV blocks, then a question: "
    spec = constrained(StructuredOutputs(json=SCHEMA), 0.0)
    (cold,) = llm.generate(prompt, spec, use_tqdm=False)
    (warm,) = llm.generate(prompt, spec, use_tqdm=False)
    assert warm.metrics.num_cached_tokens > 0 and warm.token_ids == cold.token_ids
    jsonschema.validate(json.loads(warm.text), SCHEMA)


def test_openai_client_parse_reads_a_pydantic_model(tiny_server):
    """The openai client's `chat.completions.parse` sends a strict json_schema built from a
    pydantic model and parses our answer back into it."""
    from typing import Literal

    from openai import OpenAI
    from pydantic import BaseModel, Field

    class Thing(BaseModel):
        name: str = Field(max_length=6)
        ok: bool
        kind: Literal["a", "bb", "ccc"]

    client = OpenAI(base_url=tiny_server[1] + "/v1", api_key="x", max_retries=0)
    model = client.models.list().data[0].id
    for seed in range(2):
        resp = client.chat.completions.parse(model=model, messages=CHAT["messages"],
                                             max_tokens=64, seed=seed, response_format=Thing)  # fmt: skip
        parsed = resp.choices[0].message.parsed
        assert isinstance(parsed, Thing) and parsed.kind in ("a", "bb", "ccc")
