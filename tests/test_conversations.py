"""OpenAI's Conversations API through a real server and the `openai` client: conversations
created, read, updated and deleted, their items listed, added, read and deleted, and
/v1/responses' `conversation`: the response sees the conversation's items before its input
(the oracle: chat over the same messages, token for token) and adds its turn once done."""

from __future__ import annotations

import json
import time

import httpx
import openai
import pytest
from conftest import response_text
from openai.types.conversations import Conversation

from roseinfer.outputs import RequestFailed
from roseinfer.server.errors import APIError
from roseinfer.server.responses_api import input_items

GREEDY = {"max_output_tokens": 6, "temperature": 0, "ignore_eos": True}


def ok(r: httpx.Response) -> dict:
    assert r.status_code == 200, r.text
    return r.json()


def chat_text(http: httpx.Client, messages: list[dict]) -> tuple[str, int]:
    answer = ok(http.post("/v1/chat/completions", json={"messages": messages, "max_tokens": 6,
                                                         "temperature": 0, "ignore_eos": True}))  # fmt: skip
    return answer["choices"][0]["message"]["content"], answer["usage"]["prompt_tokens"]


def test_conversations_and_their_items_through_the_sdk(sdk):
    conv = sdk.conversations.create(items=[{"role": "user", "content": "Hello"}],
                                    metadata={"topic": "greetings"})  # fmt: skip
    assert conv.id.startswith("conv_") and conv.metadata == {"topic": "greetings"}
    assert sdk.conversations.retrieve(conv.id) == conv
    updated = sdk.conversations.update(conv.id, metadata={"topic": "weather"})
    assert updated.metadata == {"topic": "weather"} and updated.id == conv.id
    added = sdk.conversations.items.create(conv.id, items=[
        {"role": "assistant", "content": "Hi!"}, {"role": "user", "content": "Rain?"}])  # fmt: skip
    assert [item.role for item in added.data] == ["assistant", "user"]
    listed = sdk.conversations.items.list(conv.id, order="asc")
    assert [item.content[0].text for item in listed.data] == ["Hello", "Hi!", "Rain?"]
    assert [i.id for i in sdk.conversations.items.list(conv.id).data] == [
        i.id for i in reversed(listed.data)]  # (newest first by default, as OpenAI)  # fmt: skip
    first = listed.data[0]
    page = sdk.conversations.items.list(conv.id, order="asc", limit=1, after=first.id)
    assert [i.id for i in page.data] == [listed.data[1].id] and page.has_more
    assert sdk.conversations.items.retrieve(first.id, conversation_id=conv.id).id == first.id
    after_delete = sdk.conversations.items.delete(first.id, conversation_id=conv.id)
    assert isinstance(after_delete, Conversation) and after_delete.id == conv.id
    assert len(sdk.conversations.items.list(conv.id).data) == 2
    deleted = sdk.conversations.delete(conv.id)
    assert deleted.deleted and deleted.object == "conversation.deleted"
    with pytest.raises(openai.NotFoundError):
        sdk.conversations.retrieve(conv.id)


def test_a_response_continues_a_conversation_and_adds_its_turn(http, sdk):
    conv = ok(http.post("/v1/conversations", json={"items": [
        {"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there"}]}))  # fmt: skip
    messages = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there"}]
    for turn, extra in enumerate(({}, {"stream": True}, {"conversation": {"id": conv["id"]}})):
        body = {"conversation": conv["id"], "input": f"Question {turn}?", **GREEDY, **extra}
        messages.append({"role": "user", "content": f"Question {turn}?"})
        expected, prompt_tokens = chat_text(http, messages)
        if extra.get("stream"):
            with http.stream("POST", "/v1/responses", json=body) as r:
                lines = [line for line in r.iter_lines() if line.startswith("data: ")]
            response = httpx.Response(200, content=lines[-1][6:]).json()["response"]
        else:
            response = ok(http.post("/v1/responses", json=body))
        assert response["conversation"] == {"id": conv["id"]}
        assert response_text(response) == expected
        assert response["usage"]["input_tokens"] == prompt_tokens
        messages.append({"role": "assistant", "content": expected})
    items = sdk.conversations.items.list(conv["id"], order="asc", limit=100).data
    assert [(i.role, i.content[0].text) for i in items] == [
        (m["role"], m["content"]) for m in messages]  # fmt: skip
    counted = ok(http.post("/v1/responses/input_tokens", json={
        "conversation": conv["id"], "input": "More?"}))["input_tokens"]  # fmt: skip
    assert counted == chat_text(http, [*messages, {"role": "user", "content": "More?"}])[1]


