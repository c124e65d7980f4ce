"""llama.cpp's native endpoints (roseinfer/server/llamacpp.py) through the real HTTP server, as
llama.cpp's own clients call them: POST /completion answers in llama.cpp's shape what
/v1/completions answers for the same request (greedy text, logprobs), each of its own fields
acts (prompt forms, `n_probs`, `logit_bias` forms, `return_tokens`, `response_fields`,
streaming, `timings_per_token`), its no-ops change nothing and the rest of the table refuses;
GET /props, /apply-template, /tokenize's `content` form, and the 501s of /slots and POST /props.
One in-process server over the tiny random llama (`tiny_server` in conftest.py)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import torch

from roseinfer.server import fields as F
from roseinfer.server.llamacpp_forms import ALIASES

PROMPT = "The quick brown fox"
GREEDY = {"temperature": 0, "ignore_eos": True}
RESULT_KEYS = {
    "index", "content", "tokens", "id_slot", "stop", "model", "tokens_predicted",
    "tokens_evaluated", "generation_settings", "prompt", "has_new_line", "truncated",
    "stop_type", "stopping_word", "tokens_cached", "timings",
}  # fmt: skip


@pytest.fixture(scope="module")
def served(tiny_server):
    app, url = tiny_server
    with httpx.Client(base_url=url, timeout=60) as c:
        yield c, app.state.client.engine


@pytest.fixture(scope="module")
def http(served):
    return served[0]


def completion(http: httpx.Client, status: int = 200, path: str = "/completion", **body):
    r = http.post(path, json=body)
    assert r.status_code == status, r.text
    return r.json()


def v1_text(http: httpx.Client, **body) -> dict:
    r = http.post("/v1/completions", json=body)
    assert r.status_code == 200, r.text
    return r.json()["choices"][0]


def events(http: httpx.Client, **body) -> list[dict]:
    """The `data:` events of a streamed /completion, in order (no `[DONE]` is sent)."""
    with http.stream("POST", "/completion", json={**body, "stream": True}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in r.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines), lines
    assert lines[-1] != "data: [DONE]"
    return [json.loads(line[6:]) for line in lines]


def test_a_completion_is_v1s_in_llamacpps_shape(served):
    http, engine = served
    out = completion(http, prompt=PROMPT, n_predict=7, **GREEDY)
    assert set(out) == RESULT_KEYS
    assert out["content"] == v1_text(http, prompt=PROMPT, max_tokens=7, **GREEDY)["text"]
    ids = engine.tokenizer.encode(PROMPT)
    assert (out["tokens_predicted"], out["tokens_evaluated"]) == (7, len(ids))
    assert (out["stop"], out["stop_type"], out["stopping_word"]) == (True, "limit", "")
    assert out["tokens"] == [] and out["prompt"] == PROMPT and out["truncated"] is False
    assert out["tokens_cached"] == len(engine.tokenizer.encode(PROMPT)) + 7
    assert out["model"] == engine.model_name and out["has_new_line"] == ("\n" in out["content"])
    settings = out["generation_settings"]
    assert (settings["n_predict"], settings["temperature"], settings["ignore_eos"]) == (7, 0, True)
    timings = out["timings"]
    assert timings["predicted_n"] == 7 and timings["prompt_n"] + timings["cache_n"] == len(ids)
    assert timings["prompt_ms"] > 0 and timings["predicted_per_second"] > 0
    # llama.cpp's other names of the output limit, and its /completions alias
    for name in ("max_tokens", "max_completion_tokens"):
        assert completion(http, prompt=PROMPT, **{name: 7}, **GREEDY)["content"] == out["content"]
    assert completion(http, path="/completions", prompt=PROMPT, n_predict=7,
                      **GREEDY)["content"] == out["content"]  # fmt: skip
    err = completion(http, 400, prompt=PROMPT, n_predict=3, max_tokens=4)["error"]
    assert err["param"] in ("n_predict", "max_tokens")
    err = completion(http, 400, prompt=PROMPT, n_predict=-2)["error"]
    assert err["param"] == "n_predict" and "-1" in err["message"]


def test_stop_words_eos_and_the_default_limit(served):
    http, engine = served
    full = completion(http, prompt=PROMPT, n_predict=10, **GREEDY)["content"]
    stop = full[len(full) // 2 : len(full) // 2 + 2]
    out = completion(http, prompt=PROMPT, n_predict=10, stop=[stop], n_probs=1,
                     return_tokens=True, **GREEDY)  # fmt: skip
    assert (out["stop_type"], out["stopping_word"]) == ("word", stop)
    assert out["content"] == full[: full.index(stop)]
    # the probabilities are those of the tokens the content holds whole, not the stop word's
    probs = out["completion_probabilities"]
    held = engine.tokenizer.decode([p["id"] for p in probs])
    assert (
        out["content"].startswith(held) and [p["id"] for p in probs] == out["tokens"][: len(probs)]
    )
    longer = engine.tokenizer.decode(out["tokens"][: len(probs) + 1])
    assert not out["content"].startswith(longer)  # the next token reaches into the stop word
    assert len(probs) < len(out["tokens"]) == out["tokens_predicted"]
    eos = engine.tokenizer.eos_token_id
    out = completion(http, prompt=PROMPT, n_predict=10, temperature=0, logit_bias=[[eos, 100]])
    assert (out["stop_type"], out["content"], out["tokens_predicted"]) == ("eos", "", 1)
    # n_predict left out: what the context leaves (llama.cpp's -1)
    n_ctx = http.get("/props").json()["default_generation_settings"]["n_ctx"]
    out = completion(http, prompt=[5] * (n_ctx - 3), **GREEDY)
    assert (out["tokens_predicted"], out["stop_type"], out["truncated"]) == (3, "limit", True)
    assert out["tokens_cached"] == n_ctx  # llama.cpp's: the prompt's and the output's tokens
    out = completion(http, prompt=[5] * (n_ctx - 3), n_predict=2, **GREEDY)
    assert (out["stop_type"], out["truncated"]) == ("limit", False)
    err = completion(http, 400, prompt=[5] * (n_ctx + 1), n_predict=1)["error"]
    assert err["param"] == "prompt"


def test_n_predict_0_evaluates_the_prompt_into_the_cache(served):
    """llama.cpp's cache warm-up: the prompt computed, nothing answered; a request after it
    finds the prompt's full blocks in the prefix cache."""
    http, _ = served
    prompt = "A long shared system prompt, " * 8 + "then the question"
    out = completion(http, prompt=prompt, n_predict=0, n_probs=2, return_tokens=True)
    assert (out["content"], out["tokens"], out["tokens_predicted"]) == ("", [], 0)
    assert (out["stop_type"], out["generation_settings"]["n_predict"]) == ("limit", 0)
    assert out["tokens_cached"] == out["tokens_evaluated"] and out["timings"]["predicted_n"] == 0
    assert out["completion_probabilities"] == []
    after = completion(http, prompt=prompt, n_predict=2, **GREEDY)
    assert after["timings"]["cache_n"] >= 16  # (blocks of 16 tokens)
    (only,) = events(http, prompt=prompt, max_tokens=0)
    assert (only["stop"], only["tokens_predicted"]) == (True, 0)
    for bad in ({"n_predict": 0, "max_tokens": 5}, {"n_predict": False}):
        assert completion(http, 400, prompt=prompt, **bad)["error"]["param"] in bad


