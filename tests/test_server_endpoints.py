"""The smaller endpoints through a real server and HTTP client: /tokenize and /detokenize
(vLLM's shapes), /v1/models/{id}, /version, HEAD /health, which of them --api-key protects, and
the pages a browser loads (/, /docs, /redoc) with everything they reference served here and
nothing from another host. In-process servers over the tiny random llama (conftest.py):
`tiny_server` (no key) and `tiny_locked_server` (an API key; its tokenizer adds a BOS)."""

from __future__ import annotations

import os
import re
import tomllib
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
import openai
import pytest
from conftest import TINY_API_KEY, serve_in_process

import roseinfer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOS = "<|endoftext|>"
CHAT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello, world!"}]
JSON_TYPE = {"Content-Type": "application/json"}
TOOL = {"type": "function", "function": {"name": "get_weather", "description": "The weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}  # fmt: skip


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def locked(tiny_locked_server):
    headers = {"Authorization": f"Bearer {TINY_API_KEY}"}
    with httpx.Client(base_url=tiny_locked_server[1], timeout=60, headers=headers) as c:
        yield c


def tokenizer_of(served):
    return served[0].state.client.engine.tokenizer


def rendered(messages: list[dict], generation_prompt: bool = True) -> str:
    """conftest.CHAT_TEMPLATE written out by hand: the text /tokenize must encode."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + ("<|im_start|>assistant\n" if generation_prompt else "")


def error_of(r: httpx.Response, status: int = 400) -> dict:
    assert r.status_code == status, r.text
    return r.json()["error"]


# ---- /tokenize ---------------------------------------------------------------------------------


def test_tokenize_a_prompt_honours_add_special_tokens(tiny_locked_server, locked):
    hf = tokenizer_of(tiny_locked_server).hf
    text = "The quick brown fox"
    plain = hf.backend_tokenizer.encode(text, add_special_tokens=False).ids
    r = locked.post("/tokenize", json={"prompt": text})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out == {"count": len(plain) + 1, "max_model_len": 256,
                   "tokens": [hf.convert_tokens_to_ids(BOS), *plain], "token_strs": None}  # fmt: skip
    without = locked.post("/tokenize", json={"prompt": text, "add_special_tokens": False}).json()
    assert without["tokens"] == plain and without["count"] == len(plain)


def test_add_special_tokens_acts_on_completions_chat_and_tokenize(tiny_locked_server, locked):
    """vLLM's add_special_tokens: a completions prompt's BOS left out with false (its
    default true), the chat prompt's added with true (its default false), /tokenize's chat
    form as chat's; seen in the prompt's token ids and usage."""
    bos = tokenizer_of(tiny_locked_server).hf.convert_tokens_to_ids(BOS)
    text = "The quick brown fox"
    body = {"max_tokens": 1, "return_token_ids": True}
    ids = {}
    for add in (True, False):
        r = locked.post("/v1/completions", json={**body, "prompt": text, "add_special_tokens": add})
        assert r.status_code == 200, r.text
        choice = r.json()["choices"][0]
        ids[add] = choice["prompt_token_ids"]
        assert r.json()["usage"]["prompt_tokens"] == len(ids[add])
    assert ids[True] == [bos, *ids[False]] and ids[False][0] != bos
    for add in (False, True):
        r = locked.post("/v1/chat/completions", json={**body, "messages": CHAT,
                                                      "add_special_tokens": add})  # fmt: skip
        assert r.status_code == 200, r.text
        ids[add] = r.json()["prompt_token_ids"]
        tokenized = locked.post("/tokenize", json={"messages": CHAT, "add_special_tokens": add})
        assert tokenized.json()["tokens"] == ids[add]
    assert ids[True] == [bos, *ids[False]]
    # /v1/embeddings: a text input's BOS (its default) or not, as the same ids given as ids
    plain = locked.post("/tokenize", json={"prompt": text, "add_special_tokens": False})
    plain_ids = plain.json()["tokens"]
    for add, given in ((None, [bos, *plain_ids]), (False, plain_ids)):
        asked = {"input": text} | ({} if add is None else {"add_special_tokens": add})
        got = locked.post("/v1/embeddings", json=asked).json()["data"][0]["embedding"]
        want = locked.post("/v1/embeddings", json={"input": given}).json()["data"][0]["embedding"]
        assert got == want
    messages = {"messages": CHAT}
    kinds = [locked.post("/v1/embeddings", json=messages | extra).json()["usage"]["prompt_tokens"]
             for extra in ({}, {"add_special_tokens": True})]  # fmt: skip
    assert kinds[1] == kinds[0] + 1


def test_tokenize_returns_token_strings(tiny_server, http):
    hf = tokenizer_of(tiny_server).hf
    out = http.post("/tokenize", json={"prompt": "Hello world", "return_token_strs": True}).json()
    assert out["token_strs"] == [hf.backend_tokenizer.id_to_token(i) for i in out["tokens"]]
    assert "".join(out["token_strs"]).replace("Ġ", " ") == "Hello world"


def test_tokenize_messages_through_the_chat_template(tiny_server, http):
    tok = tokenizer_of(tiny_server)
    out = http.post("/tokenize", json={"model": tiny_server[0].state.client.engine.model_name,
                                       "messages": CHAT, "return_token_strs": True}).json()  # fmt: skip
    assert out["tokens"] == tok.encode(rendered(CHAT), False)
    assert out["count"] == len(out["tokens"]) and len(out["token_strs"]) == out["count"]
    # The prompt /v1/chat/completions runs for the same messages.
    chat = http.post("/v1/chat/completions", json={"messages": CHAT, "max_tokens": 1})
    assert chat.json()["usage"]["prompt_tokens"] == out["count"]
    bare = http.post("/tokenize", json={"messages": CHAT, "add_generation_prompt": False}).json()
    assert bare["tokens"] == tok.encode(rendered(CHAT, generation_prompt=False), False)
    open_end = [*CHAT, {"role": "assistant", "content": "Hi"}]
    cont = http.post("/tokenize", json={"messages": open_end, "add_generation_prompt": False,
                                        "continue_final_message": True}).json()  # fmt: skip
    expected = rendered(open_end, generation_prompt=False).removesuffix("<|im_end|>\n")
    assert cont["tokens"] == tok.encode(expected, False)


def test_tokenize_shows_the_tools_as_the_chat_endpoint_does(http):
    plain = http.post("/tokenize", json={"messages": CHAT}).json()
    out = http.post("/tokenize", json={"messages": CHAT, "tools": [TOOL]}).json()
    assert out["count"] > plain["count"]  # the tiny template has no tools: a system prompt
    text = http.post("/detokenize", json={"tokens": out["tokens"]}).json()["prompt"]
    assert "get_weather" in text and text.endswith(rendered(CHAT[1:]))
    chat = http.post("/v1/chat/completions", json={"messages": CHAT, "tools": [TOOL],
                                                   "tool_choice": "none", "max_tokens": 1})  # fmt: skip
    # Longer than the tiny model's context: the chat endpoint's refusal counts the same prompt.
    assert f"the prompt has {out['count']} tokens" in error_of(chat)["message"]


def test_tokenize_accepts_what_asks_for_nothing(http):
    base = http.post("/tokenize", json={"messages": CHAT}).json()
    neutral = {"add_special_tokens": False, "tools": None, "chat_template": None,
               "mm_processor_kwargs": {}, "documents": [], "return_token_strs": None,
               "model": None}  # fmt: skip
    assert http.post("/tokenize", json={"messages": CHAT, **neutral}).json() == base


@pytest.mark.parametrize(
    "body, param, code",
    [
        ({"prompt": "x", "temperature": 0}, "temperature", "unknown_field"),
        ({"prompt": "x", "nonsense": None}, "nonsense", "unknown_field"),
        ({"messages": CHAT, "max_tokens": 4}, "max_tokens", "unknown_field"),
        ({"messages": CHAT, "prompt": "x"}, "prompt", "unknown_field"),
        ({"prompt": "x", "add_generation_prompt": True}, "add_generation_prompt", "unknown_field"),
        ({"messages": CHAT, "chat_template": "{{ 1 }}"}, "chat_template", "unsupported_field"),
        ({"messages": CHAT, "tools": [{"type": "function"}]}, "tools.0.function", "invalid_value"),
        ({"messages": CHAT, "tools": [TOOL], "tool_choice": "none"}, "tool_choice",
         "unknown_field"),
        ({"messages": CHAT, "media_io_kwargs": {}}, "media_io_kwargs", "unknown_field"),
        ({"messages": [{"role": "user", "content": "x", "tool_call_id": "t"}]},
         "messages.0.tool_call_id", "invalid_value"),
        ({"messages": [{"role": "user", "content": "x", "refusal": "no"}]}, "messages.0.refusal",
         "unsupported_field"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "messages.0.role", "invalid_value"),
        ({"messages": CHAT, "chat_template_kwargs": {"nope": 1}}, "chat_template_kwargs.nope",
         "unsupported_field"),
        ({"messages": CHAT, "continue_final_message": True}, "continue_final_message",
         "invalid_value"),
        ({"messages": []}, "messages", "invalid_value"),
        ({"prompt": "x", "add_special_tokens": "yes"}, "add_special_tokens", "invalid_value"),
        ({"prompt": ["x"]}, "prompt", "invalid_value"),
        ({}, "prompt", "invalid_value"),
    ],
)  # fmt: skip
def test_tokenize_refuses_naming_the_field(http, body, param, code):
    error = error_of(http.post("/tokenize", json=body))
    assert (error["param"], error["code"]) == (param, code), error
    assert error["type"] == "invalid_request_error"


def test_tokenize_and_detokenize_refuse_another_model_and_bad_json(http):
    for path, body in [("/tokenize", {"prompt": "x"}), ("/detokenize", {"tokens": [1]})]:
        error = error_of(http.post(path, json={**body, "model": "gpt-4"}), 404)
        assert (error["param"], error["code"]) == ("model", "model_not_found")
        error = error_of(http.post(path, content=b"{not json", headers=JSON_TYPE))
        assert error["code"] == "invalid_json"
        # valid JSON nested past Python's reader: said so, not "not valid JSON"
        deep = b'{"prompt": "x", "a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
        error = error_of(http.post(path, content=deep, headers=JSON_TYPE))
        assert error["code"] == "invalid_json" and "deeper than" in error["message"], error
        assert error_of(http.post(path, json=[body]))["message"] == (
            "the request body must be a JSON object"
        )


# ---- /detokenize -------------------------------------------------------------------------------


def test_detokenize_inverts_tokenize(tiny_locked_server, locked):
    text = "Paris is the capital of France."
    ids = locked.post("/tokenize", json={"prompt": text}).json()["tokens"]  # BOS first
    r = locked.post("/detokenize", json={"tokens": ids})
    assert r.status_code == 200, r.text
    # special tokens kept, as vLLM; the text under vLLM's key and llama.cpp's
    assert r.json() == {"prompt": BOS + text, "content": BOS + text}
    assert locked.post("/detokenize", json={"tokens": ids[1:]}).json()["prompt"] == text
    assert locked.post("/detokenize", json={"tokens": []}).json() == {"prompt": "", "content": ""}


def test_detokenize_refuses_what_is_not_a_token_id(tiny_server, http):
    vocab = tokenizer_of(tiny_server).vocab_size
    for tokens, param in [([5, vocab], "tokens.1"), ([-1], "tokens.0"), ([1.0], "tokens.0"),
                          ("12", "tokens"), (None, "tokens")]:  # fmt: skip
        error = error_of(http.post("/detokenize", json={"tokens": tokens}))
        assert error["param"] == param, error
    error = error_of(http.post("/detokenize", json={"tokens": [1], "skip_special_tokens": True}))
    assert (error["param"], error["code"]) == ("skip_special_tokens", "unknown_field")


# ---- /v1/models/{id}, /version, HEAD /health -----------------------------------------------------


def test_retrieve_model(tiny_server, http):
    listed = http.get("/v1/models").json()["data"][0]
    r = http.get(f"/v1/models/{listed['id']}")
    assert r.status_code == 200 and r.json() == listed | {"created": r.json()["created"]}
    client = openai.OpenAI(base_url=tiny_server[1] + "/v1", api_key="x", max_retries=0)
    assert client.models.retrieve(listed["id"]).id == listed["id"]
    for unknown in ["gpt-4", "org/" + listed["id"]]:  # a slash is part of the name, not a path
        error = error_of(http.get(f"/v1/models/{unknown}"), 404)
        assert error == {"message": f"The model `{unknown}` does not exist (this server serves "
                                    f"`{listed['id']}`).", "type": "invalid_request_error",
                         "param": "model", "code": "model_not_found"}  # fmt: skip
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-4")


def test_version_is_the_package_version(http):
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert http.get("/version").json() == {"version": version} == {"version": roseinfer.__version__}


def test_head_health(tiny_server, tiny_locked_server):
    for _, url in (tiny_server, tiny_locked_server):  # no key needed
        for path in ("/health", "/ping"):  # /ping: vLLM's (and SageMaker's) name
            r = httpx.head(url + path, timeout=10)
            assert r.status_code == 200 and r.content == b""
            assert httpx.get(url + path, timeout=10).json() == {"status": "ok"}


def test_api_key_protects_what_vllm_protects(tiny_locked_server, locked):
    url = tiny_locked_server[1]
    model = tiny_locked_server[0].state.client.engine.model_name
    protected = [("POST", "/tokenize", {"prompt": "x"}), ("POST", "/detokenize", {"tokens": [1]}),
                 ("GET", f"/v1/models/{model}", None)]  # fmt: skip
    for method, path, body in protected:
        r = httpx.request(method, url + path, json=body, timeout=10)
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key", path
        r = httpx.request(method, url + path, json=body, timeout=10,
                          headers={"Authorization": "Bearer wrong"})  # fmt: skip
        assert r.status_code == 401, path
        assert locked.request(method, path, json=body).status_code == 200, path
    for method in ("GET", "DELETE"):  # stored responses: the key first, then whether it exists
        assert httpx.request(method, url + "/v1/responses/resp_x", timeout=10).status_code == 401
        assert locked.request(method, "/v1/responses/resp_x").status_code == 404
    for path in ["/", "/static/chat.js", "/static/chat.css", "/docs", "/redoc", "/openapi.json",
                 "/version", "/health", "/metrics"]:  # fmt: skip
        assert httpx.get(url + path, timeout=10).status_code == 200, path


# ---- pages: served here, loading nothing from elsewhere -----------------------------------------


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name == "src" or (name == "href" and tag == "link")):
                self.refs.append(value)


EXTERNAL = re.compile(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}", re.IGNORECASE)
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)")
SVG_NS = "http://www.w3.org/2000/svg"  # a namespace name inside inline SVG, never fetched


def assets_of(http: httpx.Client, path: str) -> dict[str, httpx.Response]:
    """The page at `path` and what it references (scripts, stylesheets, icons, and the files
    those stylesheets reference), each fetched: none may name another host."""
    page = http.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not EXTERNAL.search(page.text), EXTERNAL.search(page.text)
    parser = _Refs()
    parser.feed(page.text)
    assert parser.refs, "the page references no assets"
    fetched = {path: page}
    todo = [urljoin(str(http.base_url.join(path)), ref) for ref in parser.refs]
    while todo:
        ref = todo.pop()
        if ref.startswith("data:"):
            continue
        assert urlsplit(ref).netloc == http.base_url.netloc.decode(), ref
        r = http.get(ref)
        assert r.status_code == 200, ref
        fetched[ref] = r
        if ref.endswith(".css"):
            assert not EXTERNAL.search(r.text.replace(SVG_NS, "")), ref
            todo += [urljoin(ref, u) for u in CSS_URL.findall(r.text) if not u.startswith("data:")]
    return fetched


def test_docs_load_nothing_from_another_host(http):
    docs = assets_of(http, "/docs")
    assert any(ref.endswith("swagger-ui-bundle.js") for ref in docs)
    assert "'/openapi.json'" in docs["/docs"].text and '"validatorUrl": null' in docs["/docs"].text
    spec = http.get("/openapi.json").json()
    assert {"/tokenize", "/detokenize", "/version", "/v1/models/{model_id}"} <= set(spec["paths"])
    assert any(ref.endswith("redoc.standalone.js") for ref in assets_of(http, "/redoc"))
    assert http.get("/docs/oauth2-redirect").status_code == 200


def test_chat_page_is_served_with_its_files(http):
    page = assets_of(http, "/")
    assert {ref.rsplit("/", 1)[-1] for ref in page if ref != "/"} == {"chat.css", "chat.js"}
    script = next(r for ref, r in page.items() if ref.endswith("chat.js"))
    assert "javascript" in script.headers["content-type"]
    assert not EXTERNAL.search(script.text)


def test_metrics_carry_vllms_names_too(tiny_model_dir):
    """Each metric vLLM also exports is there under its name, labelled `model_name`, with our
    value; preemptions counted (a cache of 8 blocks for 4 requests of ~100 tokens each)."""
    from concurrent.futures import ThreadPoolExecutor

    from prometheus_client.parser import text_string_to_metric_families

    from roseinfer.server.metrics import VLLM_NAMES

    with serve_in_process(tiny_model_dir("llama"), num_kv_blocks=8) as (app, url):
        body = {"prompt": "The quick brown fox " * 12, "max_tokens": 40, "ignore_eos": True}

        def one(_: int) -> int:
            return httpx.post(url + "/v1/completions", json=body, timeout=120).status_code

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(one, range(4))) == [200] * 4
        text = httpx.get(url + "/metrics", timeout=10).text
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(text) for s in f.samples}  # fmt: skip
    model = app.state.client.engine.model_name
    assert samples[("roseinfer_num_preemptions_total", ())] > 0
    compared = 0
    for (name, labels), value in samples.items():
        ours = name.removeprefix("roseinfer_")
        family = next((f for f in VLLM_NAMES if ours.startswith(f)), None)
        if family is None or ours.endswith("_created") or name == ours:
            continue
        theirs = VLLM_NAMES[family] + ours[len(family) :]
        assert (
            samples[(theirs, tuple(sorted({**dict(labels), "model_name": model}.items())))] == value
        )
        compared += 1
    assert compared > 40  # gauges, counters and every bucket of the three histograms
    assert not any(name.startswith("vllm:") and name.endswith("_created") for name, _ in samples)


def test_a_posts_query_parameter_is_a_400_naming_it_but_azures_api_version(tiny_server):
    url = tiny_server[1]
    body = {"prompt": "Hi", "max_tokens": 2}
    r = httpx.post(url + "/v1/completions", params={"temperature": 0}, json=body, timeout=30)
    assert (r.status_code, r.json()["error"]["param"]) == (400, "temperature")
    r = httpx.post(url + "/v1/completions", params={"api-version": "2024-10-21"}, json=body,
                   timeout=30)  # fmt: skip
    assert r.status_code == 200, r.text
    for method, path in (("GET", "/v1/responses/resp_nope"), ("POST", "/v1/conversations")):
        r = httpx.request(method, url + path, params={"api-version": "2024-10-21"}, json={},
                          timeout=30)  # fmt: skip
        assert r.status_code in (200, 404), r.text  # (not a 400 naming api-version)


def test_documents_go_to_a_template_that_reads_them(tiny_model_dir, http, tmp_path):
    """vLLM's `documents` (retrieval-augmented templates): rendered where the template reads
    them, a 400 naming the field where it does not (the tiny template, as SmolLM2's), [] none."""
    from transformers import AutoTokenizer

    from roseinfer.chat import ChatError, ChatMessage, chat_prompt_text
    from roseinfer.tokenizer import Tokenizer

    hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    hf.chat_template = (
        "{% for d in documents or [] %}[{{ d.title }}: {{ d.text }}]{% endfor %}"
        "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    )
    docs = [{"title": "Paris", "text": "the capital of France"}]
    ask = [ChatMessage(role="user", content="What is Paris?")]
    text = chat_prompt_text(Tokenizer(hf), ask, documents=docs)
    assert text.startswith("[Paris: the capital of France]user: What is Paris?")
    assert chat_prompt_text(Tokenizer(hf), ask, documents=[]) == "user: What is Paris?\n"
    plain_hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    with pytest.raises(ChatError) as e:
        chat_prompt_text(Tokenizer(plain_hf), ask, documents=docs)
    assert e.value.param == "documents"
    # the server: its template reads no documents
    body = {"messages": CHAT, "max_tokens": 1}
    r = http.post("/v1/chat/completions", json={**body, "documents": docs})
    assert r.status_code == 400 and r.json()["error"]["param"] == "documents", r.text
    r = http.post("/tokenize", json={"messages": CHAT, "documents": docs})
    assert r.status_code == 400 and r.json()["error"]["param"] == "documents", r.text
    assert http.post("/v1/chat/completions", json={**body, "documents": []}).status_code == 200
    r = http.post("/v1/chat/completions", json={**body, "documents": [{"title": 1}]})
    assert r.status_code == 400 and r.json()["error"]["param"].startswith("documents"), r.text
    # a served model whose template reads them: in the prompt chat and /tokenize run
    import shutil

    from conftest import serve_in_process

    shutil.copytree(tiny_model_dir("llama"), tmp_path / "rag")
    hf.save_pretrained(tmp_path / "rag")
    with serve_in_process(str(tmp_path / "rag")) as (_, url), httpx.Client(base_url=url) as rag:
        shown = rag.post("/tokenize", json={"messages": CHAT, "documents": docs}).json()
        text = rag.post("/detokenize", json={"tokens": shown["tokens"]}).json()["prompt"]
        assert text.startswith("[Paris: the capital of France]")
        used = [rag.post("/v1/chat/completions", json=body | extra).json()["usage"]
                for extra in ({}, {"documents": docs})]  # fmt: skip
        assert used[1]["prompt_tokens"] == shown["count"] > used[0]["prompt_tokens"]
