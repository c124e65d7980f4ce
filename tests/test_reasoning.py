"""A reasoning model's thinking read apart from its chat answers (`--reasoning-parser`): the
parser alone, then served, streamed and not, against the parser's reading of the whole text the
same seed writes with `reasoning_format: "none"`."""

from __future__ import annotations

import json
import random

import httpx
import pytest
from conftest import make_tiny_model, serve_in_process

from roseinfer.output.reasoning import REASONING_PARSERS, ReasoningParser
from roseinfer.sampling_params import StructuredOutputs
from roseinfer.server.config import ServerConfig


def parse(name: str, text: str, cuts: list[int], prompt_end: str = "") -> tuple[str | None, str]:
    """(reasoning, answer) of `text` fed to the parser in pieces ending at `cuts`."""
    parser = ReasoningParser(name, prompt_end)  # type: ignore[arg-type]
    reasoning, answer, start = "", "", 0
    for end in [*cuts, len(text)]:
        r, a = parser.feed(text[start:end], end == len(text))
        reasoning, answer, start = reasoning + r, answer + a, end
    return (reasoning if parser.thought else None), answer


@pytest.mark.parametrize(
    "text,deepseek_r1,qwen3",
    [
        ("<think>abc</think>\n\nThe answer", ("abc", "The answer"), ("abc", "The answer")),
        ("abc</think>ans", ("abc", "ans"), (None, "abc</think>ans")),  # opened by the prompt
        ("  <think>x</think>y", ("x", "y"), ("x", "y")),
        ("no tags", ("no tags", ""), (None, "no tags")),  # deepseek_r1: cut while thinking
        ("<think>cut off", ("cut off", ""), ("cut off", "")),
        ("<thi", ("<thi", ""), (None, "<thi")),  # a tag's start that never became one
        ("<think></think>", ("", ""), ("", "")),
        ("a<think>b</think>c", ("a<think>b", "c"), (None, "a<think>b</think>c")),
        ("", (None, ""), (None, "")),
    ],
)
def test_the_two_formats_and_any_pieces_read_alike(text, deepseek_r1, qwen3):
    rng = random.Random(text)
    for name, want in (("deepseek_r1", deepseek_r1), ("qwen3", qwen3)):
        assert parse(name, text, []) == want, name
        for _ in range(40):  # streamed in pieces: the same two parts
            cuts = sorted(rng.sample(range(len(text) + 1), min(len(text), rng.randint(1, 5))))
            assert parse(name, text, cuts) == want, (name, cuts)


@pytest.mark.parametrize("name", REASONING_PARSERS)
def test_a_block_the_prompt_opens_or_closes_is_read_from_there(name):
    """llama.cpp's reading: a prompt ending in `<think>` (QwQ's, Qwen3's thinking-only models',
    DeepSeek-R1's templates) starts the answer in its thinking; one ending in `</think>`
    (Qwen3's with enable_thinking false) in its answer (the review: qwen3 had given such
    thinking as content, deepseek_r1 such answers as thinking)."""
    opened = "<|im_start|>assistant\n<think>\n"
    closed = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert parse(name, "hmm</think>\n\nYes", [], opened) == ("hmm", "Yes")
    assert parse(name, "hmm", [2], opened) == ("hmm", "")  # cut while thinking
    assert parse(name, "Yes, </think> is a tag", [3], closed) == (None, "Yes, </think> is a tag")
    assert parse(name, "\nYes", [], closed) == (None, "Yes")