def test_fields_left_out_take_llamacpps_defaults(served):
    """/completion's temperature, top-k, top-p and min-p left out (or null) are llama.cpp's
    (0.8, 40, 0.95, 0.05: the tiny model's file sets none), not /v1's."""
    http, _ = served
    params = http.get("/props").json()["default_generation_settings"]["params"]
    llamacpp = {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "min_p": 0.05}
    assert {k: params[k] for k in llamacpp} == llamacpp
    body = {"prompt": PROMPT, "n_predict": 12, "ignore_eos": True, "n": 4, "seed": 11}
    left_out = completion(http, **body)
    assert {k: left_out[0]["generation_settings"][k] for k in llamacpp} == llamacpp
    texts = [r["content"] for r in left_out]
    assert [r["content"] for r in completion(http, **body, **llamacpp)] == texts
    assert [r["content"] for r in completion(http, **body, **dict.fromkeys(llamacpp))] == texts
    openai = {"temperature": 1, "top_k": 0, "top_p": 1, "min_p": 0}
    assert [r["content"] for r in completion(http, **body, **openai)] != texts
    # /v1 keeps OpenAI's
    v1 = {"prompt": PROMPT, "max_tokens": 12, "ignore_eos": True, "n": 4, "seed": 11}
    plain = http.post("/v1/completions", json=v1).json()["choices"]
    written = http.post("/v1/completions", json={**v1, **openai}).json()["choices"]
    assert [c["text"] for c in plain] == [c["text"] for c in written]


def test_n_predict_0_without_a_prefix_cache_is_a_400(served):
    """The warm-up would leave nothing behind: refused, naming the limit sent."""
    from roseinfer.sampling_params import SamplingDefaults
    from roseinfer.server.errors import APIError
    from roseinfer.server.llamacpp import completion_request, llamacpp_defaults, native_fields

    _, engine = served
    defaults = llamacpp_defaults(SamplingDefaults())
    for limit in ("n_predict", "max_tokens"):
        data = {"prompt": PROMPT, limit: 0}
        with pytest.raises(APIError) as refused:
            completion_request(data, native_fields(data), engine.tokenizer, 256, False, defaults)
        assert (refused.value.status, refused.value.param) == (400, limit)
        body, _, opts = completion_request(data, native_fields(data), engine.tokenizer, 256,
                                           True, defaults)  # fmt: skip
        assert opts.prompt_only and getattr(body, limit) == 1  # run to one token, left out


