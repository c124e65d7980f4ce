"""What llama.vim and llama.vscode send to /infill, honoured: `samplers` with llama.cpp's infill
sampler, `n_indent`, `t_max_predict_ms`, `response_fields`, `n_cmpl`, their cache warm-up.

Their effects are checked where the answer can be known: the text a grammar forces, cut where
llama.cpp's rule cuts it (`n_indent`) or at a newline past the time limit; the infill sampler
on a tiny random model, whose flat distributions leave no candidate at llama.cpp's 0.2 floor
(the fill ends at once, where plain top-k sampling writes text)."""

from __future__ import annotations

import httpx
import pytest
from conftest import serve_in_process

from roseinfer.output.line_end import LineEnd
from roseinfer.output.processor import ChoiceState
from roseinfer.sampling_params import SamplingParams
from roseinfer.tokenizer import Tokenizer

TIMINGS = ["timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_token_ms",
           "timings/prompt_per_second", "timings/predicted_n", "timings/predicted_ms",
           "timings/predicted_per_token_ms", "timings/predicted_per_second"]  # fmt: skip
PREFIX, SUFFIX = "def add(a, b):\n", "\n\nprint(add(1, 2))\n"


@pytest.fixture(scope="module")
def served(fim_model):
    with serve_in_process(fim_model, num_kv_blocks=320) as (app, url):
        yield app, url


@pytest.fixture(scope="module")
def tok(fim_model):
    return Tokenizer.from_pretrained(fim_model)


def ok(r: httpx.Response):
    assert r.status_code == 200, r.text
    return r.json()


def test_llama_vims_requests(http):
    """llama.vim's `llama#fim` body and its ring-buffer warm-up, as it sends them."""
    fim = {"id_slot": 0, "input_prefix": PREFIX, "input_suffix": SUFFIX,
           "input_extra": [{"text": "X = 1\n", "time": 12.5, "filename": "util.py"}],
           "prompt": "    return", "n_predict": 16, "stop": [], "n_indent": 4, "top_k": 40,
           "top_p": 0.90, "samplers": ["top_k", "top_p", "infill"], "stream": False,
           "cache_prompt": True, "t_max_prompt_ms": 500, "t_max_predict_ms": 1000,
           "response_fields": ["content", *TIMINGS, "truncated", "tokens_cached"]}  # fmt: skip
    answer = ok(http.post("/infill", json=fim))
    assert set(answer) == set(fim["response_fields"]) and isinstance(answer["content"], str)
    warm = {"id_slot": 0, "input_prefix": "", "input_suffix": "", "input_extra": fim["input_extra"],
            "prompt": "", "n_predict": 0, "temperature": 0.0, "samplers": [], "stream": False,
            "cache_prompt": True, "t_max_prompt_ms": 1, "t_max_predict_ms": 1,
            "response_fields": [""]}  # fmt: skip
    assert ok(http.post("/infill", json=warm)) == {}


def test_llama_vscodes_request_with_several_completions(http):
    body = {"id_slot": 0, "input_prefix": PREFIX, "input_suffix": SUFFIX, "input_extra": [],
            "prompt": "    ", "n_predict": 8, "n_cmpl": 2, "top_k": 40, "top_p": 0.99,
            "stream": False, "samplers": ["top_k", "top_p", "infill"], "cache_prompt": True,
            "n_indent": 4, "t_max_prompt_ms": 500, "t_max_predict_ms": 2500}  # fmt: skip
    answers = ok(http.post("/infill", json=body))
    assert [a["index"] for a in answers] == [0, 1]
    # what ran (a sampler left out: at its neutral value), under llama.cpp's names
    assert answers[0]["generation_settings"]["samplers"] == [
        "penalties", "temperature", "top_k", "top_p", "min_p", "infill"]  # fmt: skip