def test_an_unknown_parser_is_refused():
    with pytest.raises(ValueError, match="deepseek_r1, qwen3"):
        ReasoningParser("r1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="--reasoning-parser"):
        ServerConfig(reasoning_parser="r1")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def thinking_model(tmp_path_factory) -> str:
    """A tiny random llama whose vocabulary writes `<think>` and `</think>` as one token each,
    in the text (added, not special: as Qwen3's and DeepSeek-R1's)."""
    path = str(tmp_path_factory.mktemp("thinking"))
    # (a context for the tools' system prompt)
    return make_tiny_model("llama", path, added_tokens=("<think>", "</think>"), context=1024)


@pytest.fixture(scope="module", params=REASONING_PARSERS)
def served(request, thinking_model):
    config = ServerConfig(reasoning_parser=request.param)
    with serve_in_process(thinking_model, server_config=config) as (_, url):
        with httpx.Client(base_url=url, timeout=60) as http:
            yield request.param, http


def words(http: httpx.Client) -> list[int]:
    """Token ids of `<think>`, `</think>` and two plain tokens: answers drawn among them hold
    the tags anywhere, often."""
    ids = []
    for text in ("<think>", "</think>", "a", " b"):
        out = http.post("/tokenize", json={"prompt": text, "add_special_tokens": False}).json()
        assert len(out["tokens"]) == 1, (text, out)
        ids += out["tokens"]
    return ids


def chat(http: httpx.Client, seed: int, **extra) -> httpx.Response:
    body = {"messages": [{"role": "user", "content": "Think, then answer."}], "seed": seed,
            "temperature": 1.0, "max_tokens": 10, "allowed_token_ids": words(http), **extra}  # fmt: skip
    return http.post("/v1/chat/completions", json=body)


def streamed(http: httpx.Client, seed: int, **extra) -> tuple[dict, list[dict]]:
    """The stream's deltas joined (content, reasoning, reasoning_content) and the deltas."""
    r = chat(http, seed, stream=True, **extra)
    assert r.status_code == 200, r.text
    deltas = [json.loads(line[6:])["choices"][0]["delta"] for line in r.text.splitlines()
              if line.startswith("data: {")]  # fmt: skip
    joined: dict = {}
    for d in deltas:
        for key in ("content", "reasoning", "reasoning_content"):
            if d.get(key) is not None:
                joined[key] = joined.get(key, "") + d[key]
    return joined, deltas


def test_answers_read_as_the_parser_reads_their_whole_text(served):
    """Seeded answers drawn among the tags and two words: the thinking and the answer, streamed
    and not, are the parser's reading of the text the same seed writes unparsed."""
    name, http = served
    thought = 0
    for seed in range(24):
        unparsed = chat(http, seed, reasoning_format="none").json()
        whole = unparsed["choices"][0]["message"]
        assert "reasoning" not in whole and "reasoning_content" not in whole
        assert "completion_tokens_details" not in unparsed["usage"]
        reasoning, answer = parse(name, whole["content"], [])
        reply = chat(http, seed).json()
        message = reply["choices"][0]["message"]
        assert (message["reasoning"], message["content"]) == (reasoning, answer or None), seed
        assert message["reasoning_content"] == message["reasoning"]
        thinking_tokens = reply["usage"]["completion_tokens_details"]["reasoning_tokens"]
        assert thinking_tokens > 0 if reasoning else reasoning == "" or thinking_tokens == 0
        assert thinking_tokens <= reply["usage"]["completion_tokens"]
        usage = [json.loads(line[6:])["usage"] for line in chat(
            http, seed, stream=True, stream_options={"include_usage": True}
        ).text.splitlines() if line.startswith("data: {") and '"usage":{' in line]  # fmt: skip
        assert usage == [reply["usage"]]
        joined, deltas = streamed(http, seed)
        assert joined.get("reasoning") == (reasoning or None), seed
        assert joined.get("reasoning_content") == joined.get("reasoning")
        assert joined.get("content", "") == answer, seed
        # opened with null where it thinks first (text after it replaces it), "" otherwise
        assert deltas[0]["role"] == "assistant"
        assert deltas[0]["content"] == ("" if answer and not reasoning else None), seed
        hidden = chat(http, seed, include_reasoning=False).json()["choices"][0]["message"]
        assert "reasoning" not in hidden and hidden["content"] == message["content"]
        joined, _ = streamed(http, seed, include_reasoning=False)
        assert "reasoning" not in joined and joined.get("content", "") == answer
        thought += bool(reasoning) and bool(answer)
    assert thought >= 2  # (the case itself: answers that think, then answer)


def test_a_grammar_waits_for_the_thinking_to_end(served):
    """A grammar that shapes the answer from its start (here a JSON object) starts after the
    thinking (free text up to `</think>`: required for deepseek_r1, which reads the output as
    thinking up to it; optional, opened by `<think>`, for qwen3), as vLLM starts it after the
    reasoning ends: the thinking is read apart and the content is the grammar's (the tags
    biased up, so that the tiny model writes them)."""
    name, http = served
    think, close = words(http)[:2]
    finished = thought = 0
    for seed in range(8):
        body = {"messages": [{"role": "user", "content": "JSON"}], "max_tokens": 40,
                "seed": seed, "temperature": 1.0, "logit_bias": {str(think): 6, str(close): 6},
                "response_format": {"type": "json_object"}}  # fmt: skip
        choice = http.post("/v1/chat/completions", json=body).json()["choices"][0]
        message = choice["message"]
        if name == "deepseek_r1":
            assert message["reasoning"] is not None
        thought += message["reasoning"] is not None
        if choice["finish_reason"] == "stop":
            finished += 1
            assert isinstance(json.loads(message["content"]), dict), message
        extra = {k: v for k, v in body.items() if k != "seed"}
        joined, _ = streamed(http, seed, allowed_token_ids=None, **extra)
        assert joined.get("reasoning") == (message["reasoning"] or None)
        assert joined.get("content", "") == (message["content"] or "")
    assert finished >= 2 and thought >= 2, (finished, thought)


def test_a_grammar_after_thinking_accepts_what_it_should(thinking_model):
    """The composed grammar (`StructuredOutputs.thinking_first`) over each constraint form."""
    from roseinfer.structured.grammar import GrammarCompiler, GrammarError
    from roseinfer.tokenizer import Tokenizer

    tokenizer = Tokenizer.from_pretrained(thinking_model)
    compiler = GrammarCompiler(tokenizer, len(tokenizer.hf))
    forms = [
        ({"json": {"type": "object", "properties": {"a": {"type": "integer"}}}}, '{"a":1}', "42"),
        ({"regex": "[0-9]+"}, "42", "x"),
        ({"choice": ("yes", "no")}, "no", "maybe"),
        ({"grammar": 'start: "x" | "y"'}, "x", "z"),
        ({"json_object": True}, "{}", "[]"),
    ]
    for form, good, bad in forms:
        for mode in ("required", "optional"):
            spec = StructuredOutputs(**form, thinking_first=mode)  # type: ignore[arg-type]

            def accepts(text: str) -> bool:
                m = compiler.matcher(spec)  # noqa: B023
                ok = m.consume_tokens(tokenizer.encode(text, False))
                return bool(ok) and not m.is_error() and m.is_accepting()

            assert accepts(f"<think>q</think>{good}"), (form, mode)
            assert not accepts(f"<think>q</think>{bad}"), (form, mode)
            assert accepts(f"q a</think>{good}") == (mode == "required"), (form, mode)
            assert accepts(good) == (mode == "optional"), (form, mode)
    # blank space after `</think>` is the constraint's (the review: a blank rule had taken it
    # all, and an answer that opens with blank space could not be written)
    spaced = StructuredOutputs(choice=(" yes", "\nno"), thinking_first="required")
    for answer in (" yes", "\nno"):
        m = compiler.matcher(spaced)
        assert m.consume_tokens(tokenizer.encode(f"q</think>{answer}", False)) and m.is_accepting()
    # the tools' "auto" grammar after thinking: a `<tool_call>` while thinking opens no call
    from roseinfer.structured.tools import Tool, ToolUse

    auto = ToolUse((Tool("add", None, {"type": "object"}),), "auto").grammar()
    m = compiler.matcher(StructuredOutputs(grammar=auto, thinking_first="required"))
    text = "I could write <tool_call> here.</think>Hello"
    assert m.consume_tokens(tokenizer.encode(text, False)) and m.is_accepting()
    # a constraint no text meets is a 400 still (the free thinking before it hid that)
    with pytest.raises(GrammarError):
        compiler.check(StructuredOutputs(regex="[^\\s\\S]", thinking_first="required"))


def test_a_stop_token_stays_special_to_a_grammar(tiny_model_dir):
    """A stop token a vocabulary adds as text (a fine-tune's `add_tokens(["<|im_end|>"])`) stays
    special to llguidance: as text it could end a constrained answer halfway (the review)."""
    from transformers import AutoTokenizer

    from roseinfer.structured.grammar import GrammarCompiler, fill_bitmask
    from roseinfer.tokenizer import Tokenizer

    hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    hf.add_tokens(["<|stop|>"])
    hf.eos_token = "<|stop|>"
    tokenizer = Tokenizer(hf)
    stop = hf.convert_tokens_to_ids("<|stop|>")
    assert stop in tokenizer.stop_token_ids
    compiler = GrammarCompiler(tokenizer, len(hf))
    matcher = compiler.matcher(StructuredOutputs(json={"type": "object", "properties": {
        "a": {"type": "string"}}, "required": ["a"]}))  # fmt: skip
    assert matcher.consume_tokens(tokenizer.encode('{"a":"x', False))  # (compact JSON)
    mask = fill_bitmask([matcher], len(hf))
    assert not (int(mask[0, stop // 32]) >> (stop % 32)) & 1  # (inside the string: not text)


def test_a_thinking_counter_forces_the_closing_tag_a_token_at_a_time():
    """Tags of several tokens: the count starts after the whole opening tag, the closing tag's
    tokens are forced in turn once the budget is spent, and a block opened again counts
    anew; a block the prompt opened counts from the output's first token."""
    from roseinfer.layers.thinking import ThinkingCounter
    from roseinfer.reasoning_params import ThinkingBudget

    counter = ThinkingCounter.of(ThinkingBudget(2, (1, 2), (3, 4, 5)))
    out: list[int] = []
    forced = []
    for token in [9, 1, 2, 7, 8, None, None, None, 9, 1, 2, 3, 4, 5, 1, 2, 6, 6, None]:
        f = counter.forced([0, *out], 1)  # (one prompt token)
        forced.append(f)
        out.append(token if token is not None else f)
    # (the second block: the model closes it itself as the budget runs out, its last token
    # the one forced)
    assert forced == [None, None, None, None, None, 3, 4, 5, None, None, None, None, None, 5,
                      None, None, None, None, 3]  # fmt: skip
    prompt_opened = ThinkingCounter.of(ThinkingBudget(0, (1,), (3,), opened_by_prompt=True))
    assert prompt_opened.forced([0], 1) == 3
    # llama.cpp's budget message: its tokens forced before the tag's, in each block anew
    counter = ThinkingCounter.of(ThinkingBudget(1, (1,), (3,), message_ids=(7, 8)))
    out, forced = [], []
    for token in [1, 9, None, None, None, 1, 9, None, None, None]:
        f = counter.forced([0, *out], 1)
        forced.append(f)
        out.append(token if token is not None else f)
    assert forced == [None, None, 7, 8, 3, None, None, 7, 8, 3]
    with pytest.raises(ValueError, match="max_tokens must be an integer >= 0"):
        ThinkingBudget(-1, (1,), (3,))


def test_a_thinking_budget_closes_the_block(served):
    """vLLM's `thinking_token_budget`: a block the prompt opens (a continued `<think>`) or the
    answer opens is closed by force after n tokens though the request's allowed tokens leave
    out `</think>`; the thinking read apart is those n tokens."""
    name, http = served
    think, close, a, b = words(http)
    opened = {"messages": [{"role": "user", "content": "Think."},
                           {"role": "assistant", "content": "<think>"}],
              "add_generation_prompt": False, "continue_final_message": True,
              "max_tokens": 8, "temperature": 1.0, "return_token_ids": True,
              "allowed_token_ids": [a, b]}  # fmt: skip
    for budget in (0, 3):
        for seed in range(3):
            body = {**opened, "seed": seed, "thinking_token_budget": budget}
            raw = http.post("/v1/chat/completions", json={**body, "reasoning_format": "none"})
            ids = raw.json()["choices"][0]["token_ids"]
            assert len(ids) == 8 and ids[budget] == close and ids.count(close) == 1, ids
            message = http.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]
            assert message["reasoning"] == raw.json()["choices"][0]["message"]["content"].split(
                "</think>")[0]  # fmt: skip
    # the answer opens its blocks itself, anywhere
    body = {"messages": [{"role": "user", "content": "Think."}], "max_tokens": 16,
            "temperature": 1.0, "return_token_ids": True, "allowed_token_ids": [think, a, b],
            "reasoning_format": "none", "thinking_token_budget": 2}  # fmt: skip
    blocks = 0
    for seed in range(6):
        ids = http.post("/v1/chat/completions", json={**body, "seed": seed}).json()
        ids = ids["choices"][0]["token_ids"]
        i = 0
        while think in ids[i:]:
            start = ids.index(think, i)
            end = start + 1 + 2
            if end < len(ids):
                assert ids[end] == close and close not in ids[start:end], ids
                blocks += 1
            i = end + 1
    assert blocks > 0
    r = http.post("/v1/chat/completions", json={**body, "thinking_token_budget": -2})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "thinking_token_budget")
    # llama.cpp's reasoning_budget_tokens: its message forced before the tag
    body = {**opened, "seed": 1, "reasoning_format": "none", "reasoning_budget_tokens": 2,
            "reasoning_budget_message": "a b"}  # fmt: skip
    ids = http.post("/v1/chat/completions", json=body).json()["choices"][0]["token_ids"]
    assert ids[2:5] == [a, b, close] and ids.count(close) == 1, ids
    same = {**body, "thinking_token_budget": 2}
    assert http.post("/v1/chat/completions", json=same).json()["choices"][0]["token_ids"] == ids
    r = http.post("/v1/chat/completions", json={**body, "thinking_token_budget": 3})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "reasoning_budget_tokens")


def test_without_a_parser_asking_for_one_is_a_400(tiny_server):
    _, url = tiny_server
    with httpx.Client(base_url=url, timeout=60) as http:
        body = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}
        for extra, param in (({"include_reasoning": False}, "include_reasoning"),
                             ({"reasoning_format": "deepseek"}, "reasoning_format"),
                             ({"reasoning_format": "deepseek-legacy"}, "reasoning_format")):  # fmt: skip
            r = http.post("/v1/chat/completions", json={**body, **extra})
            assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text
        # "auto" (llama.cpp's web page sends it): the model's format, here none to read
        for extra in ({"reasoning_format": "none"}, {"include_reasoning": True},
                      {"reasoning_format": "auto"}):  # fmt: skip
            r = http.post("/v1/chat/completions", json={**body, **extra})
            assert r.status_code == 200 and "reasoning" not in r.json()["choices"][0]["message"]
        r = http.post("/v1/completions", json={"prompt": "Hi", "reasoning_format": "deepseek"})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "reasoning_format"), r.text
        # a thinking budget needs a parser's tags (vLLM's: its reasoning config)
        r = http.post("/v1/chat/completions", json={**body, "thinking_token_budget": 4})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "thinking_token_budget")
        for extra in ({"thinking_token_budget": -1}, {"thinking_token_budget": None}):
            assert http.post("/v1/chat/completions", json={**body, **extra}).status_code == 200
        r = http.post("/v1/completions", json={"prompt": "Hi", "thinking_token_budget": 4})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "thinking_token_budget")
        # llama.cpp's own tags need no parser: armed, the budget counts from the first token
        tokens = http.post("/tokenize", json={"prompt": "]]", "add_special_tokens": False})
        close = tokens.json()["tokens"]
        budget = {**body, "max_tokens": 8, "temperature": 0, "return_token_ids": True,
                  "reasoning_budget_tokens": 2, "reasoning_budget_start_tag": "[[",
                  "reasoning_budget_end_tag": "]]", "reasoning_budget_arm_immediately": True}  # fmt: skip
        ids = http.post("/v1/chat/completions", json=budget).json()["choices"][0]["token_ids"]
        assert ids[2 : 2 + len(close)] == close, (ids, close)
        for extra, param in (({"reasoning_budget_end_tag": None}, "reasoning_budget_tokens"),
                             ({"reasoning_budget_end_tag": " "}, "reasoning_budget_end_tag")):  # fmt: skip
            r = http.post("/v1/chat/completions", json={**budget, **extra})
            assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text
        body = {"input": "Hi", "max_output_tokens": 2}
        r = http.post("/v1/responses", json={**body, "include_reasoning": False})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "include_reasoning"), r.text
        r = http.post("/v1/responses", json={**body, "include_reasoning": True})
        assert r.status_code == 200 and r.json()["output"][0]["type"] == "message", r.text