def test_prompt_forms_and_several_results(served):
    http, engine = served
    tok = engine.tokenizer
    ids = tok.encode(PROMPT)
    one = completion(http, prompt=PROMPT, n_predict=4, **GREEDY)
    assert completion(http, prompt=ids, n_predict=4, **GREEDY)["content"] == one["content"]
    # a list mixing ids and text is one prompt, its strings tokenized in place
    head, tail = PROMPT.split(" ", 1)
    mixed = [*tok.encode(head), " " + tail]
    expected = [*tok.encode(head), *tok.encode(" " + tail, add_special_tokens=False)]
    out = completion(http, prompt=mixed, n_predict=4, **GREEDY)
    assert out["content"] == completion(http, prompt=expected, n_predict=4, **GREEDY)["content"]
    # a list of strings and id lists: several prompts, a list of results in order
    many = completion(http, prompt=[PROMPT, [7, 8, 9], "Hello"], n_predict=4, **GREEDY)
    assert [r["index"] for r in many] == [0, 1, 2] and many[0]["content"] == one["content"]
    assert many[1]["tokens_evaluated"] == 3
    two = completion(http, prompt=PROMPT, n_predict=4, n=2, temperature=1, seed=7)
    assert [r["index"] for r in two] == [0, 1] and all(r["tokens_predicted"] for r in two)
    again = completion(http, prompt=PROMPT, n_predict=4, n_cmpl=2, temperature=1, seed=7)
    assert [r["content"] for r in again] == [r["content"] for r in two]  # llama.cpp's name of n
    for bad in ([], "", [[]], [{"prompt_string": "x", "multimodal_data": ["aGk="]}], [1.5]):
        err = completion(http, 400, prompt=bad, n_predict=2)["error"]
        assert err["param"] == "prompt", (bad, err)
    assert completion(http, 400, n_predict=2)["error"]["param"] == "prompt"
    err = completion(http, 400, prompt=["x"] * 2049, n_predict=1)["error"]  # before tokenizing
    assert err["param"] == "prompt" and "2049 prompts" in err["message"]
    assert completion(http, 404, prompt=PROMPT, model="nope")["error"]["param"] == "model"


def test_n_probs_are_v1s_logprobs(served):
    http, engine = served
    out = completion(http, prompt=PROMPT, n_predict=5, n_probs=3, return_tokens=True, **GREEDY)
    probs = out["completion_probabilities"]
    assert [p["id"] for p in probs] == out["tokens"] and len(out["tokens"]) == 5
    v1 = v1_text(http, prompt=PROMPT, max_tokens=5, logprobs=3, **GREEDY)["logprobs"]
    tok = engine.tokenizer
    for p, logprob, top in zip(probs, v1["token_logprobs"], v1["top_logprobs"], strict=True):
        assert p["logprob"] == pytest.approx(logprob, abs=1e-5)
        assert p["token"] == tok.token_text(p["id"]) and bytes(p["bytes"]) == tok.token_bytes(
            p["id"]
        )
        assert len(p["top_logprobs"]) == 3
        assert p["top_logprobs"][0]["logprob"] == pytest.approx(max(top.values()), abs=1e-5)
        assert p["top_logprobs"][0]["id"] == p["id"]  # greedy: the likeliest
    assert tok.decode(out["tokens"]) == out["content"]
    # llama.cpp's alias, and its limits
    alias = completion(http, prompt=PROMPT, n_predict=5, logprobs=3, **GREEDY)
    assert alias["completion_probabilities"] == probs
    assert completion(http, 400, prompt=PROMPT, n_probs=2, logprobs=3)["error"]["param"] == (
        "logprobs"
    )
    assert completion(http, 400, prompt=PROMPT, n_probs=21)["error"]["param"] == "n_probs"
    assert "completion_probabilities" not in completion(http, prompt=PROMPT, n_predict=2, n_probs=0)