def test_the_infill_sampler_ends_a_fill_with_no_likely_text(http):
    """Every one of top-k's 40 candidates is under 0.2 here (the tiny model's flat logits, read
    with n_probs): llama.cpp's infill sampler answers its end token; top-k alone writes text."""
    body = {"input_prefix": PREFIX, "input_suffix": SUFFIX, "n_predict": 4, "top_k": 40}
    first = ok(http.post("/infill", json={**body, "n_predict": 1, "n_probs": 1,
                                          "samplers": []}))  # fmt: skip
    assert first["completion_probabilities"][0]["top_logprobs"][0]["logprob"] < -1.7  # < 0.18
    for seed in range(3):
        fill = ok(http.post("/infill", json={**body, "seed": seed,
                                             "samplers": ["top_k", "infill"]}))  # fmt: skip
        assert (fill["content"], fill["tokens_predicted"], fill["stop_type"]) == ("", 1, "eos")
        plain = ok(http.post("/infill", json={**body, "seed": seed, "samplers": ["top_k"]}))
        assert plain["content"] != "" and plain["tokens_predicted"] == 4


def test_samplers_left_out_do_not_run(http):
    """`samplers: ["top_k"]` with top_k 1 is greedy whatever the temperature (it is left out);
    listed, a temperature of 0 is greedy too."""
    body = {"prompt": "x = ", "n_predict": 6, "ignore_eos": True}
    greedy = ok(http.post("/completion", json={**body, "temperature": 0}))["content"]
    for seed in range(3):
        only_k = {**body, "seed": seed, "temperature": 5.0, "top_k": 1, "samplers": ["top_k"]}
        assert ok(http.post("/completion", json=only_k))["content"] == greedy
    cold = {**body, "seed": 1, "temperature": 0, "top_k": 0, "samplers": "kt"}
    assert ok(http.post("/completion", json=cold))["content"] == greedy
    hot = ok(http.post("/completion", json={**body, "seed": 1, "temperature": 5.0}))
    assert hot["content"] != greedy  # (the temperature runs where it is listed: the default)
    assert hot["generation_settings"]["samplers"] == ["penalties", "top_k", "top_p", "min_p",
                                                      "temperature"]  # fmt: skip


GRAMMAR = 'root ::= "ab\\n  cd\\n ef\\nxyz"'  # a text the model must write, line by line


@pytest.mark.parametrize("stream", [False, True])
def test_n_indent_cuts_the_first_line_indented_less(http, stream):
    body = {"prompt": "x", "grammar": GRAMMAR, "n_predict": 32, "temperature": 0,
            "stream": stream}  # fmt: skip
    assert text_of(http, body) == ("ab\n  cd\n ef\nxyz", "eos")
    assert text_of(http, {**body, "n_indent": 2}) == ("ab\n  cd\n ", "limit")  # " ef": 1 < 2
    assert text_of(http, {**body, "n_indent": 1}) == ("ab\n  cd\n ef\n", "limit")
    blank = {**body, "grammar": 'root ::= "ab\\n\\n  cd"', "n_indent": 1}
    assert text_of(http, blank) == ("ab\n", "limit")  # a blank line is indented by 0 (llama.cpp)


def text_of(http: httpx.Client, body: dict) -> tuple[str, str]:
    """(content, stop_type) of a /completion answer, streamed or not."""
    if not body.get("stream"):
        answer = ok(http.post("/completion", json=body))
        return answer["content"], answer["stop_type"]
    import json

    text, stop_type = "", None
    with http.stream("POST", "/completion", json=body) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                text += event["content"]
                stop_type = event.get("stop_type", stop_type)
    return text, stop_type


def test_t_max_predict_ms_ends_at_a_newline_past_it(http, slow_engine):
    """Each step 20 ms longer: past 100 ms, the next token holding a newline is the last (the
    first newline comes before it; the ten lines would take 400 ms)."""
    lines = "".join(f"{c}\n" for c in "abcdefghij")
    grammar = 'root ::= "' + lines.replace("\n", "\\n") + '"'
    body = {"prompt": "x", "grammar": grammar, "n_predict": 32, "temperature": 0}
    text, stop_type = text_of(http, {**body, "t_max_predict_ms": 100})
    assert stop_type == "limit" and text.endswith("\n") and lines.startswith(text)
    assert 2 <= text.count("\n") < 10, text
    assert text_of(http, {**body, "t_max_predict_ms": -1}) == (lines, "eos")  # (-1: none)
    # llama.cpp reads an integer: a fraction of a millisecond is cut, 0.9 is no limit
    assert text_of(http, {**body, "t_max_predict_ms": 0.9}) == (lines, "eos")


