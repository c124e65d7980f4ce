"""Embeddings: `LLM.embed` and POST /v1/embeddings against transformers' final hidden states.

The oracle: a decoder-only model's embedding (vLLM's pooling of such models) is its final
hidden state (after the last norm) at the prompt's last token, L2-normalized: transformers'
`hidden_states[-1][:, -1]` on the same weights, in fp32.
"""

from __future__ import annotations

import asyncio
import base64

import httpx
import numpy as np
import openai
import pytest
import torch
import transformers

from roseinfer import LLM, PoolingParams, SamplingParams
from roseinfer.engine.requests import InvalidRequestError
from roseinfer.outputs import RequestFailed
from roseinfer.server import fields as F
from roseinfer.server.embeddings import MAX_INPUTS

PROMPTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello",
    "Paris is the capital of France. Berlin is the capital of Germany. Rome is the capital",
]
PLAIN = {"enforce_eager": True, "attention_backend": "reference"}


def hf_embedding(hf, ids: list[int], normalize: bool = True) -> torch.Tensor:
    with torch.no_grad():
        h = hf(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0, -1]
    return torch.nn.functional.normalize(h, dim=-1) if normalize else h


@pytest.fixture(scope="module", params=["llama", "gpt2", "mistral"])
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def hf_model(tiny_model_dir, kind):
    path = tiny_model_dir(kind)
    return transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()