def test_logit_bias_forms(served):
    http, engine = served
    tok = engine.tokenizer
    first = completion(http, prompt=PROMPT, n_predict=1, return_tokens=True, **GREEDY)["tokens"][0]

    def first_token(bias) -> int:
        out = completion(http, prompt=PROMPT, n_predict=1, return_tokens=True, logit_bias=bias,
                         **GREEDY)  # fmt: skip
        return out["tokens"][0]

    # false: never drawn while another may be (a bias of -100, as the settings say)
    assert first_token([[first, False]]) != first
    assert first_token({str(first): False}) != first
    assert first_token([[first, -100]]) == first_token({str(first): -100}) != first
    assert first_token([[first, True]]) == first  # true asks for nothing, as llama.cpp's
    out = completion(http, prompt=PROMPT, n_predict=1, logit_bias=[[first, False]], **GREEDY)
    assert out["generation_settings"]["logit_bias"] == [{"bias": -100.0, "token": first}]
    # a string: each of its tokens gets the bias
    word = tok.decode([first])
    assert tok.encode(word, add_special_tokens=False) == [first]
    assert first_token([[word, False]]) != first and first_token({word: False}) != first
    other = (first + 1) % tok.vocab_size
    assert first_token([[other, 100]]) == other == first_token({str(other): 100})
    assert first_token({f" {other}": 100}) == other  # a key that reads as an integer: an id
    # in a pair a string is text, digits too (llama.cpp's): its tokens get the bias
    digits = str(other)
    (digit_token, *_) = tok.encode(digits, add_special_tokens=False)
    assert first_token([[digits, 100]]) == digit_token
    for bad in (
        [[first]],
        [[first, 1, 2]],
        [[None, 1]],
        [[first, 101]],
        [[first, 1], [first, 2]],
        [[first, "x"]],
        {"-1": 5},
        [[-3, 1]],
        [[tok.vocab_size, 1]],
    ):
        err = completion(http, 400, prompt=PROMPT, logit_bias=bad)["error"]
        assert err["param"].startswith("logit_bias"), (bad, err)


def test_response_fields_and_return_tokens(http):
    out = completion(http, prompt=PROMPT, n_predict=3, return_tokens=True,
                     response_fields=["content", "tokens", "generation_settings/n_predict",
                                      "timings/predicted_n", "nothing/here"], **GREEDY)  # fmt: skip
    assert set(out) == {"content", "tokens", "generation_settings/n_predict", "timings/predicted_n"}
    assert out["generation_settings/n_predict"] == out["timings/predicted_n"] == 3
    assert len(out["tokens"]) == 3


def test_streamed_chunks_add_up_to_the_completion(http):
    whole = completion(http, prompt=PROMPT, n_predict=6, n_probs=2, return_tokens=True, **GREEDY)
    chunks = events(http, prompt=PROMPT, n_predict=6, n_probs=2, **GREEDY)
    *parts, last = chunks
    assert all(c["stop"] is False for c in parts) and last["stop"] is True
    assert "".join(c["content"] for c in parts) == whole["content"]
    assert [t for c in parts for t in c["tokens"]] == whole["tokens"]
    probs = [p for c in parts for p in c["completion_probabilities"]]
    assert probs == whole["completion_probabilities"]
    assert (last["content"], last["tokens"], last["stop_type"]) == ("", [], "limit")
    assert "completion_probabilities" not in last and last["generation_settings"]["stream"]
    assert all("timings" not in c for c in parts)
    timed = events(http, prompt=PROMPT, n_predict=3, timings_per_token=True, **GREEDY)
    assert all(c["timings"]["predicted_n"] == c["tokens_predicted"] for c in timed)
    # several prompts interleave, each choice's result closes it; response_fields: the last
    many = events(http, prompt=[PROMPT, "Hello"], n_predict=3, response_fields=["index"],
                  **GREEDY)  # fmt: skip
    assert sorted(c["index"] for c in many if c == {"index": c["index"]}) == [0, 1]


def test_a_failed_generation_fails_its_request_alone(http, monkeypatch):
    """Logits that are not finite for the requests of 13 tokens: each fails, streamed (an
    `{"error"}` event, then the end) or not (its error), and a request beside it is whole."""
    from roseinfer.engine.model_runner import ModelRunner

    real = ModelRunner.sample

    def sample(self, seqs, logits, fresh_logits=None):
        logits = logits.clone()
        for i, seq in enumerate(seqs):
            if seq.params.max_tokens == 13:
                logits[i, 7] = float("nan")
        return real(self, seqs, logits, fresh_logits)

    plain = completion(http, prompt=PROMPT, n_predict=40, **GREEDY)["content"]
    monkeypatch.setattr(ModelRunner, "sample", sample)
    with ThreadPoolExecutor(3) as pool:
        beside = pool.submit(completion, http, prompt=PROMPT, n_predict=40, **GREEDY)
        streamed = pool.submit(events, http, prompt=PROMPT, n_predict=13, **GREEDY)
        whole = pool.submit(http.post, "/completion",
                            json={"prompt": [PROMPT, "Hi"], "n_predict": 13, **GREEDY})  # fmt: skip
        assert beside.result()["content"] == plain
    assert "not finite" in streamed.result()[-1]["error"]["message"]
    r = whole.result()
    assert r.status_code == 500 and "not finite" in r.json()["error"]["message"]


