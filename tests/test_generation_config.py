"""A model's generation_config.json sampling defaults (vLLM's `--generation-config auto`): a
request that leaves temperature, top_p, top_k, min_p, repetition_penalty or its output limit out
gets the model's own, through both front doors; what a request sets wins; `generation_config=
"none"` gives OpenAI's defaults. The tiny random llama, its file given `top_k: 1` (so sampling
under the model's defaults is greedy, whatever the temperature) and `max_new_tokens: 5`."""

from __future__ import annotations

import json
import os
import shutil

import httpx
import pytest
from conftest import serve_in_process

from roseinfer import LLM, EngineConfig, InferenceEngine, SamplingParams
from roseinfer.cli import build_parser as cli_parser
from roseinfer.sampling_params import SamplingDefaults

PROMPT = "The quick brown fox"
OWN = {"top_k": 1, "temperature": 0.9, "max_new_tokens": 5, "do_sample": True}


def with_generation_config(src: str, dst: str, values: dict) -> str:
    shutil.copytree(src, dst)
    path = os.path.join(dst, "generation_config.json")
    config = json.load(open(path)) if os.path.exists(path) else {}
    with open(path, "w") as f:
        json.dump({**config, **values}, f)
    return dst


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir, tmp_path_factory):
    return with_generation_config(
        tiny_model_dir("llama"), str(tmp_path_factory.mktemp("gc") / "m"), OWN
    )


def test_the_file_is_read_as_vllm_reads_it():
    d = SamplingDefaults.from_generation_config(
        {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "repetition_penalty": 1.05,
         "min_p": None, "do_sample": False, "eos_token_id": [1, 2], "max_new_tokens": 9}
    )  # fmt: skip
    given = {"temperature", "top_p", "top_k", "repetition_penalty", "max_tokens"}
    assert d == SamplingDefaults(0.7, 0.8, 20, 0.0, 1.05, 9, given=frozenset(given))
    assert d.changed() == {"temperature": 0.7, "top_p": 0.8, "top_k": 20,
                           "repetition_penalty": 1.05, "max_new_tokens": 9}  # fmt: skip
    assert SamplingDefaults.from_generation_config({"eos_token_id": 2}) == SamplingDefaults()
    # as JSON writers may spell them: 50.0 is 50; top_k -1 is off, as 0
    odd = SamplingDefaults.from_generation_config({"top_k": -1, "max_new_tokens": 50.0})
    assert (odd.top_k, odd.max_tokens, odd.changed()) == (0, 50, {"max_new_tokens": 50})
    with pytest.raises(ValueError, match="max_new_tokens must be an integer >= 1"):
        SamplingDefaults.from_generation_config({"max_new_tokens": 0})


def test_offline_default_params_are_the_models(model_dir):
    llm = LLM(model_dir, dtype="float32", num_kv_blocks=64)
    own = llm.generate(PROMPT, use_tqdm=False)[0].outputs[0]
    greedy = llm.generate(PROMPT, SamplingParams(temperature=0, max_tokens=5), use_tqdm=False)
    assert own.token_ids == greedy[0].outputs[0].token_ids and len(own.token_ids) == 5
    plain = LLM(loaded=llm.loaded, generation_config="none", num_kv_blocks=64)
    assert plain.default_params == SamplingParams()
    # given params are taken as they are: the file only fills what is left out
    given = llm.generate(PROMPT, SamplingParams(max_tokens=7, seed=1), use_tqdm=False)
    assert len(given[0].outputs[0].token_ids) == 7


def test_served_requests_get_the_models_defaults_where_they_leave_a_field_out(model_dir):
    with serve_in_process(model_dir) as (_, url), httpx.Client(base_url=url, timeout=60) as http:
        chat = {"messages": [{"role": "user", "content": "Hi"}], "ignore_eos": True}
        own = http.post("/v1/chat/completions", json=chat).json()
        greedy = http.post("/v1/chat/completions",
                           json={**chat, "temperature": 0, "max_tokens": 5}).json()  # fmt: skip
        assert own["usage"]["completion_tokens"] == 5
        assert own["choices"][0]["message"] == greedy["choices"][0]["message"]
        # /completion: the file's temperature and top-k, llama.cpp's top-p and min-p
        params = http.get("/props").json()["default_generation_settings"]["params"]
        assert [params[k] for k in ("temperature", "top_k", "top_p", "min_p")] == [
            0.9, 1, 0.95, 0.05]  # fmt: skip
        # completions: OpenAI's 16, or the model's limit where lower
        r = http.post("/v1/completions", json={"prompt": PROMPT, "ignore_eos": True}).json()
        assert r["usage"]["completion_tokens"] == 5
        # what a request sets wins: top_k 0 samples among all tokens at temperature 0.9
        body = {"prompt": PROMPT, "ignore_eos": True, "max_tokens": 12, "top_k": 0, "n": 8,
                "seed": 5}  # fmt: skip
        texts = {c["text"] for c in http.post("/v1/completions", json=body).json()["choices"]}
        assert len(texts) > 1