# Qwen3's way with earlier thinking, cut down: shown for the assistant turns after the last
# user message (a tool loop's), left out before it.
THINKING_TEMPLATE = (
    "{% set ns = namespace(last=0) %}{% for m in messages %}{% if m.role == 'user' %}"
    "{% set ns.last = loop.index0 %}{% endif %}{% endfor %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' and m.reasoning_content and loop.index0 > ns.last %}"
    "<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}{{ m.content or '' }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def test_earlier_thinking_goes_to_the_template_under_either_name(tiny_model_dir):
    from transformers import AutoTokenizer

    from roseinfer.chat import ChatError, ChatMessage, chat_prompt_text
    from roseinfer.tokenizer import Tokenizer

    hf = AutoTokenizer.from_pretrained(tiny_model_dir("llama"))
    hf.chat_template = THINKING_TEMPLATE
    tokenizer = Tokenizer(hf)

    def render(*messages: dict) -> str:
        return chat_prompt_text(tokenizer, [ChatMessage(**m) for m in messages])

    ask = {"role": "user", "content": "Hi"}
    for name in ("reasoning", "reasoning_content"):
        after_user = render(ask, {"role": "assistant", "content": "Hello", name: "greet back"})
        assert "<think>\ngreet back\n</think>\n\nHello" in after_user
        before_user = render(ask, {"role": "assistant", "content": "Hello", name: "greet back"},
                             {"role": "user", "content": "Bye"})  # fmt: skip
        assert "greet back" not in before_user  # (the template's choice, as Qwen3's)
    both = {"role": "assistant", "content": "Hello", "reasoning": "a", "reasoning_content": "a"}
    assert "<think>\na\n</think>" in render(ask, both)
    with pytest.raises(ChatError) as e:
        render(ask, {**both, "reasoning_content": "b"})
    assert e.value.param == "messages.1.reasoning_content"
    with pytest.raises(ChatError) as e:
        render({**ask, "reasoning": "x"})
    assert e.value.param == "messages.0.reasoning"


def test_earlier_thinking_a_template_never_shows_changes_nothing(tiny_server):
    """The tiny model's template (as SmolLM2's, and DeepSeek-R1's, which drops earlier
    thinking) reads no `reasoning_content`: the same prompt with it or without (a client may
    send its answers back as it got them); still checked."""
    _, url = tiny_server
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "Bye"}]  # fmt: skip
    thought = [dict(m) for m in messages]
    thought[1]["reasoning"] = "greet"
    with httpx.Client(base_url=url, timeout=60) as http:
        plain, with_it = (http.post("/tokenize", json={"messages": m}).json()["tokens"]
                          for m in (messages, thought))  # fmt: skip
        assert with_it == plain
        thought[1]["reasoning_content"] = "other"
        r = http.post("/v1/chat/completions", json={"messages": thought, "max_tokens": 2})
        assert (r.status_code, r.json()["error"]["param"]) == (400, "messages.1.reasoning_content")