def test_grammar_and_json_schema_hold_the_output(http):
    out = completion(http, prompt=PROMPT, n_predict=8, grammar='root ::= "yes" | "no"', **GREEDY)
    assert out["content"] in ("yes", "no")
    schema = {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"],
              "additionalProperties": False}  # fmt: skip
    out = completion(http, prompt=PROMPT, n_predict=20, json_schema=schema, temperature=0)
    assert isinstance(json.loads(out["content"])["a"], bool)


def test_no_ops_and_neutral_values_change_nothing(http):
    base = {"prompt": PROMPT, "n_predict": 6, **GREEDY}
    plain = completion(http, **base)["content"]
    body = dict(base)
    for spec in F.TABLE[F.LLAMACPP_COMPLETION].values():
        if spec.kind is F.Kind.HONOURED:
            continue
        assert spec.accepts is not None
        value = next((v for v in (0, 1, -1, False, True, "", "none", [], {}, 6, 0.5, "x")
                      if spec.accepts(v, body)), None)  # fmt: skip
        if value is not None:
            body[spec.name] = value
    assert len(body) > 30
    assert completion(http, **body)["content"] == plain
    assert completion(http, **{**body, "stream": False})["content"] == plain


def test_refused_and_unknown_fields_are_400s_naming_them(http):
    for field, value in (("mirostat", 2), ("typical_p", 0.5), ("post_sampling_probs", 1),
                         ("samplers", ["top_k", "mirostat"]), ("echo", True), ("suffix", "x"),
                         ("lora", [{"id": 0, "scale": 1}]), ("top_a", 0.1), ("typical", 0.9),
                         ("banned_strings", ["x"]), ("include_reasoning", False)):  # fmt: skip
        err = completion(http, 400, prompt=PROMPT, **{field: value})["error"]
        assert err["param"] == field, (field, err)


def test_xtc_acts_and_is_reported(http):
    """llama.cpp's XTC at probability 1: of three biased top choices only the least likely is
    left, whatever the seed (so never the argmax); `generation_settings` says it ran."""
    base = {"prompt": PROMPT, "n_predict": 1, "return_tokens": True, "temperature": 1.0,
            "logit_bias": [[10, 40], [11, 39.5], [12, 39]]}  # fmt: skip
    greedy = completion(http, **{**base, "temperature": 0})["tokens"][0]
    xtc = {"xtc_probability": 1, "xtc_threshold": 0.05}
    picks = {completion(http, **base, **xtc, seed=seed)["tokens"][0] for seed in range(6)}
    assert len(picks) == 1 and picks <= {10, 11, 12} and greedy not in picks, (picks, greedy)
    settings = completion(http, **base, **xtc, seed=0)["generation_settings"]
    assert (settings["xtc_probability"], settings["xtc_threshold"]) == (1, 0.05)
    assert "xtc" in settings["samplers"]
    # /v1 too (vLLM's order: the temperature, 1 here, first); above 0.5 XTC is off
    v1 = {"prompt": PROMPT, "max_tokens": 1, "temperature": 1.0, "seed": 0,
          "return_token_ids": True, "logit_bias": {"10": 40, "11": 39.5, "12": 39}}  # fmt: skip

    def first_token(**extra) -> int:
        r = http.post("/v1/completions", json={**v1, **extra})
        assert r.status_code == 200, r.text
        return r.json()["choices"][0]["token_ids"][0]

    assert {first_token(**xtc)} == picks
    assert first_token(xtc_probability=1, xtc_threshold=0.6) == first_token()