def test_a_response_on_a_conversation_holds_its_items_for_a_later_previous_response_id(http):
    """OpenAI's: a conversation's items are "prepended to input_items for this response
    request": they are listed there, and a response continuing it by previous_response_id sees
    them (it saw only the turn's own input before)."""
    history = [{"role": "user", "content": "The secret word is PINEAPPLE."},
               {"role": "assistant", "content": "Noted."}]  # fmt: skip
    conv = ok(http.post("/v1/conversations", json={"items": history}))
    first = ok(http.post("/v1/responses", json={"conversation": conv["id"], "input": "ok",
                                                **GREEDY}))  # fmt: skip
    listed = ok(http.get(f"/v1/responses/{first['id']}/input_items", params={"order": "asc"}))
    assert [item["content"][0]["text"] for item in listed["data"]] == [
        "The secret word is PINEAPPLE.", "Noted.", "ok"]  # fmt: skip
    then = ok(http.post("/v1/responses", json={"previous_response_id": first["id"],
                                               "input": "What is the secret word?", **GREEDY}))  # fmt: skip
    messages = [*history, {"role": "user", "content": "ok"},
                {"role": "assistant", "content": response_text(first)},
                {"role": "user", "content": "What is the secret word?"}]  # fmt: skip
    expected, prompt_tokens = chat_text(http, messages)
    assert then["usage"]["input_tokens"] == prompt_tokens and response_text(then) == expected


def test_a_failed_response_adds_nothing(http, served):
    conv = ok(http.post("/v1/conversations", json={}))
    client = served[0].state.client
    real_apply = client.apply_event

    def failing(state, event):
        raise RequestFailed("boom")

    client.apply_event = failing
    try:
        r = http.post("/v1/responses", json={"conversation": conv["id"], "input": "Hi", **GREEDY})
    finally:
        client.apply_event = real_apply
    assert r.status_code == 500
    assert ok(http.get(f"/v1/conversations/{conv['id']}/items"))["data"] == []


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/conversations", {"items": [{"role": "robot", "content": "x"}]}, "items.0.role"),
        ("/v1/conversations", {"items": [{"role": "user", "content": "x"}] * 21}, "items"),
        ("/v1/conversations", {"metadata": {"k" * 65: "v"}}, "metadata"),
        ("/v1/conversations", {"mood": 1}, "mood"),
        ("/v1/responses", {"input": "x", "conversation": "conv_nope"}, "conversation"),
        ("/v1/responses", {"input": "x", "conversation": 5}, "conversation"),
        ("/v1/responses", {"input": "x", "conversation": {"id": "c", "x": 1}}, "conversation"),
    ],
)
def test_what_cannot_act_is_a_400_naming_it(http, path, body, param):
    r = http.post(path, json=body)
    assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text


def test_a_conversation_and_previous_response_id_are_not_both_taken(http):
    conv = ok(http.post("/v1/conversations", json={}))
    first = ok(http.post("/v1/responses", json={"input": "Hi", **GREEDY}))
    r = http.post("/v1/responses", json={"input": "x", "conversation": conv["id"],
                                         "previous_response_id": first["id"]})  # fmt: skip
    assert (r.status_code, r.json()["error"]["param"]) == (400, "conversation")
    for method, url in (("GET", "/v1/conversations/conv_nope"),
                        ("GET", f"/v1/conversations/{conv['id']}/items/msg_nope"),
                        ("DELETE", f"/v1/conversations/{conv['id']}/items/msg_nope")):  # fmt: skip
        assert http.request(method, url).status_code == 404
    r = http.get(f"/v1/conversations/{conv['id']}/items", params={"include": "x"})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "include")


