"""Fill in the middle: llama.cpp's POST /infill and OpenAI's `suffix` on /v1/completions, over a
tiny random qwen2 whose vocabulary has Qwen-Coder's FIM tokens. The oracle is llama.cpp's
prompt, built here from its rule (`[REP] project [SEP] file ... [PRE] prefix prompt [SUF] suffix
[MID]`) and run as token ids through /completion: the fill must be that request, token for
token; a model without FIM tokens is llama.cpp's 501 (and a 400 naming `suffix`)."""

from __future__ import annotations

import httpx
import pytest
from conftest import FIM, serve_in_process

from roseinfer.tokenizer import Tokenizer

GREEDY = {"temperature": 0, "n_predict": 6, "ignore_eos": True}


@pytest.fixture(scope="module")
def served(fim_model):
    with serve_in_process(fim_model, num_kv_blocks=320) as (app, url):  # (the whole context)
        yield app, url


@pytest.fixture(scope="module")
def tok(fim_model):
    return Tokenizer.from_pretrained(fim_model)


def ok(r: httpx.Response) -> dict:
    assert r.status_code == 200, r.text
    return r.json()


def ids_of(tok: Tokenizer) -> dict[str, int]:
    vocab = tok.hf.get_vocab()
    return {name: vocab[text] for name, text in zip(("pre", "suf", "mid", "pad", "rep", "sep"),
                                                    FIM, strict=True)}  # fmt: skip


def plain(tok: Tokenizer, text: str) -> list[int]:
    return tok.encode(text, False, split_special_tokens=True)


def project(tok: Tokenizer, files: list[tuple[str, str]]) -> list[int]:
    """llama.cpp's lines before a fill: the project's, each file's, the current file's."""
    t = ids_of(tok)
    out = [t["rep"], *plain(tok, "myproject\n")]
    for name, text in files:
        out += [t["sep"], *plain(tok, name + "\n"), *plain(tok, text)]
    return out + [t["sep"], *plain(tok, "filename\n")]


def reference_text(http: httpx.Client, tok: Tokenizer, ids: list[int], n: int) -> str:
    """The greedy text of `ids` as a plain prompt, ended where a fill ends: at the model's end
    tokens and its FIM pad, repo and file-separator tokens."""
    stops = [ids_of(tok)[name] for name in ("pad", "rep", "sep")]
    answer = ok(http.post("/v1/completions", json={"prompt": ids, "max_tokens": n,
                                                   "temperature": 0, "ignore_eos": True,
                                                   "stop_token_ids": stops}))  # fmt: skip
    return answer["choices"][0]["text"]


def test_infill_runs_llama_cpps_prompt(http, tok):
    t = ids_of(tok)
    prefix, suffix, typed = "def add(a, b):\n    ", "\n\nprint(add(1, 2))\n", "return"
    fill = [t["pre"], *plain(tok, prefix), *tok.encode(typed, False), t["suf"],
            *plain(tok, suffix), t["mid"]]  # fmt: skip
    # the project's lines come whether files are sent or not, as llama.cpp's
    for files in ([], [("util.py", "X = 1\n"), ("tmp", "Y = 2\n")]):
        expected = project(tok, files) + fill
        extra = [{"filename": name, "text": text, "time": 5} if name != "tmp" else {"text": text}
                 for name, text in files]  # (llama.vim's `time`: read by none)  # fmt: skip
        answer = ok(http.post("/infill", json={
            "input_prefix": prefix, "input_suffix": suffix, "prompt": typed, "input_extra": extra,
            "t_max_prompt_ms": 500, **GREEDY}))  # fmt: skip
        assert answer["tokens_evaluated"] == len(expected), answer["prompt"]
        assert answer["content"] == reference_text(http, tok, expected, 6)


