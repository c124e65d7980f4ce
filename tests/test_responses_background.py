"""Background responses of /v1/responses (`background: true`) through a real server and the
`openai` client: answered `queued` at once, polled to the same answer a plain request gives,
streamed and streamed again from any event, not stopped by a client that leaves, cancelled
with what they had written (their engine requests aborted), deleted while they run."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from conftest import read_events, response_text, serve_in_process, tools_model_dir
from openai.types.responses import Response

from roseinfer.server.body_check import FieldError
from roseinfer.server.responses_input import responses_request

GREEDY = {"temperature": 0, "ignore_eos": True}


def response(r: httpx.Response) -> dict:
    assert r.status_code == 200, r.text
    out = r.json()
    Response.model_validate(out)  # the openai package's own type
    return out


def poll(http: httpx.Client, response_id: str, until: tuple[str, ...]) -> dict:
    """GET the response until its status is one of `until` (at most 30 s)."""
    deadline = time.monotonic() + 30
    while True:
        answer = response(http.get(f"/v1/responses/{response_id}"))
        if answer["status"] in until:
            return answer
        assert answer["status"] in ("queued", "in_progress") and time.monotonic() < deadline
        time.sleep(0.02)


def test_a_background_response_is_queued_then_polled_to_the_plain_answer(http, sdk):
    body = {"input": "Tell me a story", "max_output_tokens": 12, **GREEDY}
    plain = response(http.post("/v1/responses", json=body))
    queued = response(http.post("/v1/responses", json={**body, "background": True}))
    assert (queued["status"], queued["background"], queued["output"]) == ("queued", True, [])
    assert queued["usage"] is None
    done = poll(http, queued["id"], ("completed", "incomplete"))
    assert done["status"] == plain["status"] == "incomplete"  # cut by max_output_tokens
    assert response_text(done) == response_text(plain)
    for key in ("input_tokens", "output_tokens"):  # (its prompt found cached: the same count)
        assert done["usage"][key] == plain["usage"][key]
    assert done["background"] is True and plain["background"] is False
    made = sdk.responses.create(input="Hi", max_output_tokens=4, background=True, temperature=0)
    assert made.status == "queued" and made.background
    deadline = time.monotonic() + 30
    while (got := sdk.responses.retrieve(made.id)).status in ("queued", "in_progress"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert got.status in ("completed", "incomplete") and got.output_text


def test_a_background_stream_is_read_again_from_any_event(http, sdk):
    body = {"input": "Count with me", "max_output_tokens": 8, "background": True, **GREEDY}
    with http.stream("POST", "/v1/responses", json={**body, "stream": True}) as r:
        events = read_events(r)
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["response.created", "response.queued", "response.in_progress"]
    assert [e["response"]["status"] for e in events[:3]] == ["queued", "queued", "in_progress"]
    assert kinds[-1] == "response.incomplete"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    response_id = events[0]["response"]["id"]
    final = poll(http, response_id, ("incomplete",))
    assert final == events[-1]["response"]
    url = f"/v1/responses/{response_id}"
    with http.stream("GET", url, params={"stream": "true"}) as r:
        assert read_events(r) == events
    with http.stream("GET", url, params={"stream": "true", "starting_after": 5}) as r:
        assert read_events(r) == events[6:]
    again = sdk.responses.retrieve(response_id, stream=True, starting_after=3)
    assert [e.sequence_number for e in again] == list(range(4, len(events)))
    with http.stream("GET", url, params={"stream": "true", "starting_after": 999}) as r:
        assert read_events(r) == []


def test_a_client_that_leaves_does_not_stop_it(http, slow_engine):
    body = {"input": "Go on", "max_output_tokens": 20, "background": True, "stream": True,
            **GREEDY}  # fmt: skip
    with http.stream("POST", "/v1/responses", json=body) as r:
        first = json.loads(next(line for line in r.iter_lines() if line.startswith("data: "))[6:])
    response_id = first["response"]["id"]  # (the connection is closed: the client left)
    done = poll(http, response_id, ("incomplete", "completed", "failed", "cancelled"))
    assert done["status"] == "incomplete" and done["usage"]["output_tokens"] == 20
    url = f"/v1/responses/{response_id}"
    with http.stream("GET", url, params={"stream": "true"}) as r:  # every event was kept
        replay = read_events(r)
    assert replay[0] == first and replay[-1]["response"] == done


def test_a_running_response_shows_its_output_and_is_cancelled_with_it(http, sdk, served,
                                                                      slow_engine):  # fmt: skip
    body = {"input": "Write at length", "max_output_tokens": 400, "background": True, **GREEDY}
    queued = response(http.post("/v1/responses", json={**body, "stream": False}))
    url = f"/v1/responses/{queued['id']}"
    deadline = time.monotonic() + 30
    while not response_text(running := response(http.get(url))):  # until it has written something
        assert running["status"] in ("queued", "in_progress") and time.monotonic() < deadline
        time.sleep(0.02)
    assert running["status"] == "in_progress" and running["output"][0]["status"] == "in_progress"
    items = http.get(f"{url}/input_items").json()["data"]  # (its input, while it runs)
    assert [part["text"] for part in items[0]["content"]] == ["Write at length"]
    cancelled = response(http.post(f"{url}/cancel"))
    assert cancelled["status"] == "cancelled" and cancelled["output"][0]["status"] == "incomplete"
    assert response_text(cancelled).startswith(response_text(running))
    assert 0 < cancelled["usage"]["output_tokens"] < 400
    assert response(http.post(f"{url}/cancel")) == cancelled  # again: the same answer
    assert sdk.responses.cancel(queued["id"]).status == "cancelled"
    assert response(http.get(url)) == cancelled  # stored as it ended
    engine = served[0].state.client.engine
    deadline = time.monotonic() + 10
    while engine.has_unfinished():  # its engine request was aborted
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_reader_of_a_cancelled_stream_is_let_go(http, slow_engine):
    body = {"input": "Write at length", "max_output_tokens": 400, "background": True,
            "stream": True, **GREEDY}  # fmt: skip
    read: list[dict] = []
    with http.stream("POST", "/v1/responses", json=body) as r:
        lines = r.iter_lines()
        first = json.loads(next(line for line in lines if line.startswith("data: "))[6:])

        def cancel() -> None:
            time.sleep(0.3)
            httpx.post(f"{http.base_url}/v1/responses/{first['response']['id']}/cancel")

        canceller = threading.Thread(target=cancel)
        canceller.start()
        read = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
        canceller.join()
    ends = ("response.completed", "response.incomplete", "response.failed")
    assert read and all(e["type"] not in ends for e in read)  # it simply ended
    final = response(http.get(f"/v1/responses/{first['response']['id']}"))
    assert final["status"] == "cancelled"


def test_what_cannot_be_cancelled_is_a_400_and_delete_cancels_first(http, slow_engine):
    done = response(http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 2,
                                                     "background": True, **GREEDY}))  # fmt: skip
    poll(http, done["id"], ("incomplete",))
    err = http.post(f"/v1/responses/{done['id']}/cancel")
    assert err.status_code == 400 and "Cannot cancel a incomplete" not in err.text
    assert err.json()["error"]["message"] == "Cannot cancel an incomplete response."
    plain = response(http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 2}))
    err = http.post(f"/v1/responses/{plain['id']}/cancel")
    assert err.status_code == 400 and "background=true" in err.json()["error"]["message"]
    assert http.post("/v1/responses/resp_nope/cancel").status_code == 404
    running = response(http.post("/v1/responses", json={"input": "Write", "background": True,
                                                        "max_output_tokens": 400, **GREEDY}))  # fmt: skip
    url = f"/v1/responses/{running['id']}"
    # continued while it runs: a 400 that says so
    err = http.post("/v1/responses", json={"input": "and?", "previous_response_id": running["id"]})
    assert err.status_code == 400 and "still running" in err.json()["error"]["message"]
    assert err.json()["error"]["param"] == "previous_response_id"
    assert http.delete(url).json() == {"id": running["id"], "object": "response", "deleted": True}
    assert http.get(url).status_code == 404


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"starting_after": "3"}, "starting_after"),  # without stream=true
        ({"stream": "maybe"}, "stream"),
        ({"stream": "true", "starting_after": "-1"}, "starting_after"),
        ({"include": "message.output_text.logprobs"}, "include"),
        ({"stream": "true"}, "stream"),  # not streamed when it ran
    ],
)
def test_a_query_that_cannot_act_is_a_400_naming_it(http, query, param):
    done = response(http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 2,
                                                     "background": True, **GREEDY}))  # fmt: skip
    poll(http, done["id"], ("incomplete",))
    r = http.get(f"/v1/responses/{done['id']}", params=query)
    assert (r.status_code, r.json()["error"]["param"]) == (400, param)


def test_background_needs_a_stored_response():
    with pytest.raises(FieldError) as e:
        responses_request({"input": "Hi", "background": True, "store": False}, lambda _: ([], None))
    assert e.value.param == "background" and "store" in str(e.value)
    with pytest.raises(FieldError) as e:  # a server that keeps none
        responses_request({"input": "Hi", "background": True}, None)
    assert e.value.param == "background" and "--responses-store-size 0" in str(e.value)
    with pytest.raises(FieldError) as e:
        responses_request({"input": "Hi", "background": "yes"}, lambda _: ([], None))
    assert e.value.param == "background"


def test_a_server_stops_with_a_background_response_running(tmp_path_factory, caplog):
    """Stopping cancels what runs in the background: promptly, with no error logged."""
    with serve_in_process(tools_model_dir(tmp_path_factory)) as (app, url):
        engine = app.state.client.engine
        step = engine.step
        engine.step = lambda: (time.sleep(0.02), step())[1]
        body = {"input": "Write", "max_output_tokens": 1000, "background": True, **GREEDY}
        queued = response(httpx.post(f"{url}/v1/responses", json=body, timeout=30))
        poll_url = f"{url}/v1/responses/{queued['id']}"
        deadline = time.monotonic() + 30
        while httpx.get(poll_url).json()["status"] != "in_progress":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 5
    assert not app.state.responses.running  # cancelled, and stored as such
    assert json.loads(app.state.responses.store.get(queued["id"]).response_json)["status"] == (
        "cancelled"
    )
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


@pytest.fixture
def held_engine(served):
    """The engine's steps held until the test lets them go: what is submitted stays queued."""
    engine = served[0].state.client.engine
    step, go = engine.step, threading.Event()

    def held_step():
        go.wait(30)
        return step()

    engine.step = held_step
    try:
        yield go
    finally:
        go.set()
        del engine.step