@pytest.mark.parametrize("path", ["default", "plain"])
def test_embed_matches_transformers_alone_batched_chunked_and_cached(
    tiny_model_dir, kind, hf_model, path
):
    # block_size 4 and 16-token steps: the long prompt is computed in chunks, across blocks
    llm = LLM(tiny_model_dir(kind), dtype="float32", block_size=4, num_kv_blocks=256,
              max_num_batched_tokens=16, lone_prefill_tokens=0, **(PLAIN if path == "plain" else {}))  # fmt: skip
    batched = llm.embed(PROMPTS, use_tqdm=False)
    alone = [llm.embed(p, use_tqdm=False)[0] for p in PROMPTS]  # the second time: cached
    assert max(len(o.prompt_token_ids) for o in batched) > 16
    assert [o.num_cached_tokens > 0 for o in alone] == [
        len(o.prompt_token_ids) > 4 for o in alone
    ]  # a full block of the prompt came from the prefix cache
    for a, b in zip(batched, alone, strict=True):
        want = hf_embedding(hf_model, a.prompt_token_ids)
        assert a.outputs.hidden_size == want.shape[0]
        torch.testing.assert_close(torch.tensor(a.outputs.embedding), want, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(torch.tensor(b.outputs.embedding), want, atol=1e-5, rtol=1e-5)
        assert abs(float(torch.tensor(a.outputs.embedding).norm()) - 1) < 1e-5
    raw = llm.embed(PROMPTS[0], PoolingParams(normalize=False), use_tqdm=False)[0]
    want = hf_embedding(hf_model, raw.prompt_token_ids, normalize=False)
    torch.testing.assert_close(torch.tensor(raw.outputs.embedding), want, atol=1e-4, rtol=1e-5)
    assert float(want.norm()) > 2  # so normalizing would have changed it
    assert llm.engine.block_manager.num_used_blocks == 0


def test_embeddings_share_steps_with_generation_and_change_nothing(tiny_model_dir, hf_model, kind):
    """Embedding requests in the same steps as generating ones: each side gets what it gets
    alone (greedy tokens, vectors)."""
    llm = LLM(tiny_model_dir(kind), dtype="float32", block_size=4, num_kv_blocks=256,
              max_num_batched_tokens=24, lone_prefill_tokens=0, enable_prefix_cache=False)  # fmt: skip
    greedy = SamplingParams(max_tokens=8, temperature=0, ignore_eos=True)
    want_tokens = [o.token_ids for o in llm.generate(PROMPTS, greedy, use_tqdm=False)]
    engine = llm.engine
    for i, p in enumerate(PROMPTS):
        llm.processor.add_request(f"g{i}", llm.encode(p), greedy)
        llm.processor.add_pooling_request(f"e{i}", llm.encode(p), PoolingParams())
    mixed_steps = 0
    while engine.has_unfinished():
        before = sum(v is not None for v in llm.processor.pooled.values())
        deltas = llm.processor.step()
        pooled = sum(v is not None for v in llm.processor.pooled.values()) - before
        mixed_steps += bool(deltas) and pooled > 0
    assert mixed_steps  # a step both sampled tokens and pooled
    for i, p in enumerate(PROMPTS):
        assert llm.processor.states[f"g{i}"].output().token_ids == want_tokens[i]
        vector = llm.processor.pooled[f"e{i}"].embedding
        torch.testing.assert_close(vector, hf_embedding(hf_model, llm.encode(p)), atol=1e-5,
                                   rtol=1e-5)  # fmt: skip


def test_embed_takes_vllms_per_prompt_params_and_truncation(tiny_model_dir, hf_model, kind):
    llm = LLM(tiny_model_dir(kind), dtype="float32", num_kv_blocks=64)
    a, b = llm.embed(PROMPTS[:2], [PoolingParams(normalize=False), PoolingParams()],
                     use_tqdm=False)  # fmt: skip
    torch.testing.assert_close(torch.tensor(a.outputs.embedding),
                               hf_embedding(hf_model, a.prompt_token_ids, normalize=False),
                               atol=1e-4, rtol=1e-5)  # fmt: skip
    assert abs(float(torch.tensor(b.outputs.embedding).norm()) - 1) < 1e-5
    (cut,) = llm.embed(PROMPTS[2], truncate_prompt_tokens=3, use_tqdm=False)
    assert cut.prompt_token_ids == llm.encode(PROMPTS[2])[-3:]
    torch.testing.assert_close(torch.tensor(cut.outputs.embedding),
                               hf_embedding(hf_model, cut.prompt_token_ids), atol=1e-5, rtol=1e-5)  # fmt: skip
    with pytest.raises(ValueError, match="1 pooling params for 2 prompts"):
        llm.embed(PROMPTS[:2], [PoolingParams()], use_tqdm=False)
    with pytest.raises(ValueError, match="truncate_prompt_tokens"):
        llm.embed(PROMPTS[0], truncate_prompt_tokens=0, use_tqdm=False)


def test_embed_limits_and_failures(tiny_model_dir):
    llm = LLM(tiny_model_dir("llama"), dtype="float32", max_model_len=64, num_kv_blocks=64)
    full = llm.embed([[5] * 64], use_tqdm=False)  # a prompt may fill the context: nothing follows
    assert full[0].outputs.hidden_size == llm.loaded.model_config.hidden_size
    with pytest.raises(InvalidRequestError, match="maximum context length is 64"):
        llm.embed([[5] * 10, [5] * 65], use_tqdm=False)
    assert not llm.engine.has_unfinished()  # the first was not queued
    with pytest.raises(InvalidRequestError, match="non-empty"):
        llm.embed([""], use_tqdm=False)
    with pytest.raises(ValueError, match="normalize"):
        PoolingParams(normalize="yes")  # type: ignore[arg-type]


def test_a_failure_while_pooling_one_request_fails_it_alone(tiny_model_dir, monkeypatch):
    """Its pooling raising (the batch is pooled again row by row), or its bookkeeping after:
    that request fails; the generation and the other embeddings in its steps do not."""
    from roseinfer.engine.llm_engine import LLMEngine
    from roseinfer.engine.model_runner import ModelRunner

    llm = LLM(tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64)
    greedy = SamplingParams(max_tokens=6, temperature=0, ignore_eos=True)
    want = llm.generate(PROMPTS[0], greedy, use_tqdm=False)[0].token_ids
    want_vector = llm.embed(PROMPTS[1], use_tqdm=False)[0].outputs.embedding
    pool_rows, pooled = ModelRunner._pool_rows, LLMEngine._pooled

    def poisoned_rows(self, hidden, rows):
        if any(seq.request_id == "bad" for seq, _ in rows):
            raise RuntimeError("poisoned pooling")
        return pool_rows(self, hidden, rows)

    def poisoned_finish(self, seq, embedding):
        if seq.request_id == "bad2" or seq.prompt_token_ids == llm.encode("poison"):
            raise RuntimeError("poisoned bookkeeping")
        return pooled(self, seq, embedding)

    monkeypatch.setattr(ModelRunner, "_pool_rows", poisoned_rows)
    monkeypatch.setattr(LLMEngine, "_pooled", poisoned_finish)
    proc = llm.processor
    proc.add_request("gen", llm.encode(PROMPTS[0]), greedy)
    for rid in ("bad", "good", "bad2"):
        proc.add_pooling_request(rid, llm.encode(PROMPTS[1]), PoolingParams())
    while llm.engine.has_unfinished():
        proc.step()
    assert proc.states["gen"].output().token_ids == want
    assert proc.pooled["good"].embedding.tolist() == pytest.approx(want_vector, abs=1e-6)
    assert "poisoned pooling" in proc.pooled["bad"].error
    assert "poisoned bookkeeping" in proc.pooled["bad2"].error
    assert llm.engine.block_manager.num_used_blocks == 0
    with pytest.raises(RequestFailed, match="poisoned bookkeeping"):  # LLM.embed: at once
        llm.embed(["first", "poison", "the last one"], use_tqdm=False)
    assert not llm.engine.has_unfinished()


def test_engine_client_embed_refuses_what_is_not_pooling_params(tiny_model_dir):
    from roseinfer.config import EngineConfig
    from roseinfer.engine.client import EngineClient
    from roseinfer.engine.llm_engine import LLMEngine
    from roseinfer.loader import load_model

    config = EngineConfig(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64)
    client = EngineClient(LLMEngine(load_model(config), config))
    try:
        with pytest.raises(TypeError, match="PoolingParams"):
            asyncio.run(client.embed("x", [1, 2, 3], None))  # type: ignore[arg-type]
        vector = asyncio.run(client.embed("y", [1, 2, 3], PoolingParams()))
        assert vector.shape == (client.engine.model_config.hidden_size,)
        assert client.engine.num_requests == 0
    finally:
        client.shutdown()


# ---- the server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tiny_server, tiny_model_dir):
    app, url = tiny_server
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        tiny_model_dir("llama"), dtype=torch.float32
    ).eval()
    return app, url, hf