def test_dry_lowers_the_token_that_would_repeat_and_is_reported(http):
    """llama.cpp's DRY: the prompt's tokens end by repeating "10 11" and 12 followed that run
    before, so with DRY on 12 (the argmax by its bias) loses to 13, greedy too; a breaker
    that 12's text holds keeps it; `generation_settings` and `samplers` say DRY ran."""
    body = {"prompt": [5, 10, 11, 12, 6, 10, 11], "n_predict": 1, "return_tokens": True,
            "temperature": 0, "logit_bias": [[12, 40], [13, 38]]}  # fmt: skip
    dry = {"dry_multiplier": 6.0, "dry_base": 2.0, "dry_allowed_length": 2,
           "dry_sequence_breakers": []}  # fmt: skip
    assert completion(http, **body)["tokens"] == [12]
    out = completion(http, **body, **dry)
    assert out["tokens"] == [13]  # 12 lowered by 6 * 2 ** 0
    settings = out["generation_settings"]
    assert (settings["dry_multiplier"], settings["dry_base"], settings["dry_allowed_length"],
            settings["dry_penalty_last_n"], settings["dry_sequence_breakers"]) == (6, 2, 2, -1, [])  # fmt: skip
    assert settings["samplers"][:2] == ["penalties", "dry"]
    assert completion(http, **body)["generation_settings"]["dry_multiplier"] == 0
    # a window too short to hold the earlier run, or none: nothing lowered
    assert completion(http, **body, **dry, dry_penalty_last_n=4)["tokens"] == [12]
    assert completion(http, **body, **dry, dry_penalty_last_n=0)["tokens"] == [12]
    text = http.post("/detokenize", json={"tokens": [12]}).json()["content"]
    assert completion(http, **body, **{**dry, "dry_sequence_breakers": [text]})["tokens"] == [12]
    # /v1 too, with a run of 3 (2 ** 1)
    v1 = {"prompt": [5, 9, 10, 11, 12, 6, 9, 10, 11], "max_tokens": 1, "temperature": 0,
          "return_token_ids": True, "logit_bias": {"12": 40, "13": 35}}  # fmt: skip
    assert v1_text(http, **v1)["token_ids"] == [12]
    assert v1_text(http, **v1, **dry)["token_ids"] == [13]  # 12 lowered by 12 > 40 - 35
    assert v1_text(http, **v1, **{**dry, "dry_multiplier": 1.0})["token_ids"] == [12]  # 2 < 5


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"dry_base": 0.5}, "dry_base"),
        ({"dry_allowed_length": -1}, "dry_allowed_length"),
        ({"dry_penalty_last_n": -2}, "dry_penalty_last_n"),
        ({"dry_sequence_breakers": ["\n", ""]}, "dry_sequence_breakers"),
        ({"dry_multiplier": -1}, "dry_multiplier"),
        ({"samplers": ["top_k", "dry"], "top_k": 5}, "samplers"),
        ({"samplers": ["temperature", "dry"], "temperature": 0.7}, "samplers"),
        ({"samplers": ["dry", "penalties"], "repeat_penalty": 1.1}, "samplers"),
    ],
)
def test_dry_values_and_orders_it_cannot_run_are_400s(http, extra, param):
    body = {"prompt": PROMPT, "n_predict": 1, "dry_multiplier": 0.8, **extra}
    err = completion(http, status=400, **body)["error"]
    assert err["param"] == param, err


def test_dry_before_penalties_that_only_subtract_is_the_same_chain(http):
    body = {"prompt": PROMPT, "n_predict": 2, "dry_multiplier": 0.8, "presence_penalty": 0.5,
            "temperature": 0, "return_tokens": True}  # fmt: skip
    a = completion(http, **body, samplers=["dry", "penalties", "temperature"])
    b = completion(http, **body, samplers=["penalties", "dry", "temperature"])
    assert a["tokens"] == b["tokens"]


# SillyTavern's "llama.cpp" text-completion body with its default settings (its
# `createTextGenGenerationData`, November 2026: its proxy forwards the whole object, other
# servers' names beside llama.cpp's; docs/bench/session64/clients/REPORT.md)
SILLYTAVERN = {
    "prompt": PROMPT, "max_new_tokens": 6, "max_tokens": 6, "temperature": 0.7, "top_p": 0.5,
    "typical_p": 1, "typical": 1, "min_p": 0, "repetition_penalty": 1.2, "frequency_penalty": 0,
    "presence_penalty": 0, "top_k": 40, "skew": 0, "min_tokens": 0, "add_bos_token": True,
    "smoothing_factor": 0.0, "smoothing_curve": 1.0, "dry_allowed_length": 2,
    "dry_multiplier": 0.0, "dry_base": 1.75, "dry_sequence_breakers": ["\n", ":", "\"", "*"],
    "dry_penalty_last_n": 0, "max_tokens_second": 0,
    "samplers": ["penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc",
                 "temperature", "adaptive_p"],
    "stopping_strings": ["\nUser:"], "stop": ["\nUser:"], "truncation_length": 8192,
    "ban_eos_token": False, "skip_special_tokens": True, "include_reasoning": True, "top_a": 0,
    "tfs": 1, "mirostat_mode": 0, "mirostat_tau": 5, "mirostat_eta": 0.1,
    "custom_token_bans": "", "banned_strings": [], "api_type": "llamacpp",
    "api_server": "http://127.0.0.1:5001", "xtc_threshold": 0.1, "xtc_probability": 0,
    "nsigma": 0.0, "top_n_sigma": 0.0, "min_keep": 0, "adaptive_target": -0.01,
    "adaptive_decay": 0.9, "n": 1, "rep_pen": 1.2, "rep_pen_range": 0,
    "repetition_penalty_range": 0, "guidance_scale": 1, "negative_prompt": "",
    "repeat_penalty": 1.2, "repeat_last_n": 0, "n_predict": 6, "num_predict": 6, "num_ctx": 8192,
    "mirostat": 0, "ignore_eos": False, "rep_pen_slope": 1, "logit_bias": [], "grammar": "",
    "cache_prompt": True, "seed": 3, "sampler_seed": 3,
}  # fmt: skip