def test_it_is_queued_until_its_first_tokens(http, held_engine):
    body = {"input": "Hi", "max_output_tokens": 3, "background": True, **GREEDY}
    queued = response(http.post("/v1/responses", json=body))
    time.sleep(0.3)  # (its task has run: submitted, no step yet)
    assert response(http.get(f"/v1/responses/{queued['id']}"))["status"] == "queued"
    held_engine.set()
    assert poll(http, queued["id"], ("incomplete",))["usage"]["output_tokens"] == 3


def test_a_failure_before_its_first_step_ends_its_stream_with_response_failed(http, served):
    client = served[0].state.client
    real_submit = client.submit

    def failing(*args, **kwargs):
        raise RuntimeError("boom")

    client.submit = failing
    try:
        body = {"input": "Hi", "max_output_tokens": 3, "background": True, "stream": True}
        with http.stream("POST", "/v1/responses", json=body) as r:
            events = read_events(r)
    finally:
        client.submit = real_submit
    assert events[-1]["type"] == "response.failed"
    failed = poll(http, events[0]["response"]["id"], ("failed",))
    assert failed["error"]["code"] == "server_error"


def test_what_the_store_cannot_hold_is_said_not_lost(http, served):
    """Events past the store's bytes are not kept (a replay is a 400 saying why) and the
    Response is; a Response alone past them is kept as `failed`, saying why, so polls end."""
    stored = served[0].state.responses
    before = stored.store.max_bytes, stored.budget.limit
    body = {"input": "Write", "max_output_tokens": 40, "background": True, "stream": True,
            "include": ["message.output_text.logprobs"], "top_logprobs": 5, **GREEDY}  # fmt: skip
    try:
        stored.store.max_bytes = stored.budget.limit = 60_000
        with http.stream("POST", "/v1/responses", json=body) as r:
            events = read_events(r)  # (its reader gets every event all the same)
        assert events[-1]["type"] == "response.incomplete"
        assert sum(len(json.dumps(e)) for e in events) > 60_000 > len(json.dumps(events[-1]))
        kept = poll(http, events[0]["response"]["id"], ("incomplete",))
        assert response_text(kept) == response_text(events[-1]["response"])
        r = http.get(f"/v1/responses/{kept['id']}", params={"stream": "true"})
        assert r.status_code == 400 and "--responses-store-mib" in r.json()["error"]["message"]
        stored.store.max_bytes = stored.budget.limit = 5_000
        queued = response(http.post("/v1/responses", json={**body, "stream": False}))
        failed = poll(http, queued["id"], ("failed",))
        assert "larger than --responses-store-mib" in failed["error"]["message"]
        assert stored.budget.held == 0  # (what the runs kept is given back)
    finally:
        stored.store.max_bytes, stored.budget.limit = before


