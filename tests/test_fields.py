"""The field table (roseinfer/server/fields.py) through the real HTTP server: every refused field
is a 400 naming it, every no-op and neutral value is accepted without changing the text, an
unknown field is a 400 naming it, honoured fields act, and values out of range are 400s naming
the field (SamplingParams' checks) while other requests go on. One in-process server over the
tiny random llama (`tiny_server` in conftest.py)."""

from __future__ import annotations

import asyncio
import json
import os

import httpx
import pytest

from roseinfer.chat import ChatMessage, TextPart
from roseinfer.server import field_docs
from roseinfer.server import fields as F
from roseinfer.server import protocol as P
from roseinfer.server.embeddings import EmbeddingRequest
from roseinfer.server.llamacpp import EmbeddingFields, InfillFields, NativeFields
from roseinfer.server.llamacpp_forms import ALIASES
from roseinfer.server.scores import RerankRequest, ScoreRequest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATHS = F.ENDPOINTS
CHAT = [{"role": "user", "content": "Hello, world!"}]
BASE = {
    F.CHAT: {"messages": CHAT, "max_tokens": 6, "temperature": 0, "ignore_eos": True},
    F.COMPLETIONS: {"prompt": "The quick brown fox", "max_tokens": 6, "temperature": 0,
                    "ignore_eos": True},
    F.GENERATE: {"prompt": "The quick brown fox", "max_new_tokens": 6, "stop_on_eos": False},
    F.RESPONSES: {"input": [{"role": "user", "content": [{"type": "input_text",
                                                          "text": "Hello, world!"}]}],
                  "max_output_tokens": 6, "temperature": 0, "ignore_eos": True},
    F.EMBEDDINGS: {"input": "The quick brown fox"},
    F.LLAMACPP_COMPLETION: {"prompt": "The quick brown fox", "n_predict": 6, "temperature": 0,
                            "ignore_eos": True},
    F.LLAMACPP_EMBEDDING: {"content": "The quick brown fox"},
    F.LLAMACPP_INFILL: {"input_prefix": "The quick", "input_suffix": "fox", "n_predict": 6},
    F.SCORE: {"text_1": "The quick brown fox", "text_2": ["jumps", "over"]},
    F.RERANK: {"query": "The quick brown fox", "documents": ["jumps", "over"]},
}  # fmt: skip
CANDIDATES = [0, 1, -1, False, True, "", "none", [], {}, ["text"], {"type": "text"}, 6, 0.5, "x",
              ["x"], {"k": "v"}, "auto", "medium", "left", "completed", "disabled", "24h"]  # fmt: skip


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=60) as c:
        yield c


def post(http: httpx.Client, endpoint: str, body: dict | str) -> httpx.Response:
    content = body if isinstance(body, str) else json.dumps(body)
    return http.post(PATHS[endpoint], content=content, headers={"Content-Type": "application/json"})


def text_of(endpoint: str, r: httpx.Response) -> list[str]:
    assert r.status_code == 200, r.text
    out = r.json()
    if endpoint == F.GENERATE:
        return [out["text"]]
    if endpoint == F.RESPONSES:
        return [part["text"] for item in out["output"] for part in item["content"]]
    if endpoint == F.LLAMACPP_COMPLETION:
        return [out["content"]]
    key = "message" if endpoint == F.CHAT else None
    return [c[key]["content"] if key else c["text"] for c in out["choices"]]


def with_field(endpoint: str, name: str, value) -> tuple[dict, str]:
    """BASE with `name` (possibly nested: messages[].x, stream_options.x) set; and its param."""
    body = json.loads(json.dumps(BASE[endpoint]))
    if name.startswith("messages[]."):
        body["messages"][0][name.split(".", 1)[1]] = value
        return body, "messages.0." + name.split(".", 1)[1]
    if name.startswith("input[].content[]."):
        body["input"][0]["content"][0][name.rsplit(".", 1)[1]] = value
        return body, "input.0.content.0." + name.rsplit(".", 1)[1]
    if name.startswith("input[]."):
        body["input"][0][name.split(".", 1)[1]] = value
        return body, "input.0." + name.split(".", 1)[1]
    if name.startswith(("stream_options.", "text.")):
        body[name.split(".")[0]] = {name.split(".", 1)[1]: value}
        return body, name
    if name.startswith("structured_outputs."):  # beside a constraint: what it would change
        body["structured_outputs"] = {"choice": ["yes", "no"], name.split(".", 1)[1]: value}
        return body, name
    body[name] = value
    return body, name


def specs(kind: F.Kind) -> list[tuple[str, F.FieldSpec]]:
    return [(e, s) for s in F.FIELDS if s.kind is kind for e in s.endpoints]


def accepted_value(spec: F.FieldSpec, body: dict, accepted: bool):
    for v in CANDIDATES:
        if spec.accepts(v, body) == accepted:
            return v
    return None


# ---- the table itself --------------------------------------------------------------------------


