"""The chat page at / and the docs at /docs in a real browser: headless Chromium (Debian's, which
`make setup` installs) driven by Playwright, against in-process servers over the tiny random
llama (conftest.py). Every request to another host is aborted and recorded: the pages must work
without one. Skipped, saying why, only where Playwright or Chromium is missing."""

from __future__ import annotations

import json
import os
import re
import time
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import TINY_API_KEY

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                               "(pip install -e '.[test]')")  # fmt: skip

CHROMIUM = "/usr/bin/chromium"
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"no Chromium at {CHROMIUM} ('make setup' installs it with apt-get where it can)",
                allow_module_level=True)  # fmt: skip

TIMEOUT_MS = 30_000
STATS = re.compile(r"^(\d+) tokens?, ([\d.]+) tokens/s, first token after [\d.]+ s")
# Records each text the newest answer shows, to see it arrive in pieces.
RECORD_ANSWER = """() => {
  window.answerTexts = [];
  new MutationObserver(() => {
    const all = document.querySelectorAll('.message.assistant .content');
    const text = all.length ? all[all.length - 1].textContent : '';
    if (text && text !== window.answerTexts.at(-1)) window.answerTexts.push(text);
  }).observe(document.getElementById('messages'), {subtree: true, childList: true,
                                                   characterData: true});
}"""


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM)
        yield b
        b.close()


class Tab:
    """A fresh browser context and page on `base`, with the requests it sends recorded."""

    def __init__(self, browser, base: str) -> None:
        self.base = base
        self.context = browser.new_context()
        self.context.set_default_timeout(TIMEOUT_MS)
        self.external: list[str] = []
        self.chat_bodies: list[dict] = []
        self.context.route(lambda url: urlsplit(url).netloc != urlsplit(base).netloc, self._block)
        self.page = self.context.new_page()
        self.page.on("request", self._record)

    def _block(self, route) -> None:
        self.external.append(route.request.url)
        route.abort()

    def _record(self, request) -> None:
        if request.url.endswith("/v1/chat/completions"):
            self.chat_bodies.append(json.loads(request.post_data))

    def open(self, path: str = "/"):
        response = self.page.goto(self.base + path)
        assert response is not None and response.status == 200
        return response

    def settings(self, **values: str) -> None:
        self.page.click("#settings summary")
        for field, value in values.items():
            self.page.fill(f"#{field}", value)

    def send(self, text: str) -> None:
        self.page.fill("#input", text)
        self.page.press("#input", "Enter")

    def answer(self, number: int) -> tuple[str, str]:
        """(text, stats line) of the `number`th answer (1-based), once it has finished."""
        box = self.page.locator(".message.assistant").nth(number - 1)
        stats = box.locator(".stats").text_content()
        self.page.wait_for_selector("body[data-state=ready]")
        return box.locator(".content").text_content() or "", stats or ""

    def close(self) -> None:
        self.context.close()
        assert self.external == [], f"the page asked other hosts: {self.external}"


@pytest.fixture
def tab(browser, tiny_server):
    t = Tab(browser, tiny_server[1])
    yield t
    t.close()


def api_answer(base: str, messages: list[dict], headers: dict | None = None, **fields) -> dict:
    r = httpx.post(base + "/v1/chat/completions", json={"messages": messages, **fields},
                   headers=headers or {}, timeout=60)  # fmt: skip
    assert r.status_code == 200, r.text
    return r.json()


def test_an_answer_streams_in_with_its_speed(tab, tiny_server):
    tab.open()
    model = tiny_server[0].state.client.engine.model_name
    tab.page.wait_for_function(f"document.getElementById('model').textContent === {model!r}")
    tab.settings(temperature="0", **{"max-tokens": "24"})
    tab.page.evaluate(RECORD_ANSWER)
    tab.send("Hello, world!")
    text, stats = tab.answer(1)
    sent = tab.chat_bodies[0]
    assert sent == {"messages": [{"role": "user", "content": "Hello, world!"}], "stream": True,
                    "stream_options": {"include_usage": True}, "temperature": 0, "top_p": 0.95,
                    "max_tokens": 24}  # fmt: skip
    expected = api_answer(tab.base, sent["messages"], temperature=0, top_p=0.95, max_tokens=24)
    assert text == expected["choices"][0]["message"]["content"] and text
    pieces = tab.page.evaluate("window.answerTexts")
    assert len(pieces) > 1 and pieces[-1] == text, pieces  # token by token, not at once
    assert all(text.startswith(p) for p in pieces)
    match = STATS.match(stats)
    assert match, stats
    assert int(match[1]) == expected["usage"]["completion_tokens"] and float(match[2]) > 0


