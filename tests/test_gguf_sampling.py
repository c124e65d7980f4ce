"""A GGUF's sampling defaults (`general.sampling.*`, which llama.cpp's converter writes from a
model's generation_config.json and llama.cpp's server applies): read as that file would be,
under `--generation-config auto`; the keys this engine cannot apply named at load; llama.cpp's
endpoints taking llama.cpp's own defaults for the fields neither the request nor the file sets."""

from __future__ import annotations

import logging

import gguf
import httpx
import pytest
from conftest import serve_in_process
from gguf import GGMLQuantizationType as Q
from gguf_files import add_byte_tokenizer, tiny_hf_weights, write_tiny

from roseinfer import LLM, SamplingParams
from roseinfer.loader.gguf import SAMPLING_ORIGIN, gguf_generation_config

PROMPT = "The quick brown fox"


def test_the_metadata_in_generation_configs_names():
    meta = {"general.sampling.temp": 0.6000000238418579, "general.sampling.top_k": 20,
            "general.sampling.top_p": 0.949999988079071, "general.sampling.min_p": 0.0,
            "general.sampling.penalty_repeat": 1.100000023841858, "general.name": "x"}  # fmt: skip
    config, unapplied = gguf_generation_config(meta)
    # (float32 values read as llama.cpp reads them: 0.6, not 0.6000000238418579)
    assert config == {"temperature": 0.6, "top_k": 20, "top_p": 0.95, "min_p": 0.0,
                      "repetition_penalty": 1.1}  # fmt: skip
    assert unapplied == []
    assert gguf_generation_config({"general.name": "x"}) == ({}, [])
    # llama.cpp's window of the penalties, as SamplingParams' penalty_last_n
    config, _ = gguf_generation_config({**meta, "general.sampling.penalty_last_n": 0})
    assert config["penalty_last_n"] == 0
    # what this engine cannot do is named, not dropped
    odd = {**meta, "general.sampling.mirostat": 2, "general.sampling.xtc_probability": 0.5,
           "general.sampling.sequence": "tekpm"}  # fmt: skip
    _, unapplied = gguf_generation_config(odd)
    assert [line.split()[0] for line in unapplied] == [
        "general.sampling.mirostat", "general.sampling.xtc_probability",
        "general.sampling.sequence",
    ]  # fmt: skip
    # their neutral values need no word, nor llama.cpp's default order: nothing is unapplied
    neutral = {"general.sampling.mirostat": 0, "general.sampling.xtc_probability": 0.0,
               "general.sampling.sequence": "edkypmxt"}  # fmt: skip
    assert gguf_generation_config(neutral) == ({}, [])


def sampling_keys(w: gguf.GGUFWriter) -> None:
    add_byte_tokenizer(w)
    w.add_sampling_temp(0.7)
    w.add_sampling_top_k(3)
    w.add_sampling_penalty_repeat(1.5)
    w.add_sampling_penalty_last_n(8)
    w.add_sampling_mirostat(2)


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("gguf_sampling") / "tiny.gguf")
    write_tiny(path, tiny_hf_weights(tie=True), Q.F16, sampling_keys)
    return path


def test_an_engine_takes_the_files_defaults(tiny_gguf, caplog):
    with caplog.at_level(logging.WARNING, logger="roseinfer.loader"):
        llm = LLM(tiny_gguf, dtype="float32", num_kv_blocks=32)
    assert llm.default_params == SamplingParams(temperature=0.7, top_k=3, repetition_penalty=1.5,
                                                penalty_last_n=8)  # fmt: skip
    assert "general.sampling.mirostat 2 (this engine has no mirostat sampling) is not " \
           "applied" in caplog.text  # fmt: skip
    none = LLM(loaded=llm.loaded, generation_config="none", num_kv_blocks=32)
    assert none.default_params == SamplingParams()


def test_a_value_no_request_could_send_names_the_metadata(tmp_path):
    path = str(tmp_path / "bad.gguf")

    def bad(w: gguf.GGUFWriter) -> None:
        add_byte_tokenizer(w)
        w.add_sampling_top_p(0.0)

    write_tiny(path, tiny_hf_weights(tie=True), Q.F16, bad)
    llm = LLM(path, dtype="float32", num_kv_blocks=16)
    with pytest.raises(ValueError, match=rf"the model's {SAMPLING_ORIGIN}: top_p must be in "
                       r"\(0, 1\], got 0.0 \(--generation-config none"):  # fmt: skip
        llm.generate(PROMPT, use_tqdm=False)


def test_served_completion_takes_the_files_values_then_llamacpps(tiny_gguf):
    """/completion: the file's temperature, top-k, penalty and its window, llama.cpp's top-p
    and min-p; /v1: the file's, and OpenAI's for the rest."""
    with serve_in_process(tiny_gguf) as (_, url), httpx.Client(base_url=url, timeout=60) as c:
        params = c.get("/props").json()["default_generation_settings"]["params"]
        names = ("temperature", "top_k", "top_p", "min_p", "repeat_penalty", "repeat_last_n")
        assert {k: params[k] for k in names} == {"temperature": 0.7, "top_k": 3, "top_p": 0.95,
                                                 "min_p": 0.05, "repeat_penalty": 1.5,
                                                 "repeat_last_n": 8}  # fmt: skip
        body = {"prompt": PROMPT, "n_predict": 12, "ignore_eos": True, "n": 4, "seed": 3}
        left_out = c.post("/completion", json=body).json()
        written = c.post("/completion", json={**body, "temperature": 0.7, "top_k": 3,
                                              "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.5,
                                              "repeat_last_n": 8}).json()  # fmt: skip
        assert [r["content"] for r in left_out] == [r["content"] for r in written]
        settings = left_out[0]["generation_settings"]
        assert (settings["temperature"], settings["top_k"], settings["top_p"]) == (0.7, 3, 0.95)
        v1 = {"prompt": PROMPT, "max_tokens": 12, "ignore_eos": True, "n": 4, "seed": 3}
        v1_left_out = c.post("/v1/completions", json=v1).json()["choices"]
        own = {"temperature": 0.7, "top_k": 3, "top_p": 1, "min_p": 0, "repetition_penalty": 1.5}
        v1_written = c.post("/v1/completions", json={**v1, **own, "repeat_last_n": 8}).json()
        assert [x["text"] for x in v1_left_out] == [x["text"] for x in v1_written["choices"]]
        # (the file's window acts: the whole context is another request)
        whole = c.post("/v1/completions", json={**v1, **own, "repeat_last_n": -1}).json()
        assert [x["text"] for x in v1_left_out] != [x["text"] for x in whole["choices"]]