def test_sillytaverns_body_is_served_its_other_names_read_as_llama_cpps(http):
    """Every field of SillyTavern's default body is taken (the other servers' names as their
    llama.cpp twins, which they must agree with; their own samplers at neutral values); an
    alias alone acts as its twin; ooba's truncation and token bans act."""
    full = completion(http, **SILLYTAVERN)
    twins = {k: v for k, v in SILLYTAVERN.items() if k not in ALIASES}
    for name in ("skew", "typical", "top_a", "api_type", "api_server", "rep_pen_slope"):
        twins.pop(name)  # (neutral, refused or no-ops: nothing to read)
    assert full["content"] == completion(http, **twins)["content"]
    for alias, value in (("max_new_tokens", 5), ("rep_pen", 1.3), ("sampler_seed", 4)):
        err = completion(http, 400, **{**SILLYTAVERN, alias: value})["error"]
        assert err["param"] == alias, err
    alone = completion(http, prompt=PROMPT, max_new_tokens=3, **GREEDY)
    assert alone["tokens_predicted"] == 3
    cut = completion(http, prompt=PROMPT, truncation_length=5, n_predict=3, **GREEDY)
    assert cut["tokens_evaluated"] == 2
    plain = completion(http, prompt=PROMPT, n_predict=1, return_tokens=True, **GREEDY)
    first = plain["tokens"][0]
    banned = completion(http, prompt=PROMPT, n_predict=1, return_tokens=True,
                        custom_token_bans=f"{first}, ", **GREEDY)  # fmt: skip
    assert banned["tokens"][0] != first
    err = completion(http, 400, prompt=PROMPT, custom_token_bans="1,x")["error"]
    assert err["param"] == "custom_token_bans"