def post(url: str, body: dict) -> httpx.Response:
    return httpx.post(url + "/v1/embeddings", json=body, timeout=60)


def vectors(r: httpx.Response) -> list[list[float]]:
    assert r.status_code == 200, r.text
    out = r.json()
    assert [d["index"] for d in out["data"]] == list(range(len(out["data"])))
    return [d["embedding"] for d in out["data"]]


def test_the_openai_sdk_reads_the_embeddings(served):
    app, url, hf = served
    tokenizer = app.state.client.engine.tokenizer
    client = openai.OpenAI(base_url=url + "/v1", api_key="none")
    model = client.models.list().data[0].id
    # the SDK asks for base64 and decodes it
    sdk = client.embeddings.create(model=model, input=PROMPTS)
    as_floats = client.embeddings.create(model=model, input=PROMPTS, encoding_format="float")
    ids = [tokenizer.encode(p) for p in PROMPTS]
    assert sdk.usage.prompt_tokens == sdk.usage.total_tokens == sum(map(len, ids))
    assert sdk.model == model and sdk.object == "list"
    for a, b, p in zip(sdk.data, as_floats.data, ids, strict=True):
        want = hf_embedding(hf, p)
        torch.testing.assert_close(torch.tensor(a.embedding), want, atol=1e-5, rtol=1e-5)
        assert a.embedding == b.embedding  # float32 either way