def sse_events(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_a_responses_answer_gives_its_thinking_as_a_reasoning_item(served):
    """/v1/responses: the thinking as a `reasoning` item (its `reasoning_text`) before the
    message, streamed as its own item's events; its tokens in `reasoning_tokens`; a blank
    block none (as llama.cpp drops it). Drawn as the chat test's answers, newlines too (a
    logit_bias in place of allowed_token_ids)."""
    name, http = served
    newline = http.post("/tokenize", json={"prompt": "\n", "add_special_tokens": False})
    bias = {str(t): 100 for t in [*words(http), *newline.json()["tokens"]]}
    thought = blank = 0
    for seed in range(40):
        body = {"input": "Think, then answer.", "seed": seed, "temperature": 1.0,
                "max_output_tokens": 10, "logit_bias": bias}  # fmt: skip
        whole = http.post("/v1/chat/completions", json={
            "messages": [{"role": "user", "content": "Think, then answer."}], "seed": seed,
            "temperature": 1.0, "max_tokens": 10, "logit_bias": bias, "reasoning_format": "none",
        }).json()["choices"][0]["message"]["content"]  # fmt: skip
        reasoning, answer = parse(name, whole, [])
        shown = bool(reasoning) and not str(reasoning).isspace()
        blank += bool(reasoning) and not shown
        r = http.post("/v1/responses", json=body).json()
        kinds = [item["type"] for item in r["output"]]
        assert kinds == ["reasoning"] * shown + ["message"] * bool(answer or not shown)
        if shown:
            item = r["output"][0]
            assert item["content"] == [{"type": "reasoning_text", "text": reasoning}]
            assert item["summary"] == []
            assert r["usage"]["output_tokens_details"]["reasoning_tokens"] > 0
            # include_reasoning: false (vLLM's): the same answer without its thinking's item,
            # whose tokens are still counted
            hidden = http.post("/v1/responses", json={**body, "include_reasoning": False}).json()
            assert (
                hidden["output"][0]["type"] == "message" and len(hidden["output"]) == len(kinds) - 1
            )
            assert hidden["output"][0]["content"] == r["output"][-1]["content"]
            assert hidden["usage"] == r["usage"]
            events = sse_events(http.post("/v1/responses", json={
                **body, "include_reasoning": False, "stream": True}).text)  # fmt: skip
            assert not [e for e in events if "reasoning" in e["type"]]
            assert events[-1]["response"]["output"][0]["content"] == r["output"][-1]["content"]
        if answer or not shown:
            assert r["output"][-1]["content"][0]["text"] == answer
        events = sse_events(http.post("/v1/responses", json={**body, "stream": True}).text)
        kind = "response.reasoning_text.delta"
        assert "".join(e["delta"] for e in events if e["type"] == kind) == (
            reasoning if shown else ""
        )
        text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
        assert text == answer
        final = events[-1]["response"]
        assert [item["type"] for item in final["output"]] == kinds
        assert [item.get("content") for item in final["output"]] == [
            item.get("content") for item in r["output"]
        ]
        thought += shown and bool(answer)
    # (qwen3's blank block must open the answer: rarer; the item code is the same)
    assert thought >= 2 and blank >= (name == "deepseek_r1"), (thought, blank)


def test_reasoning_items_sent_back_go_with_their_answer(served):
    """An answer's items sent back as input (as the Agents SDK sends a conversation), or read
    from a stored response (`previous_response_id`): the thinking joins the answer after it,
    which the tiny template (as DeepSeek-R1's) does not show: the same prompt as without it."""
    _, http = served
    turn = [{"role": "user", "content": "Hi"}]
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [],
                 "content": [{"type": "reasoning_text", "text": "greet back"}]}  # fmt: skip
    answer = {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "Hello"}]}  # fmt: skip
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    result = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    again = [{"role": "user", "content": "Bye"}]

    def count(items: list[dict]) -> int:
        r = http.post("/v1/responses/input_tokens", json={"input": items})
        assert r.status_code == 200, r.text
        return r.json()["input_tokens"]

    assert count([*turn, reasoning, answer, *again]) == count([*turn, answer, *again])
    assert count([*turn, reasoning, call, result]) == count([*turn, call, result])
    assert count([*turn, reasoning, *again]) == count([*turn, *again])  # (cut while thinking)
    first = http.post("/v1/responses", json={"input": "Hi", "max_output_tokens": 6}).json()
    r = http.post("/v1/responses", json={"input": "Bye", "previous_response_id": first["id"],
                                         "max_output_tokens": 2})  # fmt: skip
    assert r.status_code == 200, r.text
    # stored (the default), streamed, in the background, and as a conversation's items (the
    # review's 500s: the stored input items knew messages and calls only)
    items = [*turn, reasoning, answer, *again]
    r = http.post("/v1/responses", json={"input": items, "max_output_tokens": 2})
    assert r.status_code == 200, r.text
    listed = http.get(f"/v1/responses/{r.json()['id']}/input_items?order=asc").json()["data"]
    assert listed[1] == {**reasoning, "encrypted_content": None, "status": "completed"}
    events = sse_events(http.post("/v1/responses", json={"input": items, "max_output_tokens": 2,
                                                         "stream": True}).text)  # fmt: skip
    assert events[-1]["type"] in ("response.completed", "response.incomplete")
    r = http.post("/v1/responses", json={"input": items, "max_output_tokens": 2,
                                         "background": True})  # fmt: skip
    assert r.status_code == 200, r.text
    r = http.post("/v1/conversations", json={"items": items[:3]})
    assert r.status_code == 200, r.text
    conversation = r.json()["id"]
    r = http.post("/v1/responses", json={"input": "Bye", "conversation": conversation,
                                         "max_output_tokens": 2})  # fmt: skip
    assert r.status_code == 200, r.text