def test_readme_section_is_generated_from_the_table(tmp_path):
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    table = field_docs.readme_table(readme)
    assert table is not None, "README.md has no API fields section"
    assert table == field_docs.fields_markdown(), (
        "regenerate README's table: python -m roseinfer.server.field_docs README.md"
    )
    # the command writes the table between the markers, the rest as it was
    stale = tmp_path / "README.md"
    stale.write_text(readme.replace(table, "| old |\n"), encoding="utf-8")
    assert field_docs.main([str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == readme


def test_pydantic_models_hold_exactly_the_honoured_fields():
    models = {
        (F.CHAT, ""): P.ChatCompletionRequest, (F.COMPLETIONS, ""): P.CompletionRequest,
        (F.GENERATE, ""): P.GenerateRequest, (F.CHAT, "messages[]"): ChatMessage,
        (F.CHAT, "messages[].content[]"): TextPart,
        (F.CHAT, "stream_options"): P.StreamOptions,
        (F.COMPLETIONS, "stream_options"): P.StreamOptions,
        (F.EMBEDDINGS, ""): EmbeddingRequest, (F.SCORE, ""): ScoreRequest,
        (F.RERANK, ""): RerankRequest,
    }  # fmt: skip
    for (endpoint, scope), model in models.items():
        assert F.honoured(endpoint, scope) == set(model.model_fields), (endpoint, scope)
    # llama.cpp's /completion: its own fields, those it reads as /v1/completions, and other
    # servers' names of them (read as their twins)
    native = (
        set(NativeFields.model_fields)
        | set(ALIASES)
        | (F.honoured(F.LLAMACPP_COMPLETION) & set(P.CompletionRequest.model_fields))
    )
    assert F.honoured(F.LLAMACPP_COMPLETION) == native
    assert F.honoured(F.LLAMACPP_EMBEDDING) == set(EmbeddingFields.model_fields)
    # /infill: /completion's, but its prompt, and its own
    infill = (F.honoured(F.LLAMACPP_COMPLETION) - {"prompt"}) | set(InfillFields.model_fields)
    assert F.honoured(F.LLAMACPP_INFILL) == infill


def test_issue_18_fields_are_all_classified():
    named = ("min_p bad_words allowed_token_ids grammar json_schema structured_outputs n_predict "
             "repeat_penalty typical_p mirostat dynatemp_range add_generation_prompt "
             "continue_final_message truncate_prompt_tokens prompt_logprobs chat_template_kwargs "
             "skip_special_tokens user metadata store service_tier parallel_tool_calls")  # fmt: skip
    for name in named.split():
        assert name in F.TABLE[F.CHAT], name
    assert all(s.accepts is not None for s in F.FIELDS if s.kind is not F.Kind.HONOURED)
    counts = field_docs.counts()
    assert sum(counts.values()) == sum(len(t) for t in F.TABLE.values())


# ---- through the server ------------------------------------------------------------------------


@pytest.mark.parametrize(("endpoint", "spec"), specs(F.Kind.REFUSED),
                         ids=[f"{e}-{s.name}" for e, s in specs(F.Kind.REFUSED)])  # fmt: skip
def test_refused_field_is_a_400_naming_it(http, endpoint, spec):
    body, param = with_field(endpoint, spec.name, None)
    value = accepted_value(spec, body, accepted=False)
    body, param = with_field(endpoint, spec.name, value)
    r = post(http, endpoint, body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == param and spec.name.rsplit(".", 1)[-1] in err["message"]
    assert "not supported" in err["message"]


@pytest.mark.parametrize("endpoint", [F.CHAT, F.COMPLETIONS, F.RESPONSES])
def test_no_ops_and_neutral_values_are_accepted_and_change_nothing(http, endpoint):
    plain = text_of(endpoint, post(http, endpoint, BASE[endpoint]))
    body = dict(BASE[endpoint])
    stream_options, message, structured, part, text = {}, {}, {}, {}, {}
    for spec in F.TABLE[endpoint].values():
        if spec.kind is F.Kind.HONOURED:
            continue
        value = accepted_value(spec, body, accepted=True)
        if value is None:  # refused unless null: null is the field left out
            assert spec.kind is F.Kind.REFUSED and spec.accepts_doc == "null"
            value = None
        nested = spec.name.startswith(("messages[].", "stream_options.", "structured_outputs.",
                                       "input[].", "text."))  # fmt: skip
        key = spec.name.rsplit(".", 1)[-1] if nested else spec.name  # llama.cpp's speculative.x
        if spec.name.startswith("messages[].tool_calls[]."):
            continue  # a user message has no calls: test_the_sdks_own_messages_come_back
        if spec.name.startswith("input[].content[]."):
            part[key] = value
        elif spec.name.startswith(("messages[].", "input[].")):
            message[key] = value
        elif spec.name.startswith("text."):
            text[key] = value
        elif spec.name.startswith("stream_options."):
            stream_options[key] = value
        elif spec.name.startswith("structured_outputs."):
            structured[key] = value
        else:
            body[key] = value
    if endpoint == F.CHAT:
        body["messages"] = [{**CHAT[0], **message}]
    if endpoint == F.RESPONSES:
        (item,) = BASE[F.RESPONSES]["input"]
        body["input"] = [{**item, **message, "content": [{**item["content"][0], **part}]}]
        body["text"] = text
    assert text_of(endpoint, post(http, endpoint, body)) == plain
    # stream_options' own no-ops, where it is allowed: with stream
    streamed = {**body, "stream": True}
    assert streamed_text(http, endpoint, {**streamed, "stream_options": stream_options}) == plain
    r = post(http, endpoint, {**body, "stream_options": stream_options})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "stream_options"), r.text
    assert text_of(endpoint, post(http, endpoint, {**body, "stream_options": None})) == plain
    # structured_outputs' own, beside a constraint: the constraint's output, unchanged
    choice = {**body, "structured_outputs": {"choice": ["yes", "no"]}}
    constrained = text_of(endpoint, post(http, endpoint, choice))
    both = {**body, "structured_outputs": {"choice": ["yes", "no"], **structured}}
    assert text_of(endpoint, post(http, endpoint, both)) == constrained


def streamed_text(http: httpx.Client, endpoint: str, body: dict) -> list[str]:
    r = post(http, endpoint, body)
    assert r.status_code == 200, r.text
    text = ""
    for line in r.text.splitlines():
        if endpoint == F.RESPONSES and line.startswith("data: "):
            text += json.loads(line[6:]).get("delta", "")
        elif line.startswith("data: ") and line != "data: [DONE]":
            for choice in json.loads(line[6:])["choices"]:
                text += (
                    choice["delta"].get("content") or "" if "delta" in choice else choice["text"]
                )
    return [text]


@pytest.mark.parametrize(("endpoint", "where"), [
    (F.CHAT, ""), (F.COMPLETIONS, ""), (F.GENERATE, ""), (F.CHAT, "message"),
    (F.CHAT, "part"), (F.COMPLETIONS, "stream_options"), (F.RESPONSES, ""),
    (F.RESPONSES, "message"), (F.RESPONSES, "part"), (F.RESPONSES, "stream_options"),
    (F.EMBEDDINGS, ""), (F.LLAMACPP_COMPLETION, ""), (F.LLAMACPP_EMBEDDING, ""),
    (F.SCORE, ""), (F.RERANK, ""), (F.LLAMACPP_INFILL, ""),
])  # fmt: skip
def test_unknown_field_is_a_400_naming_it(http, endpoint, where):
    body = json.loads(json.dumps(BASE[endpoint]))
    if endpoint == F.RESPONSES and where in ("message", "part"):
        item, param = body["input"][0], "input.0.mood"
        if where == "part":
            item, param = item["content"][0], "input.0.content.0.mood"
        item["mood"] = "happy"
    elif where == "message":
        body["messages"][0]["mood"], param = "happy", "messages.0.mood"
    elif where == "part":
        body["messages"] = [
            {"role": "user", "content": [{"type": "text", "text": "Hi", "mood": 1}]}
        ]
        param = "messages.0.content.0.mood"
    elif where == "stream_options":
        body["stream_options"], param = {"mood": True}, "stream_options.mood"
        body["stream"] = True
    else:
        body["some_future_field"], param = None, "some_future_field"  # even when null
    r = post(http, endpoint, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param and r.json()["error"]["code"] == "unknown_field"


def test_non_text_content_part_is_refused_and_an_unshown_name_is_written(http, tiny_server):
    image = {"type": "image_url", "image_url": {"url": "http://x/y.png"}}
    body = {**BASE[F.CHAT], "messages": [{"role": "user", "content": [image]}]}
    r = post(http, F.CHAT, body)
    assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.0.content.0.type")
    # The tiny model's template (like SmolLM2's) never renders a name: it is written before
    # the message's text, so the model sees who speaks (SillyTavern's group chats send them)
    tokenizer = tiny_server[0].state.client.engine.tokenizer
    named = post(http, F.CHAT, {**BASE[F.CHAT], "messages": [{**CHAT[0], "name": "bob"}],
                                "return_token_ids": True})  # fmt: skip
    spoken = [{"role": "user", "content": "bob: " + CHAT[0]["content"]}]
    assert named.json()["prompt_token_ids"] == tokenizer.encode_chat(spoken)
    same = post(http, F.CHAT, {**BASE[F.CHAT], "messages": spoken})
    assert text_of(F.CHAT, named) == text_of(F.CHAT, same)
    r = post(http, F.CHAT, {**BASE[F.CHAT], "messages": [{**CHAT[0], "name": ""}]})
    assert text_of(F.CHAT, r) == text_of(F.CHAT, post(http, F.CHAT, BASE[F.CHAT]))


# ---- honoured fields, by their effect ------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("metadata", {"a": 1}), ("metadata", {"k": {"deep": "x"}}), ("metadata", {"k": "v" * 513}),
     ("service_tier", "bogus"), ("tools", ""), ("image_data", {})],
)  # fmt: skip
def test_no_op_and_neutral_fields_take_only_their_own_shape(http, field, value):
    """A no-op field's value of the wrong shape (OpenAI's metadata: strings; its service tiers)
    and a refused field's neutral value of the wrong type are 400s naming the field."""
    endpoint = F.COMPLETIONS if field in ("tools", "image_data") else F.CHAT
    r = post(http, endpoint, {**BASE[endpoint], field: value})
    assert (r.status_code, r.json()["error"]["param"]) == (400, field), r.text


def test_an_empty_stop_string_is_ignored_as_documented(http):
    """It would match anywhere: the table says it is ignored, and the text is the same."""
    for endpoint in (F.COMPLETIONS, F.GENERATE):
        want = text_of(endpoint, post(http, endpoint, BASE[endpoint]))
        assert text_of(endpoint, post(http, endpoint, {**BASE[endpoint], "stop": [""]})) == want
        assert text_of(endpoint, post(http, endpoint, {**BASE[endpoint], "stop": ""})) == want
    assert all("empty" in f.doc for f in F.FIELDS if f.name == "stop")


def test_n_predict_and_the_output_limit_given_twice(http):
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "max_tokens": None, "n_predict": 3})
    assert r.json()["usage"]["completion_tokens"] == 3
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "max_tokens": 3, "n_predict": 3})
    assert r.json()["usage"]["completion_tokens"] == 3
    r = post(http, F.CHAT, {**BASE[F.CHAT], "max_tokens": 3, "max_completion_tokens": 4})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "max_tokens")
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "max_tokens": 3, "n_predict": -1})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "n_predict")