def test_the_conversation_and_the_system_prompt_go_with_each_message(tab):
    tab.open()
    tab.settings(system="You are terse.", temperature="0", **{"top-p": "", "max-tokens": "6"})
    tab.send("First question")
    first, _ = tab.answer(1)
    tab.send("Second question")
    second, stats = tab.answer(2)
    assert STATS.match(stats), stats
    system = {"role": "system", "content": "You are terse."}
    assert tab.chat_bodies[1]["messages"] == [
        system,
        {"role": "user", "content": "First question"},
        {"role": "assistant", "content": first},
        {"role": "user", "content": "Second question"},
    ]
    assert "top_p" not in tab.chat_bodies[1]  # an empty setting leaves the server's default
    expected = api_answer(tab.base, tab.chat_bodies[1]["messages"], temperature=0, max_tokens=6)
    assert second == expected["choices"][0]["message"]["content"]
    tab.page.click("#new-chat")
    assert tab.page.locator(".message").count() == 0
    tab.send("Third question")
    tab.answer(1)
    assert tab.chat_bodies[2]["messages"] == [system, {"role": "user", "content": "Third question"}]


def test_a_refused_request_shows_the_error_and_keeps_the_message(tab):
    tab.open()
    tab.settings(**{"top-p": "0"})  # outside (0, 1]: the server answers 400 naming top_p
    tab.send("Hello")
    tab.page.wait_for_selector("#status:not(:empty)")
    assert "top_p" in (tab.page.text_content("#status") or "")
    assert tab.page.locator(".message").count() == 0
    assert tab.page.input_value("#input") == "Hello"


def test_stop_aborts_the_answer(tab, tiny_server, monkeypatch):
    message = [{"role": "user", "content": "Tell me a long story"}]
    full = api_answer(tab.base, message, temperature=0, top_p=0.95, max_tokens=200)
    assert full["usage"]["completion_tokens"] >= 20  # a second or more at the pace below
    core = tiny_server[0].state.client.engine
    step = core.step

    def slow_step():  # ~20 tokens/s: the answer is still coming when stop is clicked
        time.sleep(0.05)
        return step()

    monkeypatch.setattr(core, "step", slow_step)
    tab.open()
    tab.settings(temperature="0", **{"max-tokens": "200"})
    tab.send(message[0]["content"])
    tab.page.wait_for_function(
        "document.querySelector('.message.assistant .content')?.textContent.length > 0"
    )
    tab.page.click("#stop")
    text, stats = tab.answer(1)
    assert stats == "stopped"
    whole = full["choices"][0]["message"]["content"]
    assert whole.startswith(text) and len(text) < len(whole)
    time.sleep(0.3)
    assert tab.page.locator(".message.assistant .content").text_content() == text
    assert tab.page.is_enabled("#send") and not tab.page.is_enabled("#stop")
    client = tiny_server[0].state.client
    deadline = time.monotonic() + 10  # the aborted request leaves the engine
    while client.stats.num_running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.stats.num_running == 0
    assert client.stats.num_waiting == 0


def test_new_chat_during_an_answer_starts_afresh(tab, tiny_server, monkeypatch):
    """ "New chat" while an answer streams: the aborted exchange must not come back into the
    conversation the next message is sent with (it used to: the abort's handler ran after the
    clear and kept what had come)."""
    core = tiny_server[0].state.client.engine
    step = core.step

    def slow_step():  # the answer is still coming when New chat is clicked
        time.sleep(0.05)
        return step()

    monkeypatch.setattr(core, "step", slow_step)
    tab.open()
    tab.settings(system="SYS", temperature="0", **{"max-tokens": "200"})
    tab.send("OLD TOPIC")
    tab.page.wait_for_function(
        "document.querySelector('.message.assistant .content')?.textContent.length > 0"
    )
    tab.page.click("#new-chat")
    tab.page.wait_for_selector("body[data-state=ready]")
    assert tab.page.locator(".message").count() == 0
    monkeypatch.setattr(core, "step", step)
    tab.page.fill("#max-tokens", "4")  # (the settings are open)
    tab.send("NEW TOPIC")
    tab.answer(1)
    assert tab.chat_bodies[1]["messages"] == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "NEW TOPIC"},
    ]
    assert tab.page.locator(".message").count() == 2