def test_inputs_keep_their_order_in_every_form(served):
    app, url, hf = served
    tokenizer = app.state.client.engine.tokenizer
    ids = [tokenizer.encode(p) for p in PROMPTS]
    as_ids = vectors(post(url, {"input": ids}))
    as_text = vectors(post(url, {"input": PROMPTS}))
    one = vectors(post(url, {"input": ids[2]}))
    for got, text, p in zip(as_ids, as_text, ids, strict=True):
        want = hf_embedding(hf, p)
        torch.testing.assert_close(torch.tensor(got), want, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(torch.tensor(text), want, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(torch.tensor(one[0]), hf_embedding(hf, ids[2]), atol=1e-5,
                               rtol=1e-5)  # fmt: skip


def test_honoured_fields_by_their_effect(served):
    app, url, hf = served
    engine = app.state.client.engine
    ids = engine.tokenizer.encode(PROMPTS[2])
    hidden = engine.model_config.hidden_size
    (raw,) = vectors(post(url, {"input": ids, "normalize": False}))
    torch.testing.assert_close(torch.tensor(raw), hf_embedding(hf, ids, normalize=False),
                               atol=1e-4, rtol=1e-5)  # fmt: skip
    (cut,) = vectors(post(url, {"input": ids, "truncate_prompt_tokens": 5}))
    torch.testing.assert_close(torch.tensor(cut), hf_embedding(hf, ids[-5:]), atol=1e-5, rtol=1e-5)
    body = {"input": ids, "truncate_prompt_tokens": 5, "truncation_side": "right"}
    (first,) = vectors(post(url, body))
    torch.testing.assert_close(torch.tensor(first), hf_embedding(hf, ids[:5]), atol=1e-5,
                               rtol=1e-5)  # fmt: skip
    r = post(url, {"input": ids, "truncate_prompt_tokens": 5})
    assert r.json()["usage"]["prompt_tokens"] == 5
    (same,) = vectors(post(url, {"input": ids, "dimensions": hidden}))
    assert len(same) == hidden
    r = post(url, {"input": ids, "dimensions": hidden - 1})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "dimensions")
    r = post(url, {"input": PROMPTS[0], "model": "another-model"})
    assert (r.status_code, r.json()["error"]["param"]) == (404, "model")
    (newer_name,) = vectors(post(url, {"input": ids, "use_activation": False}))
    assert newer_name == raw
    (both,) = vectors(post(url, {"input": ids, "use_activation": False, "normalize": False}))
    assert both == raw
    r = post(url, {"input": ids, "use_activation": False, "normalize": True})
    assert (r.status_code, r.json()["error"]["param"]) == (400, "use_activation")


def test_base64_byte_order_and_the_response_id(served):
    _, url, _ = served
    (floats,) = vectors(post(url, {"input": PROMPTS[0]}))
    for order, dtype in (("native", "=f4"), ("little", "<f4"), ("big", ">f4")):
        r = post(url, {"input": PROMPTS[0], "encoding_format": "base64", "endianness": order})
        raw = np.frombuffer(base64.b64decode(r.json()["data"][0]["embedding"]), dtype=dtype)
        assert raw.tolist() == floats, order
    r = post(url, {"input": PROMPTS[0], "request_id": "mine"})
    assert r.json()["id"] == "embd-mine" and isinstance(r.json()["created"], int)
    r = httpx.post(url + "/v1/embeddings", json={"input": "x"}, headers={"X-Request-Id": "hdr"})
    assert r.json()["id"] == "embd-hdr" and r.headers["x-request-id"] == "hdr"
    first, second = post(url, {"input": "x"}).json()["id"], post(url, {"input": "x"}).json()["id"]
    assert first.startswith("embd-") and first != second


def test_no_ops_and_neutral_values_change_nothing(served):
    _, url, _ = served
    body: dict = {"input": PROMPTS[0]}
    for spec in F.TABLE[F.EMBEDDINGS].values():
        if spec.kind is not F.Kind.HONOURED and spec.accepts_doc != "null":
            candidates = (True, 0, "float32", "do_not_pad", {}, "someone")
            body[spec.name] = next(v for v in candidates if spec.accepts(v, body))
    assert set(body) == {"input", "user", "cache_salt", "embed_dtype", "priority",
                         "mm_processor_kwargs", "media_io_kwargs", "padding"}  # fmt: skip
    # the chat form's fields at their neutral values beside input, and its own default
    body |= {"add_generation_prompt": False, "continue_final_message": False,
             "chat_template_kwargs": {}, "chat_template": None}  # fmt: skip
    (plain,) = vectors(post(url, {"input": PROMPTS[0]}))
    (with_all,) = vectors(post(url, body))
    torch.testing.assert_close(torch.tensor(with_all), torch.tensor(plain), atol=1e-6, rtol=0)


@pytest.mark.parametrize(("body", "param", "words"), [
    ({"input": ""}, "input", "non-empty"),
    ({"input": []}, "input", "must not be empty"),
    ({"input": ["a", ""]}, "input", "input[1]"),
    ({"input": [[]]}, "input", "must not be empty"),
    ({"input": [1, 10**6]}, "input", "token ids"),
    ({"input": "x " * 400}, "input", "maximum context length"),
    ({"input": ["x"] * (MAX_INPUTS + 1)}, "input", "at most 2048"),
    ({"input": "x", "encoding_format": "bits"}, "encoding_format", "float"),
    ({"input": "x", "truncate_prompt_tokens": 0}, "truncate_prompt_tokens", ">= 1"),
    ({"input": "x", "normalize": "yes"}, "normalize", "bool"),
    ({"input": "x", "endianness": "middle"}, "endianness", "native"),
    ({"input": "x", "request_id": ""}, "request_id", "at least 1"),
    ({"input": "x", "truncation_side": "middle"}, "truncation_side", "left"),
    ({"input": "x", "add_generation_prompt": True}, "add_generation_prompt", "messages only"),
    ({"input": "x", "messages": [{"role": "user", "content": "x"}]}, "messages", "not both"),
    ({}, "input", "required"),
    ({"messages": [{"role": "user", "content": "x", "mood": 1}]}, "messages.0.mood", "not a field"),
    ({"messages": [{"role": "user", "content": "x"}], "chat_template": "{{ x }}"},
     "chat_template", "not supported"),
])  # fmt: skip
def test_what_cannot_act_is_a_400_naming_it(served, body, param, words):
    _, url, _ = served
    r = post(url, body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == param and words.lower() in err["message"].lower(), err
    if "context" in words:
        assert err["code"] == "context_length_exceeded"


def test_the_chat_form_embeds_the_rendered_conversation(served):
    app, url, hf = served
    tokenizer = app.state.client.engine.tokenizer
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    for extra in ({}, {"add_generation_prompt": True}):
        r = post(url, {"messages": messages, **extra})
        (got,) = vectors(r)
        ids = tokenizer.encode_chat(messages, add_generation_prompt=bool(extra))
        assert r.json()["usage"]["prompt_tokens"] == len(ids)
        torch.testing.assert_close(torch.tensor(got), hf_embedding(hf, ids), atol=1e-5, rtol=1e-5)
    ending = [*messages, {"role": "assistant", "content": "Hel"}]  # the last message left open
    (got,) = vectors(post(url, {"messages": ending, "continue_final_message": True}))
    ids = tokenizer.encode_chat(ending, add_generation_prompt=False, continue_final_message=True)
    assert ids != tokenizer.encode_chat(ending, add_generation_prompt=False)
    torch.testing.assert_close(torch.tensor(got), hf_embedding(hf, ids), atol=1e-5, rtol=1e-5)
    # the template's variables reach it: one it does not read is refused, as on chat
    r = post(url, {"messages": messages, "chat_template_kwargs": {"unread": 1}})
    assert r.status_code == 400 and "chat_template_kwargs" in r.json()["error"]["param"]
    r = post(url, {"messages": [{"role": "user", "content": "word " * 400}]})  # named as sent
    error = r.json()["error"]
    assert (r.status_code, error["param"], error["code"]) == (400, "messages",
                                                              "context_length_exceeded")  # fmt: skip


def test_embeddings_beside_running_generations_hurt_neither(served):
    """Chat streams and embedding requests at once: each answers what it answers alone."""
    _, url, hf = served
    chat = {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 24,
            "temperature": 0, "ignore_eos": True}  # fmt: skip
    want_text = httpx.post(url + "/v1/chat/completions", json=chat, timeout=60).json()
    want_vectors = vectors(post(url, {"input": PROMPTS}))

    async def run() -> tuple[list, list]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            chats = [c.post("/v1/chat/completions", json=chat) for _ in range(4)]
            embeds = [c.post("/v1/embeddings", json={"input": PROMPTS}) for _ in range(4)]
            done = await asyncio.gather(*chats, *embeds)
            return list(done[:4]), list(done[4:])

    chats, embeds = asyncio.run(run())
    for r in chats:
        assert r.json()["choices"][0]["message"] == want_text["choices"][0]["message"]
    for r in embeds:
        for got, want in zip(vectors(r), want_vectors, strict=True):
            np.testing.assert_allclose(got, want, atol=1e-5)


def test_metrics_count_prompt_tokens_and_no_generated_ones(served):
    _, url, _ = served
    from test_server import wait_for_idle

    before = wait_for_idle(url)
    r = post(url, {"input": PROMPTS})
    after = wait_for_idle(url)
    done = 'roseinfer_requests_finished_total{finished_reason="stop"}'
    assert after[done] - before.get(done, 0) == len(PROMPTS)
    assert (
        after["roseinfer_prompt_tokens_total"] - before["roseinfer_prompt_tokens_total"]
        == (r.json()["usage"]["prompt_tokens"])
    )
    assert after["roseinfer_generation_tokens_total"] == before["roseinfer_generation_tokens_total"]
    assert after["roseinfer_kv_cache_used_blocks"] == 0