def test_n_cmpl_is_llama_cpps_n(http):
    body = {**BASE[F.COMPLETIONS], "temperature": 1.0, "seed": 3}
    r = post(http, F.COMPLETIONS, {**body, "n_cmpl": 3})
    assert text_of(F.COMPLETIONS, r) == text_of(
        F.COMPLETIONS, post(http, F.COMPLETIONS, {**body, "n": 3})
    )
    assert len(r.json()["choices"]) == 3
    r = post(http, F.CHAT, {**BASE[F.CHAT], "n": 2, "n_cmpl": 2})
    assert len(r.json()["choices"]) == 2
    r = post(http, F.CHAT, {**BASE[F.CHAT], "n": 2, "n_cmpl": 3})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "n_cmpl")
    for n_cmpl in (0, 129):
        r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "n_cmpl": n_cmpl})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "n_cmpl"), r.text
    # best_of is neutral when it equals the count, whichever name gave it
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "n_cmpl": 2, "best_of": 2})
    assert len(r.json()["choices"]) == 2, r.text
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "n_cmpl": 2, "best_of": 1})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "best_of"), r.text


def test_the_peers_newer_fields_are_in_the_table():
    """Fields of vLLM's and llama.cpp's request parsers that the table had missed (session 51's
    audit, against their sources of November 2026): each one is classified, none unknown."""
    chat = ("include_reasoning thinking_token_budget watermarking truncation_side "
            "logprob_token_ids media_io_kwargs session_id routed_experts_prompt_start "
            "return_token_offsets return_prompt_text return_mm_kwargs ec_transfer_params "
            "repetition_detection stream_interval structural_tag n_discard n_cmpl n_cache_reuse "
            "adaptive_target adaptive_decay backend_sampling speculative.n_min speculative.n_max "
            "speculative.p_min speculative.type speculative.ngram_size_n speculative.ngram_size_m "
            "speculative.ngram_m_hits grammar_lazy chat_format thinking_forced_open chat_parser "
            "preserved_tokens grammar_triggers reasoning_budget_tokens "
            "reasoning_budget_start_tag reasoning_budget_end_tag reasoning_budget_message "
            "reasoning_budget_arm_immediately")  # fmt: skip
    for name in chat.split():
        assert name in F.TABLE[F.CHAT], name
    for name in ("prompt_embeds", "parse_tool_calls", "speculative.n_max", "n_cmpl"):
        assert name in F.TABLE[F.COMPLETIONS], name