def test_the_page_asks_for_the_api_key(browser, tiny_locked_server):
    app, base = tiny_locked_server
    tab = Tab(browser, base)
    try:
        tab.open()  # the page itself needs no key
        dialog = tab.page.locator("#key-dialog")
        dialog.wait_for(state="visible")
        tab.page.fill("#api-key", "wrong")
        tab.page.click("#key-submit")
        tab.page.wait_for_function(
            "document.getElementById('key-error').textContent.includes('refused')"
        )
        assert dialog.is_visible()
        tab.page.fill("#api-key", TINY_API_KEY)
        tab.page.click("#key-submit")
        model = app.state.client.engine.model_name
        tab.page.wait_for_function(f"document.getElementById('model').textContent === {model!r}")
        assert not dialog.is_visible()
        assert tab.page.evaluate("sessionStorage.getItem('roseinfer.apiKey')") == TINY_API_KEY
        tab.settings(temperature="0", **{"max-tokens": "8"})
        tab.send("Hello")
        text, stats = tab.answer(1)
        auth = {"Authorization": f"Bearer {TINY_API_KEY}"}
        expected = api_answer(base, tab.chat_bodies[-1]["messages"], auth, temperature=0,
                              top_p=0.95, max_tokens=8)  # fmt: skip
        assert text == expected["choices"][0]["message"]["content"] and STATS.match(stats)
        tab.page.reload()  # the key stays for this tab
        tab.page.wait_for_function(f"document.getElementById('model').textContent === {model!r}")
        assert not dialog.is_visible()
    finally:
        tab.close()


def test_docs_render_offline(tab):
    tab.open("/docs")
    tab.page.wait_for_selector(".swagger-ui .info .title")
    assert "roseinfer" in (tab.page.text_content(".swagger-ui .info .title") or "")
    tab.page.get_by_text("/tokenize", exact=True).first.wait_for()
    tab.page.get_by_text("/v1/chat/completions", exact=True).first.wait_for()


def test_docs_send_a_request_with_the_api_key(browser, tiny_locked_server):
    """Swagger UI's "Try it out" has each POST's body (its schema and an example that runs) and
    the Authorize button takes the API key: the routes read their bodies themselves, so FastAPI
    had declared none, and no POST could be sent from /docs."""
    tab = Tab(browser, tiny_locked_server[1])
    try:
        tab.open("/docs")
        page = tab.page
        page.click(".swagger-ui .btn.authorize")
        page.fill(".auth-container input", TINY_API_KEY)
        page.click(".auth-btn-wrapper .btn.authorize")
        page.click(".btn-done")
        operation = page.locator(".opblock-post", has_text="/v1/completions").first
        operation.locator(".opblock-summary").click()
        operation.locator(".try-out__btn").click()
        body = json.loads(operation.locator("textarea.body-param__text").input_value())
        assert body["prompt"] and body["max_tokens"] == 32
        operation.locator(".execute").click()
        status = operation.locator(".live-responses-table tbody .response-col_status").first
        status.wait_for()
        assert (status.text_content() or "").strip() == "200"
        answer = json.loads(operation.locator(".live-responses-table .microlight").first
                            .text_content() or "{}")  # fmt: skip
        assert answer["object"] == "text_completion" and answer["choices"][0]["text"]
    finally:
        tab.close()


def test_the_openapi_document_declares_bodies_and_the_key(tiny_locked_server):
    doc = httpx.get(tiny_locked_server[1] + "/openapi.json", timeout=30).json()
    schemas = doc["components"]["schemas"]
    posts = {path for path, ops in doc["paths"].items() if "post" in ops}
    assert len(posts) >= 11 and "/completion" in posts
    auth = {"Authorization": f"Bearer {TINY_API_KEY}"}
    conversation = httpx.post(tiny_locked_server[1] + "/v1/conversations", json={},
                              headers=auth, timeout=30).json()["id"]  # fmt: skip
    # (POST /props: llama.cpp's 501; a cancel: OpenAI's, no body)
    for path in sorted(posts - {"/props", "/v1/responses/{response_id}/cancel"}):
        content = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        refs = content["schema"].get("oneOf", [content["schema"]])
        assert all(r["$ref"].rsplit("/", 1)[1] in schemas for r in refs), path
        assert doc["paths"][path]["post"]["security"] == [{"apiKey": []}]
        url = tiny_locked_server[1] + path.replace("{conversation_id}", conversation)
        r = httpx.post(url, json=content["example"], timeout=60, headers=auth)
        # the example runs as it is (/infill: on a model with FIM tokens; this one is llama.cpp's
        # 501 without)
        assert r.status_code == (501 if path == "/infill" else 200), (path, r.text)
    assert doc["paths"]["/v1/models/{model_id}"]["get"]["security"] == [{"apiKey": []}]
    for path in ("/health", "/metrics", "/version"):
        assert "security" not in doc["paths"][path]["get"], path
    assert doc["components"]["securitySchemes"]["apiKey"] == {"type": "http", "scheme": "bearer"}