def test_the_store_is_bounded_in_count_and_bytes_and_reads_what_a_prompt_can_hold():
    from roseinfer.server.conversations import ConversationStore

    store = ConversationStore(capacity=2, max_bytes=2_000, read_chars=1_000)
    items = input_items([{"role": "user", "content": "x" * 300}])
    a = store.create({}, items)
    b = store.create({}, [])
    store.get(a.id)  # (used: b is now the oldest)
    c = store.create({}, [])
    assert len(store) == 2 and a.id in store and c.id in store and b.id not in store
    with pytest.raises(APIError) as e:  # one conversation alone past the bound
        store.add(a.id, input_items([{"role": "user", "content": "x" * 2_000}]))
    assert e.value.code == "conversation_too_large"
    with pytest.raises(APIError) as e:  # (checked before a response runs, naming its field)
        store.check_room(a.id, input_items([{"role": "user", "content": "é" * 900}]))
    assert (e.value.code, e.value.param) == ("conversation_too_large", "conversation")
    store.add(c.id, input_items([{"role": "user", "content": "y" * 1_600}]))
    assert a.id not in store and store.num_bytes <= 2_000  # the oldest dropped for room
    # a response reads the leading system message and the newest text a prompt could hold
    big = ConversationStore(capacity=5, max_bytes=1 << 20, read_chars=1_000)
    turns = [{"role": "system", "content": "Be brief."}] + [
        {"role": "user", "content": f"{i}" * 300} for i in range(10)]  # fmt: skip
    conv = big.create({}, [])
    for i in range(0, len(turns), 5):
        big.add(conv.id, input_items(turns[i : i + 5]))
    read = [item["content"][0]["text"] for item in big.items(conv.id)]
    # (three of 300 fit in 1,000, and one more: the prompt then says it is too long)
    assert read == ["Be brief.", "6" * 300, "7" * 300, "8" * 300, "9" * 300]
    # the item past what fits a call's result: read from the message before its call (a
    # result without its call answers nothing, and leaving it out would have let the rest fit,
    # the older items silently dropped: the prompt must say it is too long)
    calls = ConversationStore(capacity=5, max_bytes=1 << 20, read_chars=1_000)
    conv = calls.create({}, input_items([
        {"role": "user", "content": "z" * 50},
        {"role": "user", "content": "a" * 900},
        {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "5" * 600},
        {"role": "user", "content": "b" * 500}]))  # fmt: skip
    read = calls.items(conv.id)
    assert [item["type"] for item in read] == ["message", "function_call",
                                               "function_call_output", "message"]  # fmt: skip
    assert sum(len(json.dumps(item)) for item in read) > 1_000
    # a result whose call the conversation never held is left out (it would answer nothing)
    orphan = calls.create({}, input_items([
        {"type": "function_call_output", "call_id": "c9", "output": "5"},
        {"role": "user", "content": "hi"}]))  # fmt: skip
    assert [item["type"] for item in calls.items(orphan.id)] == ["message"]


def test_a_background_response_adds_its_turn_when_it_ends(http):
    conv = ok(http.post("/v1/conversations", json={}))
    queued = ok(http.post("/v1/responses", json={"conversation": conv["id"], "input": "Hi",
                                                 "background": True, **GREEDY}))  # fmt: skip
    for _ in range(600):  # (at most ~30 s)
        done = ok(http.get(f"/v1/responses/{queued['id']}"))
        if done["status"] not in ("queued", "in_progress"):
            break
        time.sleep(0.05)
    assert done["status"] == "incomplete"
    items = ok(http.get(f"/v1/conversations/{conv['id']}/items", params={"order": "asc"}))
    assert [i["role"] for i in items["data"]] == ["user", "assistant"]
    assert items["data"][1]["content"][0]["text"] == response_text(done)


ADD = {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0, "maximum": 99},
                                       "b": {"type": "integer", "minimum": 0, "maximum": 99}},
       "required": ["a", "b"], "additionalProperties": False}  # fmt: skip
TOOLS = [{"type": "function", "name": "add", "description": "Add two numbers",
          "parameters": ADD, "strict": True}]  # fmt: skip