def test_a_flat_key_with_a_dot_is_llama_cpps_own(http):
    """llama.cpp spells `speculative.n_max` as one key: a no-op here; nested, it is unknown."""
    plain = text_of(F.COMPLETIONS, post(http, F.COMPLETIONS, BASE[F.COMPLETIONS]))
    body = {**BASE[F.COMPLETIONS], "speculative.n_max": 16, "speculative.p_min": 0.75}
    assert text_of(F.COMPLETIONS, post(http, F.COMPLETIONS, body)) == plain
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "speculative.n_max": "16"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "speculative.n_max")
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "speculative": {"n_max": 16}})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "speculative")


def test_truncate_prompt_tokens_keeps_the_last_tokens(http, tiny_server):
    tokenizer = tiny_server[0].state.client.engine.tokenizer
    ids = tokenizer.encode(BASE[F.COMPLETIONS]["prompt"])
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "truncate_prompt_tokens": 2})
    assert r.json()["usage"]["prompt_tokens"] == 2
    same = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "prompt": ids[-2:]})
    assert text_of(F.COMPLETIONS, r) == text_of(F.COMPLETIONS, same)
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "truncate_prompt_tokens": 0})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "truncate_prompt_tokens")


def test_truncation_side_right_keeps_the_first_tokens(http, tiny_server):
    """vLLM's `truncation_side`: "right" keeps the prompt's first k tokens, on completions and
    chat alike; "left" is the default; without `truncate_prompt_tokens` nothing is cut."""
    tokenizer = tiny_server[0].state.client.engine.tokenizer
    ids = tokenizer.encode(BASE[F.COMPLETIONS]["prompt"])
    cut = {"truncate_prompt_tokens": 2, "truncation_side": "right"}
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], **cut, "return_token_ids": True})
    assert r.json()["choices"][0]["prompt_token_ids"] == ids[:2], r.text
    same = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "prompt": ids[:2]})
    assert text_of(F.COMPLETIONS, r) == text_of(F.COMPLETIONS, same)
    left = {"truncate_prompt_tokens": 2, "truncation_side": "left", "return_token_ids": True}
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], **left})
    assert r.json()["choices"][0]["prompt_token_ids"] == ids[-2:], r.text
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "truncation_side": "right"})
    assert r.json()["usage"]["prompt_tokens"] == len(ids)
    chat_ids = tokenizer.encode_chat(BASE[F.CHAT]["messages"])
    body = {**BASE[F.CHAT], "truncate_prompt_tokens": 3, "truncation_side": "right",
            "return_token_ids": True}  # fmt: skip
    assert post(http, F.CHAT, body).json()["prompt_token_ids"] == chat_ids[:3]
    r = post(http, F.CHAT, {**BASE[F.CHAT], "truncation_side": "middle"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "truncation_side"), r.text


def test_request_id_names_the_response(http):
    async def main():
        async with httpx.AsyncClient(base_url=str(http.base_url), timeout=60) as c:
            body = {**BASE[F.COMPLETIONS], "request_id": "abc"}
            return await asyncio.gather(*(c.post(PATHS[F.COMPLETIONS], json=body) for _ in "12"))

    for r in asyncio.run(main()):  # the same id twice at once: the engine's ids stay distinct
        assert r.status_code == 200 and r.json()["id"] == "cmpl-abc"
    r = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "request_id": ""})  # had been "cmpl-"
    assert (r.status_code, r.json()["error"]["param"]) == (400, "request_id"), r.text