def test_props_slots_and_apply_template(served):
    http, engine = served
    props = http.get("/props").json()
    settings = props["default_generation_settings"]
    assert settings["n_ctx"] == engine.max_total_tokens  # what a prompt and its output may hold
    assert settings["params"]["n_predict"] == -1  # the tiny model sets no output limit
    assert settings["params"]["samplers"] == [
        "penalties",
        "top_k",
        "top_p",
        "min_p",
        "temperature",
    ]  # (llama.cpp's default chain)
    assert props["total_slots"] == engine.config.max_num_seqs
    assert props["model_alias"] == engine.model_name
    assert props["chat_template"] == engine.tokenizer.hf.chat_template
    # llama.cpp's second names of the model list and the health check
    assert http.get("/models").json()["data"] == http.get("/v1/models").json()["data"]
    assert http.get("/v1/health").json() == {"status": "ok"}
    assert http.head("/v1/health").status_code == 200
    for method, path in (("GET", "/slots"), ("POST", "/props")):
        r = http.request(method, path)
        assert r.status_code == 501 and r.json()["error"]["type"] == "not_supported_error"
    messages = [{"role": "user", "content": "Hi there"}]
    prompt = http.post("/apply-template", json={"messages": messages}).json()["prompt"]
    assert prompt == engine.tokenizer.apply_chat_template(messages, True)  # the template's text
    ids = http.post("/tokenize", json={"messages": messages}).json()["tokens"]
    assert engine.tokenizer.encode(prompt, False) == ids  # the text whose tokens chat runs
    assert prompt.endswith(engine.tokenizer.apply_chat_template(messages, True)[-10:])
    # a last assistant message is prefilled (left open), as llama.cpp's, unless asked otherwise
    started = [*messages, {"role": "assistant", "content": "Once upon"}]
    prompt = http.post("/apply-template", json={"messages": started}).json()["prompt"]
    assert prompt.endswith("Once upon")
    asked = {"messages": started, "add_generation_prompt": True}
    turn = http.post("/apply-template", json=asked).json()["prompt"]
    assert turn.startswith(prompt) and turn.endswith(engine.tokenizer.apply_chat_template(
        messages, True)[-10:])  # fmt: skip
    r = http.post("/apply-template", json={"messages": messages, "return_token_strs": True})
    assert r.status_code == 400 and r.json()["error"]["param"] == "return_token_strs"
    r = http.post("/apply-template", json={"messages": messages, "chat_template": "x"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "chat_template"


def test_llamacpps_tokenize_and_detokenize(served):
    http, engine = served
    tok = engine.tokenizer
    text = "Hello world"
    out = http.post("/tokenize", json={"content": text}).json()
    assert out == {"tokens": tok.encode(text, add_special_tokens=False)}
    pieces = http.post("/tokenize", json={"content": text, "with_pieces": True}).json()["tokens"]
    assert [p["id"] for p in pieces] == out["tokens"]
    assert "".join(p["piece"] for p in pieces) == text
    special = tok.hf.eos_token
    assert http.post("/tokenize", json={"content": special}).json()["tokens"] == [tok.eos_token_id]
    split = http.post("/tokenize", json={"content": special, "parse_special": False}).json()
    assert split["tokens"] == tok.encode(special, False, split_special_tokens=True)
    assert tok.eos_token_id not in split["tokens"]
    mixed = http.post("/tokenize", json={"content": [5, "Hello"]}).json()["tokens"]
    assert mixed == [5, *tok.encode("Hello", add_special_tokens=False)]
    for content in ([-5], [5, "x", tok.vocab_size], [10**30]):
        for pieces in (False, True):
            r = http.post("/tokenize", json={"content": content, "with_pieces": pieces})
            assert r.status_code == 400, r.text
            assert r.json()["error"]["param"].startswith("content"), r.text
    r = http.post("/tokenize", json={"content": text, "add_special_tokens": True})
    assert r.status_code == 400 and r.json()["error"]["param"] == "add_special_tokens"
    back = http.post("/detokenize", json={"tokens": out["tokens"]}).json()
    assert back == {"prompt": text, "content": text}


def test_the_api_key_guards_the_native_endpoints(tiny_locked_server):
    from conftest import TINY_API_KEY

    _, url = tiny_locked_server
    with httpx.Client(base_url=url, timeout=60) as c:
        for method, path in (("POST", "/completion"), ("GET", "/props"), ("GET", "/models"),
                             ("POST", "/apply-template"), ("POST", "/embedding")):  # fmt: skip
            assert c.request(method, path, json={}).status_code == 401
        assert c.get("/v1/health").status_code == c.head("/v1/health").status_code == 200
        auth = {"Authorization": f"Bearer {TINY_API_KEY}"}
        r = c.post("/completion", json={"prompt": PROMPT, "n_predict": 2}, headers=auth)
        assert r.status_code == 200 and r.json()["tokens_predicted"] == 2


def test_llamacpps_embedding_is_v1s_vector_normalized_its_ways(http):
    """POST /embedding: `[{index, embedding: [vector]}]`, a vector per prompt, the one
    /v1/embeddings gives (its raw form), normalized as llama.cpp's `embd_normalize` says."""
    raw = http.post("/v1/embeddings", json={"input": [PROMPT, "Hello"], "normalize": False})
    raw_vectors = [torch.tensor(d["embedding"]) for d in raw.json()["data"]]
    out = completion(http, path="/embedding", content=[PROMPT, "Hello"], embd_normalize=-1)
    assert [r["index"] for r in out] == [0, 1] and all(len(r["embedding"]) == 1 for r in out)
    for r, want in zip(out, raw_vectors, strict=True):
        assert torch.allclose(torch.tensor(r["embedding"][0]), want, atol=1e-5)
    v = raw_vectors[0].double()
    for norm, size in ((2, v.norm()), (1, v.abs().sum()), (0, v.abs().max() / 32760),
                       (3, v.abs().pow(3).sum() ** (1 / 3))):  # fmt: skip
        (r,) = completion(http, path="/embeddings", input=PROMPT, embd_normalize=norm)
        assert torch.allclose(torch.tensor(r["embedding"][0]).double(), v / size, rtol=1e-4,
                              atol=1e-6), norm  # fmt: skip
    for p in (300, 2**31 - 1):  # a large p: the largest magnitude (no overflow to zeros)
        (r,) = completion(http, path="/embedding", content=PROMPT, embd_normalize=p)
        got = torch.tensor(r["embedding"][0]).double()
        assert got.abs().max() == pytest.approx(1, rel=1e-2) and got.abs().max() <= 1 + 1e-6
    (default,) = completion(http, path="/embedding", content=PROMPT)
    assert torch.tensor(default["embedding"][0]).norm() == pytest.approx(1, abs=1e-5)
    ids = http.post("/tokenize", json={"content": PROMPT}).json()["tokens"]
    (mixed,) = completion(http, path="/embedding", content=[*ids[:2], "x"], embd_normalize=-1)
    (same,) = completion(http, path="/embedding", content=[*ids[:2], *http.post(
        "/tokenize", json={"content": "x"}).json()["tokens"]], embd_normalize=-1)  # fmt: skip
    assert mixed["embedding"] == same["embedding"]
    n_ctx = http.get("/props").json()["default_generation_settings"]["n_ctx"]
    for bad, param in (({}, "input"), ({"content": "x", "input": "y"}, "content"),
                       ({"content": ""}, "content"), ({"input": [[]]}, "input"),
                       ({"content": [5] * (n_ctx + 1)}, "content"),
                       ({"content": "x", "embd_normalize": -2}, "embd_normalize"),
                       ({"content": "x", "embd_normalize": 10**29}, "embd_normalize"),
                       ({"content": "x", "pooling": "mean"}, "pooling"),
                       ({"content": ["x"] * 2049}, "content")):  # fmt: skip
        err = completion(http, 400, path="/embedding", **bad)["error"]
        assert err["param"] == param, (bad, err)
    assert (
        completion(http, 404, path="/embedding", content="x", model="nope")["error"]["param"]
        == "model"
    )