def test_a_file_whose_values_no_request_could_send_stops_auto_only(tiny_model_dir, tmp_path):
    """Under auto, the first reader of the defaults (the server at start, `LLM` called without
    params) is refused, naming the way out; given params, `none`, the seeds' classes and the
    commands that set every field never read the file."""
    bad = with_generation_config(tiny_model_dir("llama"), str(tmp_path / "m"), {"top_p": 0})
    llm = LLM(bad, dtype="float32", num_kv_blocks=16)
    with pytest.raises(ValueError, match=r"generation_config.json: top_p must be in \(0, 1\], "
                       r"got 0 \(--generation-config none"):  # fmt: skip
        llm.generate(PROMPT, use_tqdm=False)
    assert llm.generate(PROMPT, SamplingParams(max_tokens=2), use_tqdm=False)
    none = LLM(loaded=llm.loaded, generation_config="none", num_kv_blocks=16)
    assert none.generate(PROMPT, use_tqdm=False)[0].outputs[0].token_ids
    engine = InferenceEngine(EngineConfig(model=bad, dtype="float32", num_kv_blocks=16))
    assert engine.generate("Hello", max_new_tokens=2)
    args = cli_parser().parse_args(["generate", "--prompt", "x", "--model", bad])
    assert EngineConfig.from_args(args).generation_config == "none"


def test_the_models_limit_is_cut_to_the_room_the_prompt_leaves(tiny_model_dir, tmp_path):
    """As the server's chat default: the file's max_new_tokens beyond the context is what the
    context leaves (an error in every call, before)."""
    big = with_generation_config(tiny_model_dir("llama"), str(tmp_path / "m"),
                                 {"max_new_tokens": 100_000})  # fmt: skip
    llm = LLM(big, dtype="float32", num_kv_blocks=16, max_model_len=24)
    out = llm.generate(PROMPT, use_tqdm=False)[0]
    assert len(out.prompt_token_ids) + len(out.outputs[0].token_ids) == 24


def test_the_same_request_with_the_files_values_written_out(model_with_all):
    """Every default the file gives acts: leaving them out is writing them in (seeded), and not
    OpenAI's defaults written in; `/generate` keeps its own (do_sample's temperature 1, no top-k,
    top-p or penalty)."""
    with serve_in_process(model_with_all) as (_, url), httpx.Client(base_url=url, timeout=60) as c:
        base = {"prompt": PROMPT, "ignore_eos": True, "max_tokens": 16, "n": 4, "seed": 11}
        left_out = c.post("/v1/completions", json=base).json()["choices"]
        written = c.post("/v1/completions", json={**base, **ALL}).json()["choices"]
        openai = {"temperature": 1, "top_p": 1, "top_k": 0, "min_p": 0, "repetition_penalty": 1}
        plain = c.post("/v1/completions", json={**base, **openai}).json()["choices"]
        assert [x["text"] for x in left_out] == [x["text"] for x in written]
        assert [x["text"] for x in left_out] != [x["text"] for x in plain]
        # llama.cpp's /completion: the file's values win over llama.cpp's defaults, as a GGUF's
        llama = {"prompt": PROMPT, "ignore_eos": True, "n_predict": 16, "n": 4, "seed": 11}
        left_out = c.post("/completion", json=llama).json()
        own = {**ALL, "repeat_penalty": ALL["repetition_penalty"]}  # (llama.cpp's name)
        del own["repetition_penalty"]
        written = c.post("/completion", json={**llama, **own}).json()
        assert [x["content"] for x in left_out] == [x["content"] for x in written]
        generate = {"prompt": PROMPT, "max_new_tokens": 16, "do_sample": True, "seed": 11,
                    "stop_on_eos": False}  # fmt: skip
        texts = {c.post("/generate", json={**generate, "seed": s}).json()["text"] for s in range(4)}
        assert len(texts) > 1  # the file's top_k 1 would make every seed the same
        # the model's penalty in llama.cpp's window: 0 turns it off, as OpenAI's 1 would
        off = c.post("/v1/completions", json={**base, "repeat_last_n": 0}).json()["choices"]
        plain_but_penalty = {**base, **ALL, "repetition_penalty": 1}
        no_penalty = c.post("/v1/completions", json=plain_but_penalty).json()["choices"]
        assert [x["text"] for x in off] == [x["text"] for x in no_penalty]


ALL = {"temperature": 0.8, "top_p": 0.7, "top_k": 3, "min_p": 0.05, "repetition_penalty": 1.3}


@pytest.fixture(scope="module")
def model_with_all(tiny_model_dir, tmp_path_factory):
    return with_generation_config(
        tiny_model_dir("llama"), str(tmp_path_factory.mktemp("gc_all") / "m"), ALL
    )