def test_chat_template_fields(http, tiny_server):
    tokenizer = tiny_server[0].state.client.engine.tokenizer
    msgs = [*CHAT, {"role": "assistant", "content": "The quick"}]

    def prompt_tokens(**fields) -> int:
        r = post(http, F.CHAT, {**BASE[F.CHAT], "messages": msgs, **fields})
        assert r.status_code == 200, r.text
        return r.json()["usage"]["prompt_tokens"]

    assert prompt_tokens() == len(tokenizer.encode_chat(msgs))
    assert prompt_tokens(add_generation_prompt=False) == len(tokenizer.encode_chat(msgs, False))
    cont = tokenizer.apply_chat_template(msgs, False, True)
    assert cont.endswith("The quick")  # open: the model continues the assistant's words
    assert prompt_tokens(add_generation_prompt=False, continue_final_message=True) == len(
        tokenizer.encode(cont, False)
    )
    for fields, param in [
        ({"continue_final_message": True}, "continue_final_message"),
        ({"chat_template_kwargs": {"enable_thinking": False}}, "chat_template_kwargs.enable_thinking"),
        ({"chat_template_kwargs": {"add_generation_prompt": False}},
         "chat_template_kwargs.add_generation_prompt"),
    ]:  # fmt: skip
        r = post(http, F.CHAT, {**BASE[F.CHAT], **fields})
        assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text


def test_timings_per_token_on_v1_streams(http):
    """llama.cpp's `timings_per_token` (its web page sends it on every chat request): each
    streamed chunk of a choice carries the choice's timings so far; a non-streamed answer is
    the same as without it."""
    for endpoint in (F.CHAT, F.COMPLETIONS):
        body = {**BASE[endpoint], "timings_per_token": True, "stream": True,
                "stream_options": {"include_usage": True}}  # fmt: skip
        with http.stream("POST", PATHS[endpoint], json=body) as r:
            assert r.status_code == 200
            events = [json.loads(line[6:]) for line in r.iter_lines()
                      if line.startswith("data: {")]  # fmt: skip
        with_output = [e for e in events if e["choices"] and (
            e["choices"][0].get("text") or e["choices"][0].get("delta", {}).get("content"))]  # fmt: skip
        assert with_output and all("timings" in e for e in with_output)
        counts = [e["timings"]["predicted_n"] for e in with_output]
        assert counts == sorted(counts) and counts[-1] == BASE[endpoint]["max_tokens"]
        last = with_output[-1]["timings"]
        assert last["prompt_n"] + last["cache_n"] == events[-1]["usage"]["prompt_tokens"]
        assert last["predicted_ms"] >= 0 and last["prompt_ms"] > 0
        assert "timings" not in events[-1]  # the usage chunk has no choice
        plain = text_of(endpoint, post(http, endpoint, BASE[endpoint]))
        body = {**BASE[endpoint], "timings_per_token": True}
        assert text_of(endpoint, post(http, endpoint, body)) == plain