def test_the_openai_sdk_reads_the_thinking(served):
    """The `openai` package over chat and Responses, streamed and not: the thinking parses
    into its types (`reasoning` as a message's extra field, `ResponseReasoningItem`)."""
    import openai

    name, http = served
    client = openai.OpenAI(base_url=f"{str(http.base_url).rstrip('/')}/v1", api_key="none")
    bias = {str(t): 100 for t in words(http)}
    model = http.get("/v1/models").json()["data"][0]["id"]
    for seed in range(24):  # the first answer that thinks, then answers
        chat_reply = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Think."}], seed=seed,
            temperature=1.0, max_tokens=10, logit_bias=bias,
        )  # fmt: skip
        message = chat_reply.choices[0].message
        if getattr(message, "reasoning", None) and message.content:
            break
    else:
        pytest.fail("no answer thought, then answered")
    assert message.model_extra is not None
    extra = {"seed": seed, "logit_bias": bias}  # (vLLM's fields: the SDK's Responses has none)
    assert message.model_extra["reasoning_content"] == message.model_extra["reasoning"]
    response = client.responses.create(
        model=model, input="Think.", temperature=1.0, max_output_tokens=10, extra_body=extra
    )
    item = response.output[0]
    assert item.type == "reasoning" and item.content is not None
    assert item.content[0].text == message.model_extra["reasoning"]
    assert response.output_text == message.content
    with client.responses.stream(
        model=model, input="Think.", temperature=1.0, max_output_tokens=10, extra_body=extra
    ) as stream:
        events = list(stream)  # (cut by max_output_tokens: it ends `response.incomplete`)
    kinds = [event.type for event in events]
    final = events[-1].response  # type: ignore[union-attr]
    assert "response.reasoning_text.delta" in kinds and final.output_text == message.content
    assert final.output[0].type == "reasoning"