def test_a_call_cut_short_is_not_added_and_items_are_checked_as_input(http):
    conv = ok(http.post("/v1/conversations", json={}))
    cut = ok(http.post("/v1/responses", json={
        "conversation": conv["id"], "input": "Add", "tools": TOOLS,
        "tool_choice": {"type": "function", "name": "add"}, "max_output_tokens": 39,
        "temperature": 0}))  # fmt: skip
    # (39 tokens: the call opened, its arguments cut short, in this tiny vocabulary)
    assert cut["output"][-1]["type"] == "function_call", cut["output"]
    assert cut["output"][-1]["status"] == "incomplete"
    items = ok(http.get(f"/v1/conversations/{conv['id']}/items"))["data"]
    assert [i["type"] for i in items] == ["message"]  # its input only: no result could answer it
    ok(http.post("/v1/responses", json={"conversation": conv["id"], "input": "Hi", **GREEDY}))
    bad_call = {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{"}
    r = http.post(f"/v1/conversations/{conv['id']}/items", json={"items": [bad_call]})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "items.0.arguments"), r.text
    part = {"role": "user", "content": [{"type": "output_text", "text": "x"}]}
    r = http.post("/v1/conversations", json={"items": [part]})
    assert r.status_code == 400 and "'input_text'" in r.json()["error"]["message"]


def test_item_ids_are_unique_and_a_turns_input_keeps_its_ids(http):
    conv = ok(http.post("/v1/conversations", json={"items": [
        {"id": "msg_a", "role": "user", "content": "Hello"}]}))  # fmt: skip
    for items, param in (([{"id": "msg_a", "role": "user", "content": "x"}], "items.0.id"),
                         ([{"id": "m_b", "role": "user", "content": "x"},
                           {"id": "m_b", "role": "user", "content": "y"}], "items.1.id"),
                         ([{"id": "a/b", "role": "user", "content": "x"}], "items.0.id")):  # fmt: skip
        r = http.post(f"/v1/conversations/{conv['id']}/items", json={"items": items})
        assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text
    # a response sending an item of the conversation again: its copy gets an id of its own
    answer = ok(http.post("/v1/responses", json={
        "conversation": conv["id"], "input": [{"id": "msg_a", "role": "user", "content": "Hi"}],
        **GREEDY}))  # fmt: skip
    items = ok(http.get(f"/v1/conversations/{conv['id']}/items", params={"limit": 100}))["data"]
    ids = [i["id"] for i in items]
    assert len(set(ids)) == len(ids) == 3
    own = ok(http.get(f"/v1/responses/{answer['id']}/input_items"))["data"]
    added = ok(http.get(f"/v1/conversations/{conv['id']}/items", params={"order": "asc"}))
    assert added["data"][1]["content"] == own[0]["content"]
    plain = ok(http.post("/v1/responses", json={"conversation": conv["id"], "input": "More",
                                                **GREEDY}))  # fmt: skip
    own = ok(http.get(f"/v1/responses/{plain['id']}/input_items"))["data"]
    added = ok(http.get(f"/v1/conversations/{conv['id']}/items"))["data"]
    assert own[0]["id"] == added[1]["id"]  # (the same item, the same id, in both)


def test_one_response_at_a_time_on_a_conversation(http, slow_engine):
    conv = ok(http.post("/v1/conversations", json={}))
    running = ok(http.post("/v1/responses", json={
        "conversation": conv["id"], "input": "Write", "background": True,
        "max_output_tokens": 200, "temperature": 0, "ignore_eos": True}))  # fmt: skip
    r = http.post("/v1/responses", json={"conversation": conv["id"], "input": "x"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "conversation_locked"
    ok(http.post(f"/v1/responses/{running['id']}/cancel"))
    ok(http.post("/v1/responses", json={"conversation": conv["id"], "input": "x", **GREEDY}))
    updated = ok(http.post(f"/v1/conversations/{conv['id']}", json={"metadata": None}))
    assert updated["metadata"] == {}


def test_a_message_item_without_its_text_is_a_400(http):
    for item in ({"role": "user"}, {"type": "message", "role": "assistant", "content": None}):
        r = http.post("/v1/conversations", json={"items": [item]})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "items.0.content"), r.text


def test_conversations_are_bounded_by_their_own_flags(tiny_model_dir):
    """`--conversations-store-size` 0: no conversations, stored responses as ever; and
    `--responses-store-size` 0: no stored responses, conversations as ever (and continued)."""
    from conftest import serve_in_process

    from roseinfer.server.config import ServerConfig

    for config, kept in ((ServerConfig(conversations_store_size=0), False),
                         (ServerConfig(responses_store_size=0), True)):  # fmt: skip
        with serve_in_process(tiny_model_dir("llama"), server_config=config) as (_, url), \
                httpx.Client(base_url=url, timeout=60) as client:  # fmt: skip
            r = client.post("/v1/conversations", json={})
            if not kept:
                assert r.status_code == 400, r.text
                assert "--conversations-store-size 0" in r.json()["error"]["message"]
                assert ok(client.post("/v1/responses", json={"input": "Hi", **GREEDY}))["store"]
                continue
            conv = ok(r)["id"]
            body = {"input": "Hi", "conversation": conv, "store": False, **GREEDY}
            assert ok(client.post("/v1/responses", json=body))["conversation"]["id"] == conv
            items = ok(client.get(f"/v1/conversations/{conv}/items", params={"order": "asc"}))
            items = items["data"]
            assert [i["role"] for i in items] == ["user", "assistant"]
    with pytest.raises(ValueError, match="--conversations-store-mib must be >= 1"):
        ServerConfig(conversations_store_mib=0)