# ---- the output processor's part, on its own ---------------------------------------------------


def test_line_end_on_pieces_as_they_come():
    end = LineEnd(min_indent=4, newline_after_ms=None)
    assert end.feed("    x = 1", 0.0) == ("    x = 1", False)  # the first line: never checked
    assert end.feed("\n  ", 0.0) == ("\n  ", False)  # (undecided: the indentation stays)
    assert end.feed("  y\n", 0.0) == ("  y\n", False)  # 4: kept
    assert end.feed("\t\t", 0.0) == ("\t\t", False)
    assert end.feed("z", 0.0) == ("", True)  # 2 < 4: cut before its first other character
    timed = LineEnd(min_indent=0, newline_after_ms=100)
    assert timed.feed("a\n", 0.05) == ("a\n", False)
    assert timed.feed("b", 0.2) == ("b", False)  # late, but no newline
    assert timed.feed("c\nd", 0.2) == ("c\nd", True)  # the token is kept whole


def test_a_choice_ended_by_the_indentation_finishes_with_length(tok):
    params = SamplingParams(max_tokens=32, min_indent=2)
    choice = ChoiceState(0, [], params, tok, frozenset())
    ids = tok.encode("ab\n  cd\n ef\nxyz", False)
    text = "".join(choice.feed([t], None) for t in ids)
    assert (text, choice.text, choice.finish_reason) == ("ab\n  cd\n ", "ab\n  cd\n ", "length")
    assert choice.ended_early and len(choice.token_ids) < len(ids)


def test_post_sampling_probs_are_the_distribution_drawn_from(http):
    """With top-k 2, the drawn distribution is the model's two likeliest, renormalized: the
    oracle is /completion's own model logprobs of the same seeded request; greedy, the token
    alone at 1; on /v1 the same, in OpenAI's shape."""
    import math

    body = {"prompt": "x = ", "n_predict": 4, "n_probs": 2, "ignore_eos": True, "seed": 3,
            "temperature": 1.0, "top_k": 2, "samplers": ["top_k"]}  # fmt: skip
    model = ok(http.post("/completion", json=body))
    drawn = ok(http.post("/completion", json={**body, "post_sampling_probs": True}))
    assert drawn["content"] == model["content"]  # (the same draws)
    assert drawn["generation_settings"]["post_sampling_probs"] is True
    for m, d in zip(model["completion_probabilities"], drawn["completion_probabilities"],
                    strict=True):  # fmt: skip
        top = {e["id"]: math.exp(e["logprob"]) for e in m["top_logprobs"]}
        want = {t: p / sum(top.values()) for t, p in top.items()}
        assert {e["id"]: pytest.approx(e["prob"], abs=1e-5) for e in d["top_probs"]} == want
        assert d["id"] == m["id"] and d["prob"] == pytest.approx(want[d["id"]], abs=1e-5)
        assert "logprob" not in d and "top_logprobs" not in d
    greedy = ok(http.post("/completion", json={**body, "temperature": 0, "post_sampling_probs": True,
                                               "samplers": ["temperature"]}))  # fmt: skip
    for d in greedy["completion_probabilities"]:
        assert d["prob"] == 1.0 and [e["id"] for e in d["top_probs"]] == [d["id"]]
    chat = ok(http.post("/v1/chat/completions", json={
        "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "logprobs": True,
        "top_logprobs": 2, "temperature": 0, "ignore_eos": True, "post_sampling_probs": True}))  # fmt: skip
    for c in chat["choices"][0]["logprobs"]["content"]:
        assert c["logprob"] == 0.0 and [t["token"] for t in c["top_logprobs"]] == [c["token"]]