def test_an_answer_continued_inside_its_thinking_is_read_as_thinking(served):
    """`continue_final_message` on an assistant message that opened `<think>`: the prompt ends
    in the block, and the answer is read from there, streamed and not."""
    name, http = served
    opened = [{"role": "user", "content": "Think."}, {"role": "assistant", "content": "<think>\n"}]
    extra = {"messages": opened, "continue_final_message": True, "add_generation_prompt": False}
    for seed in range(6):
        whole = chat(http, seed, reasoning_format="none", **extra).json()
        reasoning, answer = parse(name, whole["choices"][0]["message"]["content"], [], "<think>\n")
        message = chat(http, seed, **extra).json()["choices"][0]["message"]
        assert (message["reasoning"], message["content"]) == (reasoning, answer or None), seed
        joined, deltas = streamed(http, seed, **extra)
        # (an empty thinking has no delta)
        assert (joined.get("reasoning", ""), joined.get("content", "")) == (reasoning, answer)
        assert deltas[0]["content"] == ("" if answer and not reasoning else None), seed


def test_text_tokens_a_vocabulary_adds_are_text_to_a_grammar(thinking_model):
    """llguidance takes every added token for a special one, which no grammar's text matches:
    under tools' "auto" grammar (free text until `<tool_call>`) a Qwen3 could not open its
    thinking (`<think>` is an added token that is text). The grammar compiler hands it the
    text ones as text; special ones stay out of any grammar's text."""
    from roseinfer.sampling_params import StructuredOutputs
    from roseinfer.structured.grammar import GrammarCompiler, fill_bitmask
    from roseinfer.structured.tools import Tool, ToolUse
    from roseinfer.tokenizer import Tokenizer

    tokenizer = Tokenizer.from_pretrained(thinking_model)
    compiler = GrammarCompiler(tokenizer, len(tokenizer.hf))
    use = ToolUse((Tool("add", None, {"type": "object"}),), "auto")
    matcher = compiler.matcher(StructuredOutputs(grammar=use.grammar()))
    mask = fill_bitmask([matcher], len(tokenizer.hf))

    def allowed(text: str) -> bool:
        (token,) = tokenizer.encode(text, False)
        return bool((int(mask[0, token // 32]) >> (token % 32)) & 1)

    assert allowed("<think>") and allowed("</think>") and not allowed("<|im_start|>")


def test_a_thinking_answer_under_auto_tools_thinks(served):
    """Served: tools under "auto" beside the parser, answers drawn among the tags and two
    words: some think (the tags were masked before), read apart as without tools."""
    name, http = served
    tools = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}]
    thought = 0
    for seed in range(24):
        message = chat(http, seed, tools=tools).json()["choices"][0]["message"]
        whole = chat(http, seed, tools=tools, reasoning_format="none").json()
        reasoning, answer = parse(name, whole["choices"][0]["message"]["content"], [])
        assert (message["reasoning"], message["content"]) == (reasoning, answer or None), seed
        thought += bool(reasoning)
    assert thought >= 1  # (none could, masked)


# Qwen3's generation prompt, cut down: `enable_thinking: false` closes an empty block in the
# prompt (the model then answers at once).
QWEN3_PROMPT = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and "
    "enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}"
)


def test_a_prompt_that_closed_the_block_is_answered_as_written(thinking_model, tmp_path):
    """Served with Qwen3's template: with `enable_thinking: false` the prompt closes the block,
    so even tags the answer writes are its content, read from the prompt's own tokens (both
    parsers); left on, qwen3 reads a block the answer opens with."""
    import shutil

    from transformers import AutoTokenizer

    path = tmp_path / "qwen3_template"
    shutil.copytree(thinking_model, path)
    hf = AutoTokenizer.from_pretrained(path)
    hf.chat_template = QWEN3_PROMPT
    hf.save_pretrained(path)
    for name in REASONING_PARSERS:
        config = ServerConfig(reasoning_parser=name)
        with serve_in_process(str(path), server_config=config) as (_, url):
            with httpx.Client(base_url=url, timeout=60) as http:
                off = {"chat_template_kwargs": {"enable_thinking": False}}
                for seed in range(6):
                    whole = chat(http, seed, reasoning_format="none", **off).json()
                    text = whole["choices"][0]["message"]["content"]
                    message = chat(http, seed, **off).json()["choices"][0]["message"]
                    assert (message["reasoning"], message["content"]) == (
                        None,
                        text.lstrip(),
                    )
                    on = chat(http, seed).json()["choices"][0]["message"]
                    unparsed = chat(http, seed, reasoning_format="none").json()
                    reasoning, answer = parse(
                        name, unparsed["choices"][0]["message"]["content"], []
                    )
                    assert (on["reasoning"], on["content"]) == (reasoning, answer or None)