def test_a_special_tokens_text_in_the_code_is_text_and_long_code_is_cut(http, tok):
    t = ids_of(tok)
    prefix = "x = '<|fim_middle|>'\n" + "y = 1\n" * 700  # past 3/4 of the 2,048-token batch
    suffix = "z = 2\n" * 300
    p_ids, s_ids = plain(tok, prefix), plain(tok, suffix)
    keep_prefix, keep_suffix = 3 * (2048 // 4), 2048 // 4 - 2
    assert t["mid"] not in p_ids and len(p_ids) > keep_prefix and len(s_ids) > keep_suffix
    expected = project(tok, []) + [t["pre"], *p_ids[-keep_prefix:], t["suf"],
                                   *s_ids[:keep_suffix], t["mid"]]  # fmt: skip
    fill = ok(http.post("/infill", json={"input_prefix": prefix, "input_suffix": suffix,
                                         "temperature": 0, "n_predict": 1}))  # fmt: skip
    assert fill["tokens_evaluated"] == len(expected)
    assert fill["content"] == reference_text(http, tok, expected, 1)
    # the project's lines are cut first where the context is small: fim.py's budgets
    from roseinfer.fim import fim_tokens, infill_prompt

    small = infill_prompt(tok, fim_tokens(tok), prefix, suffix, [("a.py", "A = 1\n")], "", 256, 6)
    assert len(small) <= 256 - 6 and t["rep"] not in small


def test_a_fill_ends_at_the_pad_token(http, tok):
    pad = ids_of(tok)["pad"]
    fill = ok(http.post("/infill", json={"input_prefix": "a", "input_suffix": "b",
                                         "n_predict": 8, "logit_bias": [[pad, 100]]}))  # fmt: skip
    assert fill["content"] == "" and fill["tokens_predicted"] == 1 and fill["stop_type"] == "eos"


def test_suffix_on_v1_completions_is_the_same_fill(http, tok):
    t = ids_of(tok)
    body = {"prompt": "def add(a, b):\n    return", "suffix": "\n\nprint(add(1, 2))\n",
            "max_tokens": 6, "temperature": 0, "ignore_eos": True}  # fmt: skip
    expected = project(tok, []) + [t["pre"], *plain(tok, body["prompt"]), t["suf"],
                                   *plain(tok, body["suffix"]), t["mid"]]  # fmt: skip
    answer = ok(http.post("/v1/completions", json=body))
    assert answer["choices"][0]["text"] == reference_text(http, tok, expected, 6)
    assert answer["usage"]["prompt_tokens"] == len(expected)
    two = ok(http.post("/v1/completions", json={**body, "prompt": [body["prompt"], "x = "]}))
    assert two["choices"][0]["text"] == answer["choices"][0]["text"]
    empty = ok(http.post("/v1/completions", json={**body, "suffix": ""}))  # asks for nothing
    plain_answer = ok(http.post("/v1/completions", json={**body, "suffix": None}))
    assert empty["choices"] == plain_answer["choices"]


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/completions", {"prompt": "a", "suffix": "b", "echo": True}, "echo"),
        ("/v1/completions", {"prompt": [1, 2], "suffix": "b"}, "prompt"),
        ("/v1/completions", {"prompt": "a", "suffix": 5}, "suffix"),
        ("/v1/completions", {"prompt": [], "suffix": "b"}, "prompt"),
        ("/v1/completions", {"prompt": "a", "suffix": "b", "truncate_prompt_tokens": 3},
         "truncate_prompt_tokens"),
        ("/infill", {"input_suffix": "b"}, "input_prefix"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "input_extra": [{}]},
         "input_extra.0.text"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "input_extra": "x"},
         "input_extra"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "prompt": ["a"]}, "prompt"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "n_indent": -1}, "n_indent"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "samplers": ["top_k", "nope"]},
         "samplers"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "samplers": ["top_p", "infill"]},
         "samplers"),  # (no top-k before the infill sampler: every token a candidate)
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "samplers": ["top_k", "infill"],
                     "top_k": 40, "ignore_eos": True}, "ignore_eos"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "samplers": ["top_k", "infill"],
                     "top_k": 40, "grammar": 'root ::= "x"'}, "grammar"),
        ("/infill", {"input_prefix": "a", "input_suffix": "b", "samplers": ["top_k"],
                     "temperature": -5}, "temperature"),  # (left out, checked all the same)
        ("/v1/completions", {"prompt": "a", "samplers": [], "top_p": 7}, "top_p"),
    ],
)  # fmt: skip
def test_what_cannot_act_is_a_400_naming_it(http, path, body, param):
    r = http.post(path, json=body)
    assert (r.status_code, r.json()["error"]["param"]) == (400, param), r.text


def test_a_model_without_fim_tokens(tiny_server):
    url = tiny_server[1]
    r = httpx.post(url + "/infill", json={"input_prefix": "a", "input_suffix": "b"}, timeout=30)
    assert r.status_code == 501 and r.json()["error"]["type"] == "not_supported_error"
    assert "prefix, suffix, middle" in r.json()["error"]["message"]
    r = httpx.post(url + "/v1/completions", json={"prompt": "a", "suffix": "b"}, timeout=30)
    assert (r.status_code, r.json()["error"]["param"]) == (400, "suffix")