def test_llama_cpps_web_page_request_is_served(http):
    """The body llama.cpp's web page sends on every chat request with its default settings
    (its chat service and settings, November 2026): `max_tokens: -1`, its `typ_p` name, the
    samplers' neutral values and `reasoning_format: "auto"` are taken; the stream carries the
    prompt's progress and the timings it reads its speed from; a `typ_p` that would change the
    output is a 400 naming it."""
    body = {"messages": CHAT, "stream": True, "return_progress": True,
            "reasoning_format": "auto", "temperature": 0.8, "max_tokens": -1,
            "dynatemp_range": 0, "dynatemp_exponent": 1, "top_k": 40, "top_p": 0.95,
            "min_p": 0.05, "xtc_probability": 0, "xtc_threshold": 0.1, "typ_p": 1,
            "repeat_last_n": 64, "repeat_penalty": 1, "presence_penalty": 0,
            "frequency_penalty": 0, "dry_multiplier": 0, "dry_base": 1.75,
            "dry_allowed_length": 2, "dry_penalty_last_n": -1,
            "samplers": ["top_k", "typ_p", "top_p", "min_p", "temperature"],
            "timings_per_token": True, "seed": 1}  # fmt: skip
    with http.stream("POST", PATHS[F.CHAT], json=body) as r:
        assert r.status_code == 200, r.read()
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: {")]
    progress = [e["prompt_progress"] for e in events if "prompt_progress" in e]
    assert progress and progress[-1]["processed"] == progress[-1]["total"] > 0
    first_text = next(i for i, e in enumerate(events) if e["choices"] and
                      e["choices"][0]["delta"].get("content"))  # fmt: skip
    assert all(i < first_text for i, e in enumerate(events) if "prompt_progress" in e)
    assert all(e["choices"] == [] for e in events if "prompt_progress" in e)
    assert events[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert "timings" in events[-1] and events[-1]["timings"]["predicted_n"] >= 1
    # llama.cpp's earlier page sent the samplers as one string of letters
    with http.stream("POST", PATHS[F.CHAT], json={**body, "samplers": "kypmt"}) as r:
        assert r.status_code == 200, r.read()
    for name, value in (("typ_p", 0.5), ("max_tokens", -2)):
        r = post(http, F.CHAT, {**BASE[F.CHAT], name: value})
        assert (r.status_code, r.json()["error"]["param"]) == (400, name), r.text
    # -1 is no limit: what the context leaves, as a chat request without one
    unlimited = {k: v for k, v in BASE[F.CHAT].items() if k not in ("max_tokens", "ignore_eos")}
    r = post(http, F.CHAT, {**unlimited, "max_tokens": -1})
    assert text_of(F.CHAT, r) == text_of(F.CHAT, post(http, F.CHAT, unlimited))


def test_return_progress_on_completions_and_llama_cpps_completion(http):
    """`return_progress` on /v1/completions (a chunk without choices) and /completion (its
    partial chunk, as llama.cpp's): the prompt's progress before its first token; a prefix
    cache hit counted in `cache`; without `stream` the answer is the same as without it."""
    prompt = "The slow green turtle walks along the quiet sandy beach"
    for path, body in ((PATHS[F.COMPLETIONS], {**BASE[F.COMPLETIONS], "prompt": prompt}),
                       (PATHS[F.LLAMACPP_COMPLETION],
                        {**BASE[F.LLAMACPP_COMPLETION], "prompt": prompt})):  # fmt: skip
        for _ in range(2):  # the second: its prompt's first blocks from the prefix cache
            with http.stream("POST", path, json={**body, "stream": True,
                                                 "return_progress": True}) as r:  # fmt: skip
                events = [json.loads(line[6:]) for line in r.iter_lines()
                          if line.startswith("data: {")]  # fmt: skip
            progress = [e["prompt_progress"] for e in events if "prompt_progress" in e]
            assert progress and progress[-1]["processed"] == progress[-1]["total"] > 1
            assert "prompt_progress" in events[0]
        assert progress[-1]["cache"] > 0
        plain = post(http, F.COMPLETIONS, BASE[F.COMPLETIONS])
        same = post(http, F.COMPLETIONS, {**BASE[F.COMPLETIONS], "return_progress": True})
        assert text_of(F.COMPLETIONS, plain) == text_of(F.COMPLETIONS, same)


def test_chat_echo_prepends_the_last_message_of_the_answers_role(http):
    """vLLM's chat `echo`: a continued assistant message comes back whole (the message's text,
    then what the model wrote), in every choice, streamed or not; a user's last message is
    echoed only where no new turn opens (`add_generation_prompt: false`)."""
    msgs = [*CHAT, {"role": "assistant", "content": [{"type": "text", "text": "The"},
                                                     {"type": "text", "text": "quick"}]}]  # fmt: skip
    cont = {**BASE[F.CHAT], "messages": msgs, "add_generation_prompt": False,
            "continue_final_message": True, "n": 2}  # fmt: skip
    plain = text_of(F.CHAT, post(http, F.CHAT, cont))
    echoed = text_of(F.CHAT, post(http, F.CHAT, {**cont, "echo": True}))
    assert plain[0] and echoed == ["The\nquick" + t for t in plain]
    with http.stream("POST", PATHS[F.CHAT], json={**cont, "echo": True, "stream": True}) as r:
        events = [json.loads(line[6:]) for line in r.iter_lines()
                  if line.startswith("data: {")]  # fmt: skip
    streamed = ["", ""]
    for event in events:
        for choice in event["choices"]:
            streamed[choice["index"]] += choice["delta"].get("content") or ""
    opening = events[0]["choices"][0]["delta"]
    assert opening == {"role": "assistant", "content": "The\nquick"}
    assert streamed == echoed
    # a user's last message: a new assistant turn opens, nothing of it is echoed ...
    new_turn = text_of(F.CHAT, post(http, F.CHAT, BASE[F.CHAT]))
    assert text_of(F.CHAT, post(http, F.CHAT, {**BASE[F.CHAT], "echo": True})) == new_turn
    # ... unless the prompt opens none
    open_user = {**BASE[F.CHAT], "add_generation_prompt": False}
    plain = text_of(F.CHAT, post(http, F.CHAT, open_user))
    echoed = text_of(F.CHAT, post(http, F.CHAT, {**open_user, "echo": True}))
    assert echoed == [CHAT[0]["content"] + plain[0]]


def test_template_fields_act_where_the_template_reads_them():
    """A template that renders names and reads a variable: both reach the prompt."""
    from conftest import build_tokenizer

    from roseinfer.chat import ChatMessage, chat_prompt_ids
    from roseinfer.tokenizer import Tokenizer

    hf = build_tokenizer()
    hf.chat_template = (
        "{% if greeting %}{{ greeting }}\n{% endif %}{% for m in messages %}{{ m['role'] }}"
        "{% if m.name %} ({{ m.name }}){% endif %}: {{ m['content'] }}\n{% endfor %}"
    )
    tok = Tokenizer(hf)
    messages = [ChatMessage(role="user", content="Hi", name="bob")]
    ids = chat_prompt_ids(tok, messages, template_kwargs={"greeting": "Hello"})
    assert tok.decode(ids) == "Hello\nuser (bob): Hi\n"


def test_an_empty_model_name_is_the_model_left_out(http):
    """vLLM takes `model: ""` as no model named (some clients send their unset setting so)."""
    for endpoint in (F.CHAT, F.COMPLETIONS):
        r = post(http, endpoint, {**BASE[endpoint], "model": ""})
        assert text_of(endpoint, r) == text_of(endpoint, post(http, endpoint, BASE[endpoint]))
    r = post(http, F.CHAT, {**BASE[F.CHAT], "model": "gpt-4"})
    assert (r.status_code, r.json()["error"]["param"]) == (404, "model")


def test_reasoning_effort_goes_to_the_template_as_vllm_hands_it(http):
    """OpenAI's `reasoning_effort`: the template's `reasoning_effort` and `enable_thinking`
    (false for "none"; `chat_template_kwargs` win) where it reads them; a template that reads
    neither (the tiny model's, SmolLM2's) refuses any effort but "none"."""
    from conftest import build_tokenizer

    from roseinfer.chat import ChatError, ChatMessage, chat_prompt_text
    from roseinfer.tokenizer import Tokenizer

    hf = build_tokenizer()
    hf.chat_template = (
        "{% if enable_thinking is defined and not enable_thinking %}[no thinking]{% endif %}"
        "{% if reasoning_effort %}[effort {{ reasoning_effort }}]{% endif %}"
        "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    )
    tok = Tokenizer(hf)
    hi = [ChatMessage(role="user", content="Hi")]
    assert chat_prompt_text(tok, hi, reasoning_effort="none") == "[no thinking][effort none]Hi"
    assert chat_prompt_text(tok, hi, reasoning_effort="high") == "[effort high]Hi"
    kept = chat_prompt_text(tok, hi, template_kwargs={"enable_thinking": True},
                            reasoning_effort="none")  # fmt: skip
    assert kept == "[effort none]Hi"
    hf.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    with pytest.raises(ChatError) as e:
        chat_prompt_text(Tokenizer(hf), hi, reasoning_effort="low")
    assert e.value.param == "reasoning_effort"
    r = post(http, F.CHAT, {**BASE[F.CHAT], "reasoning_effort": "medium"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "reasoning_effort"), r.text
    none = post(http, F.CHAT, {**BASE[F.CHAT], "reasoning_effort": "none"})
    assert text_of(F.CHAT, none) == text_of(F.CHAT, post(http, F.CHAT, BASE[F.CHAT]))


def test_a_name_the_template_drops_is_written_into_its_message():
    """A template that shows the system message's name only: the user message's name is
    written before its text, the system message's left to the template."""
    from conftest import build_tokenizer

    from roseinfer.chat import ChatMessage, chat_prompt_ids
    from roseinfer.tokenizer import Tokenizer

    hf = build_tokenizer()
    hf.chat_template = (
        "{% for m in messages %}{{ m['role'] }}{% if m.name and m['role'] == 'system' %} "
        "({{ m.name }}){% endif %}: {{ m['content'] }}\n{% endfor %}"
    )
    tok = Tokenizer(hf)
    system = ChatMessage(role="system", content="S", name="sys")
    assert tok.decode(chat_prompt_ids(tok, [system])) == "system (sys): S\n"
    user = ChatMessage(role="user", content="U", name="alice")
    assert tok.decode(chat_prompt_ids(tok, [system, user])) == "system (sys): S\nuser: alice: U\n"


def test_a_message_without_content_is_refused_unless_it_calls_tools(http):
    r = post(http, F.CHAT, {**BASE[F.CHAT], "messages": [{"role": "user"}]})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.0.content")
    messages = [*CHAT, {"role": "assistant", "content": None}, *CHAT]
    r = post(http, F.CHAT, {**BASE[F.CHAT], "messages": messages})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.1.content")


# ---- validation at the edge: SamplingParams' checks as 400s naming the field -------------------

BAD = [
    (F.CHAT, '{"seed": 99999999999999999999}', "seed"),
    (F.COMPLETIONS, f'{{"seed": {-(2**63) - 1}}}', "seed"),
    (F.COMPLETIONS, '{"temperature": NaN}', "temperature"),
    (F.COMPLETIONS, '{"temperature": -Infinity}', "temperature"),
    (F.CHAT, '{"top_p": Infinity}', "top_p"),
    (F.COMPLETIONS, '{"top_p": 0}', "top_p"),
    (F.COMPLETIONS, '{"top_k": -2}', "top_k"),
    (F.COMPLETIONS, '{"n": 0}', "n"),
    (F.COMPLETIONS, '{"n": 129}', "n"),
    (F.COMPLETIONS, '{"max_tokens": 0}', "max_tokens"),
    (F.CHAT, '{"max_tokens": null, "max_completion_tokens": -1}', "max_completion_tokens"),
    (F.COMPLETIONS, '{"max_tokens": null, "n_predict": 0}', "n_predict"),
    (F.COMPLETIONS, '{"min_tokens": -1}', "min_tokens"),
    (F.COMPLETIONS, '{"min_tokens": 7}', "min_tokens"),
    (F.COMPLETIONS, '{"stop": [1]}', "stop"),
    (F.COMPLETIONS, '{"stop_token_ids": [-1]}', "stop_token_ids"),
    (F.COMPLETIONS, '{"ignore_eos": "yes"}', "ignore_eos"),
    (F.COMPLETIONS, '{"temperature": 1e400}', "temperature"),
    (F.GENERATE, '{"max_new_tokens": 0}', "max_new_tokens"),
    (F.GENERATE, '{"top_p": 0}', "top_p"),
    (F.GENERATE, f'{{"seed": {2**64}}}', "seed"),
    (F.GENERATE, '{"temperature": NaN, "do_sample": true}', "temperature"),
]


@pytest.mark.parametrize(("endpoint", "extra", "param"), BAD,
                         ids=[f"{i}-{p}" for i, (_, _, p) in enumerate(BAD)])  # fmt: skip
def test_out_of_range_value_is_a_400_naming_it(http, endpoint, extra, param):
    body = json.dumps({**BASE[endpoint], **json.loads(extra)})  # NaN, Infinity, big ints kept
    r = post(http, endpoint, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.text


def test_edge_values_that_work(http):
    def texts(**fields) -> list[str]:
        body = {**BASE[F.COMPLETIONS], "temperature": 1.0, **fields}
        return text_of(F.COMPLETIONS, post(http, F.COMPLETIONS, body))

    # choice seeds wrap modulo 2**64: choice 1 of seed 2**64-1 draws from seed 0
    assert texts(seed=2**64 - 1, n=2)[1] == texts(seed=0)[0]
    # -1 is no seed (vLLM's and llama.cpp's default), not a seed of its own
    assert len({texts(seed=-1)[0] for _ in range(3)}) > 1
    assert texts(temperature=1e-300) == texts(temperature=0)  # below 1e-5: greedy


def test_generate_sampling_fields_act_only_with_do_sample(http):
    """/generate is greedy unless do_sample: seed, temperature, top_k and top_p change nothing
    then, and the table says so; with do_sample a seed gives its text again."""
    docs = {s.name: s.doc for s in F.FIELDS if s.endpoints == (F.GENERATE,)}

    def generate(**fields) -> str:
        return text_of(F.GENERATE, post(http, F.GENERATE, {**BASE[F.GENERATE], **fields}))[0]

    greedy = generate()
    for name, value in {"seed": 5, "temperature": 1.7, "top_k": 3, "top_p": 0.5}.items():
        assert docs[name].startswith("used when `do_sample`"), name
        assert generate(**{name: value}) == greedy, name
    assert generate(do_sample=True, seed=1) == generate(do_sample=True, seed=1)


def test_a_bad_seed_next_to_a_stream_leaves_the_stream_whole(http):
    stream_body = {**BASE[F.CHAT], "max_tokens": 40, "stream": True}
    bad = json.dumps(BASE[F.CHAT])[:-1] + ', "seed": 99999999999999999999}'

    async def stream(c: httpx.AsyncClient, bad_after: int | None) -> tuple[str, int | None]:
        text, status, seen = "", None, 0
        async with c.stream("POST", PATHS[F.CHAT], json=stream_body) as r:
            async for line in r.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                seen += 1
                if seen == bad_after:  # mid-stream, on the same server
                    refused = await c.post(PATHS[F.CHAT], content=bad,
                                           headers={"Content-Type": "application/json"})  # fmt: skip
                    status = refused.status_code
                    assert refused.json()["error"]["param"] == "seed"
                delta = json.loads(line[6:])["choices"][0]["delta"]
                text += delta.get("content") or ""
        return text, status

    async def main():
        async with httpx.AsyncClient(base_url=str(http.base_url), timeout=60) as c:
            return await stream(c, None), await stream(c, 5)

    (alone, _), (beside, status) = asyncio.run(asyncio.wait_for(main(), 120))
    assert status == 400 and beside == alone and alone


def test_the_sdks_own_messages_come_back(tiny_server):
    """The openai SDK's message sent back as `model_dump()` gives it (`annotations: None`,
    `refusal`, `audio`, `function_call` null), and a call gathered from a stream (its `index`
    kept): accepted, and the answer is the one without them."""
    from openai import OpenAI

    client = OpenAI(base_url=tiny_server[1] + "/v1", api_key="x")
    model = client.models.list().data[0].id
    first = [{"role": "user", "content": "hi"}]
    message = (
        client.chat.completions.create(model=model, messages=first, max_tokens=4, temperature=0)
        .choices[0]
        .message
    )
    dumped = message.model_dump()
    assert "annotations" in dumped
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    streamed = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}
    result = {"role": "tool", "tool_call_id": "call_1", "content": "42"}

    def answer(history: list) -> str | None:
        return client.chat.completions.create(
            model=model, messages=[*first, *history, {"role": "user", "content": "again"}],
            max_tokens=6, temperature=0,
        ).choices[0].message.content  # fmt: skip

    plain = {"role": "assistant", "content": message.content}
    assert answer([dumped]) == answer([plain])
    assert answer([streamed, result]) == answer([{**streamed, "tool_calls": [call]}, result])
    r = httpx.post(
        tiny_server[1] + "/v1/chat/completions",
        json={"messages": [*first, {**streamed, "tool_calls": [{"index": "0", **call}]}, result]},
    )
    assert r.status_code == 400 and r.json()["error"]["param"] == "messages.1.tool_calls.0.index"


def test_an_empty_list_of_content_parts_is_a_400(http):
    """As OpenAI's API answers (it had been taken as an empty message)."""
    body = {**BASE[F.CHAT], "messages": [{"role": "user", "content": []}]}
    r = post(http, F.CHAT, body)
    assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.0.content"), r.text


def test_the_legacy_function_call_must_agree_with_tool_choice(http):
    """Beside `tools`, `function_call: "none"` asks for no calls: refused unless `tool_choice`
    says so too (it had been taken as neutral while the default `auto` still called tools)."""
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    body = {**BASE[F.CHAT], "tools": [tool]}
    r = post(http, F.CHAT, {**body, "function_call": "none"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "function_call"), r.text
    for ok in ({"function_call": "none", "tool_choice": "none"}, {"function_call": "auto"}):
        r = post(http, F.CHAT, {**body, **ok})  # (the tiny model's context may not hold it)
        assert r.status_code == 200 or r.json()["error"]["param"] == "messages", (ok, r.text)


def test_prompts_times_n_is_capped_before_anything_is_tokenized(http):
    """One body of many prompts would hold memory and seats for all its choices: prompts x n
    beyond 2,048 is a 400 naming `prompt` (the list is not even tokenized)."""
    for prompts, n in ((["a"] * 2049, 1), (["a"] * 17, 128), ([[1, 2]] * 1025, 2)):
        r = post(http, F.COMPLETIONS, {"prompt": prompts, "n": n, "max_tokens": 1})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "prompt"), r.text
        assert f"= {len(prompts) * n} choices" in r.json()["error"]["message"]
    r = post(http, F.COMPLETIONS, {"prompt": "Hi", "n": 5000, "max_tokens": 1})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "n"), r.text  # n's own limit
    r = post(http, F.COMPLETIONS, {"prompt": [1, 2, 3] * 50, "n": 2, "max_tokens": 1})
    assert r.status_code == 200 and len(r.json()["choices"]) == 2, r.text  # one token-id prompt