def test_queries_given_twice_or_too_long_and_bodies_of_cancel(http):
    done = response(http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 2,
                                                     "background": True, **GREEDY}))  # fmt: skip
    poll(http, done["id"], ("incomplete",))
    url = f"/v1/responses/{done['id']}"
    r = http.get(url + "?stream=true&stream=false")
    assert (r.status_code, r.json()["error"]["param"]) == (400, "stream")
    r = http.get(url, params={"stream": "false", "starting_after": "9" * 5000})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "starting_after")
    r = http.get(url, params={"stream": "true", "starting_after": "9" * 5000})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "starting_after")
    # (a no-op: no event is padded)
    assert response(http.get(url, params={"include_obfuscation": "false"})) == response(
        http.get(url))  # fmt: skip
    for content in (b"null", b"{ }", b""):  # no body, as the openai package sends: all one
        r = http.post(url + "/cancel", content=content)
        assert r.status_code == 400 and "Cannot cancel an incomplete" in r.text
    r = http.post(url + "/cancel", json={"reason": "x"})
    assert r.status_code == 400 and "takes no body" in r.text


def test_a_reader_past_the_events_written_so_far_gets_only_later_ones(http, slow_engine):
    body = {"input": "Go", "max_output_tokens": 60, "background": True, "stream": True, **GREEDY}
    with http.stream("POST", "/v1/responses", json=body) as r:
        first = json.loads(next(line for line in r.iter_lines() if line.startswith("data: "))[6:])
    url = f"/v1/responses/{first['response']['id']}"
    running = response(http.get(url))
    assert running["status"] in ("queued", "in_progress")
    with http.stream("GET", url, params={"stream": "true", "starting_after": 40}) as r:
        later = read_events(r)
    assert later and [e["sequence_number"] for e in later] == list(range(41, 41 + len(later)))
    items = http.get(url + "/input_items").json()["data"]  # (while it runs, and once stored)
    assert http.get(url + "/input_items").json()["data"] == items
    poll(http, first["response"]["id"], ("incomplete",))
    assert http.get(url + "/input_items").json()["data"] == items


def test_past_the_budget_the_run_keeping_the_most_stops_keeping():
    from types import SimpleNamespace

    from roseinfer.server.responses_background import BackgroundRun, EventBudget

    budget = EventBudget(limit=1_000)

    def run(name: str) -> BackgroundRun:
        head = SimpleNamespace(id=name)
        return BackgroundRun(head, None, 0, None, True, budget, [])  # type: ignore[arg-type]

    big, small = run("big"), run("small")
    big._publish("x" * 700)
    small._publish("y" * 100)
    small._publish("y" * 250)  # past the limit: the big one lets go of its events, not this one
    assert big.events is None and small.events == ["y" * 100, "y" * 250]
    assert budget.held == 350
    small.release_events()
    assert budget.held == 0
