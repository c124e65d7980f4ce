"""Issue 19: logprobs, prompt logprobs, echo, bad_words and allowed_token_ids.

Logprobs are checked against transformers' `log_softmax` of the same weights in fp32 (alone,
batched, over chunked prefill, prefix-cache hits and preemption); the other fields by their
effect through `LLM.generate` and the server (OpenAI's shapes, read by the `openai` client,
streamed and not)."""

from __future__ import annotations

import codecs
import json

import httpx
import pytest
import torch
from conftest import record_preemptions
from openai import OpenAI

from roseinfer import LLM
from roseinfer.outputs import PositionLogprobs
from roseinfer.sampling_params import SamplingParams

PROMPT = "The quick brown fox jumps over the lazy dog, and then it sleeps."
ATOL = 1e-4


@pytest.fixture(scope="module")
def model_dir(tiny_model_dir) -> str:
    return tiny_model_dir("llama")


@pytest.fixture(scope="module")
def llm(model_dir) -> LLM:
    # 8 tokens a step: the prompt is prefilled in several chunks
    return LLM(model=model_dir, dtype="float32", block_size=4, num_kv_blocks=256,
               max_num_seqs=8, max_num_batched_tokens=8, lone_prefill_tokens=0)  # fmt: skip


@pytest.fixture(scope="module")
def oracle(model_dir):
    """ids -> log_softmax of transformers' logits at every position [len(ids), V] (fp32)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()

    def logprobs(ids: list[int]) -> torch.Tensor:
        with torch.no_grad():
            return model(torch.tensor([ids])).logits[0].float().log_softmax(dim=-1)

    return logprobs


def greedy(n: int = 8, **kw) -> SamplingParams:
    return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True, **kw)


def check_position(pos: PositionLogprobs, token: int, row: torch.Tensor, k: int) -> None:
    """The position's token first with its logprob and rank, then the top k (theirs)."""
    assert next(iter(pos)) == token
    assert abs(pos[token].logprob - float(row[token])) < ATOL
    assert pos[token].rank == int((row > row[token]).sum()) + 1
    top = row.topk(k)
    for rank, (tid, value) in enumerate(
        zip(top.indices.tolist(), top.values.tolist(), strict=True), 1
    ):
        assert tid in pos and abs(pos[tid].logprob - value) < ATOL
        if tid != token:
            assert pos[tid].rank == rank
    assert len(pos) in (k, k + 1)


def check_against_oracle(out, oracle, k: int, prompt_k: int | None) -> None:
    ids = out.prompt_token_ids + out.token_ids
    rows = oracle(ids)
    p = len(out.prompt_token_ids)
    choice = out.outputs[0]
    assert len(choice.logprobs) == len(choice.token_ids)
    for j, (token, pos) in enumerate(zip(choice.token_ids, choice.logprobs, strict=True)):
        check_position(pos, token, rows[p - 1 + j], k)
    total = sum(float(rows[p - 1 + j, t]) for j, t in enumerate(choice.token_ids))
    assert abs(choice.cumulative_logprob - total) < 1e-3
    if prompt_k is None:
        assert out.prompt_logprobs is None
        return
    assert len(out.prompt_logprobs) == p and out.prompt_logprobs[0] is None
    for j in range(1, p):
        check_position(out.prompt_logprobs[j], ids[j], rows[j - 1], prompt_k)


# ---- against transformers --------------------------------------------------------------------


def test_logprobs_match_transformers_alone_and_batched(llm, oracle):
    params = greedy(8, logprobs=5, prompt_logprobs=3)
    (alone,) = llm.generate(PROMPT, params, use_tqdm=False)
    assert len(alone.prompt_token_ids) > 16  # several 8-token chunks
    check_against_oracle(alone, oracle, 5, 3)
    # batched with plain requests, and sampled rows: the logprobs are of the raw distribution
    others = ["Hello, world!", "def add(a, b):", "One two three"]
    sampled = SamplingParams(max_tokens=8, temperature=0.8, seed=1, ignore_eos=True, logprobs=2,
                             top_k=5, presence_penalty=1.0, logit_bias={3: 2.0})  # fmt: skip
    outs = llm.generate([PROMPT, *others, others[0]], [params, greedy(), sampled, greedy(),
                        greedy(6, logprobs=0)], use_tqdm=False)  # fmt: skip
    assert outs[0].token_ids == alone.token_ids
    check_against_oracle(outs[0], oracle, 5, 3)
    check_against_oracle(outs[2], oracle, 2, None)
    check_against_oracle(outs[4], oracle, 0, None)
    assert outs[1].outputs[0].logprobs is None and outs[1].outputs[0].cumulative_logprob is None
    assert all(len(pos) == 1 for pos in outs[4].outputs[0].logprobs)


def test_sampled_token_is_reported_outside_the_top_n(llm, oracle):
    """logit_bias forces a token the model does not rank first: its (raw) logprob and rank are
    still reported, beside the top 1."""
    (out,) = llm.generate(PROMPT, greedy(4, logprobs=1, logit_bias={7: 100}), use_tqdm=False)
    assert out.token_ids == [7] * 4
    check_against_oracle(out, oracle, 1, None)
    assert any(pos[7].rank > 1 and len(pos) == 2 for pos in out.outputs[0].logprobs)


def test_prompt_logprobs_after_prefix_cache_hits_and_with_n(llm, oracle):
    llm.generate(PROMPT, greedy(2), use_tqdm=False)  # the prompt's blocks are now cached
    hits = llm.engine.block_manager.prefix_hits
    (out,) = llm.generate(PROMPT, greedy(3, prompt_logprobs=2, logprobs=0), use_tqdm=False)
    assert llm.engine.block_manager.prefix_hits == hits  # it computed every position
    check_against_oracle(out, oracle, 0, 2)
    # n = 3: choice 0 computes the prompt and its logprobs, the others take the prompt from the
    # cache (every block but the last, whose tokens they compute) and share choice 0's logprobs
    sampled = SamplingParams(n=3, max_tokens=3, seed=0, prompt_logprobs=1, logprobs=1)
    hits = llm.engine.block_manager.prefix_hits
    (out,) = llm.generate(PROMPT, sampled, use_tqdm=False)
    cached = (len(out.prompt_token_ids) - 1) // 4 * 4
    assert llm.engine.block_manager.prefix_hits - hits == 2 * cached
    assert out.metrics.num_cached_tokens == 0  # choice 0's: it computed every position
    rows = oracle(out.prompt_token_ids)
    for j in range(1, len(out.prompt_token_ids)):
        check_position(out.prompt_logprobs[j], out.prompt_token_ids[j], rows[j - 1], 1)
    assert all(len(c.logprobs) == len(c.token_ids) for c in out.outputs)


def test_penalties_and_logprobs_after_a_prefix_cache_hit(model_dir):
    """The penalties read the sequence's tokens, not what was computed: a request whose prompt
    is served by the prefix cache gets the tokens and logprobs it gets cold."""
    fresh = LLM(model=model_dir, dtype="float32", block_size=4, num_kv_blocks=256)
    params = greedy(12, repetition_penalty=1.4, frequency_penalty=0.7, logprobs=2)
    (cold,) = fresh.generate(PROMPT, params, use_tqdm=False)
    (warm,) = fresh.generate(PROMPT, params, use_tqdm=False)
    assert warm.metrics.num_cached_tokens > 0 and cold.metrics.num_cached_tokens == 0
    assert warm.token_ids == cold.token_ids
    for a, b in zip(warm.outputs[0].logprobs, cold.outputs[0].logprobs, strict=True):
        assert a.keys() == b.keys() and all(abs(a[t].logprob - b[t].logprob) < ATOL for t in a)


def test_prompt_logprobs_survive_preemption(model_dir, oracle):
    """Few KV blocks: sequences are preempted and recomputed; each position is reported once,
    with the values it has alone."""
    small = LLM(model=model_dir, dtype="float32", block_size=4, num_kv_blocks=16,
                max_num_seqs=4, max_num_batched_tokens=8, lone_prefill_tokens=0)  # fmt: skip
    preempted = record_preemptions(small)
    prompts = ["The quick brown fox jumps", "def add(a, b):", "Hello, world!", "One two three"]
    outs = small.generate(prompts, greedy(24, logprobs=2, prompt_logprobs=2), use_tqdm=False)
    assert preempted
    for out in outs:
        check_against_oracle(out, oracle, 2, 2)


# ---- bad_words and allowed_token_ids ---------------------------------------------------------


def test_bad_words_and_allowed_token_ids_by_effect(llm):
    tokenizer = llm.tokenizer
    plain = llm.generate(PROMPT, greedy(16), use_tqdm=False)[0].token_ids
    # a two-token word of the greedy output that encodes back to the same two tokens
    pair = next(
        [a, b]
        for a, b in zip(plain, plain[1:], strict=False)
        if tokenizer.encode(tokenizer.decode([a, b]), False) == [a, b]
        and "\ufffd" not in tokenizer.decode([a, b])
    )
    word = tokenizer.decode(pair)
    banned = llm.generate(PROMPT, greedy(16, bad_words=[word]), use_tqdm=False)[0].token_ids
    assert all(banned[i : i + 2] != pair for i in range(len(banned)))
    assert banned[: plain.index(pair[0])] == plain[: plain.index(pair[0])]  # same until then
    one = next(t for t in plain if "\ufffd" not in tokenizer.decode([t]).strip() and
               tokenizer.encode(tokenizer.decode([t]).strip(), False) == [t])  # fmt: skip
    banned = llm.generate(PROMPT, greedy(16, bad_words=[tokenizer.decode([one])]), use_tqdm=False)
    assert one not in banned[0].token_ids
    allowed = (5, 9, 11)
    out = llm.generate(PROMPT, greedy(12, allowed_token_ids=allowed), use_tqdm=False)[0]
    assert set(out.token_ids) <= set(allowed)
    sampled = SamplingParams(max_tokens=24, seed=3, allowed_token_ids=allowed, ignore_eos=True)
    assert set(llm.generate(PROMPT, sampled, use_tqdm=False)[0].token_ids) <= set(allowed)
    with pytest.raises(ValueError, match="allowed_token_ids"):
        llm.generate(PROMPT, greedy(allowed_token_ids=(10**6,)), use_tqdm=False)


def test_listed_tokens_logprobs_match_transformers_alone_and_batched(llm, oracle):
    """vLLM's `logprob_token_ids`: each position holds its token, then the listed ones in the
    order given (not the likeliest), each with transformers' logprob and its true rank; in a
    batch beside rows with a top N, plain rows and a sampled one."""
    listed = (9, 3, 250, 0)
    params = greedy(6, logprobs=len(listed), logprob_token_ids=listed)
    (alone,) = llm.generate(PROMPT, params, use_tqdm=False)
    sampled = SamplingParams(max_tokens=6, temperature=0.8, seed=1, ignore_eos=True, logprobs=2,
                             logprob_token_ids=(5, 9), top_k=5)  # fmt: skip
    outs = llm.generate([PROMPT, "Hello, world!", "def add(a, b):", PROMPT],
                        [params, greedy(6, logprobs=3), sampled, greedy(6)], use_tqdm=False)  # fmt: skip
    assert outs[0].token_ids == alone.token_ids == outs[3].token_ids
    check_against_oracle(outs[1], oracle, 3, None)
    for out, ids in ((alone, listed), (outs[0], listed), (outs[2], (5, 9))):
        rows = oracle(out.prompt_token_ids + out.token_ids)
        p = len(out.prompt_token_ids)
        for j, (token, pos) in enumerate(zip(out.token_ids, out.outputs[0].logprobs, strict=True)):
            row = rows[p - 1 + j]
            assert list(pos) == [token, *(t for t in ids if t != token)]
            for t in pos:
                assert abs(pos[t].logprob - float(row[t])) < ATOL
                assert pos[t].rank == int((row > row[t]).sum()) + 1
    assert outs[3].outputs[0].logprobs is None


def test_listed_tokens_validation():
    for kw, message in [({"logprob_token_ids": (1, 2)}, "logprobs must be 2"),
                        ({"logprobs": 3, "logprob_token_ids": (1, 2)}, "logprobs must be 2"),
                        ({"logprobs": 2, "logprob_token_ids": (1, 1)}, "twice"),
                        ({"logprobs": 0, "logprob_token_ids": ()}, "1 to 128"),
                        ({"logprobs": 1, "logprob_token_ids": (-1,)}, "1 to 128"),
                        ({"logprobs": 1, "logprob_token_ids": (1,), "logprobs_processed": True},
                         "logprobs_processed")]:  # fmt: skip
        with pytest.raises(ValueError, match=f"^logprob_token_ids.*{message}"):
            SamplingParams(**kw)
    ids = tuple(range(128))  # past MAX_LOGPROBS: the list's count
    assert SamplingParams(logprobs=128, logprob_token_ids=ids).logprob_token_ids == ids


def test_validation_names_the_field():
    for kw, name in [({"logprobs": 21}, "logprobs"), ({"prompt_logprobs": -1}, "prompt_logprobs"),
                     ({"logprobs": True}, "logprobs"), ({"bad_words": [""]}, "bad_words"),
                     ({"allowed_token_ids": []}, "allowed_token_ids"),
                     ({"allowed_token_ids": [-1]}, "allowed_token_ids")]:  # fmt: skip
        with pytest.raises(ValueError, match=f"^{name}"):
            SamplingParams(**kw)
    assert SamplingParams(bad_words="x").bad_words == ("x",)


def test_a_feature_request_leaves_31_plain_ones_unchanged(model_dir):
    """32 at once: one request with penalties, min_p and logprobs gets the tokens it gets
    alone, and the 31 plain ones (greedy and seeded) are unchanged by it."""
    big = LLM(model=model_dir, dtype="float32", num_kv_blocks=512, max_num_seqs=32)
    words = "alpha beta gamma delta epsilon zeta eta theta".split()
    prompts = [f"{words[i % 8]} {words[(i * 3) % 8]} {i}" for i in range(32)]
    plain = [greedy(10) if i % 2 else SamplingParams(max_tokens=10, seed=i, ignore_eos=True)
             for i in range(32)]  # fmt: skip
    special = SamplingParams(max_tokens=10, seed=7, ignore_eos=True, frequency_penalty=1.0,
                             presence_penalty=0.5, min_p=0.1, logprobs=5,
                             bad_words=["gamma"])  # fmt: skip
    base = big.generate(prompts, plain, use_tqdm=False)
    mixed = big.generate(prompts, [special, *plain[1:]], use_tqdm=False)
    for a, b in zip(base[1:], mixed[1:], strict=True):
        assert a.token_ids == b.token_ids
    alone = big.generate(prompts[0], special, use_tqdm=False)[0]
    assert mixed[0].token_ids == alone.token_ids
    assert mixed[0].outputs[0].logprobs == alone.outputs[0].logprobs or all(
        abs(x[t].logprob - y[t].logprob) < ATOL
        for x, y, t in zip(
            mixed[0].outputs[0].logprobs, alone.outputs[0].logprobs, alone.token_ids, strict=True
        )  # fmt: skip
    )


# ---- through the server ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def server_oracle(tiny_server, oracle):
    return tiny_server[0].state.client.engine.tokenizer, oracle


BODY = {"prompt": PROMPT, "max_tokens": 6, "temperature": 0, "ignore_eos": True}
CHAT = {"messages": [{"role": "user", "content": "Hi there"}], "max_tokens": 6,
        "temperature": 0, "ignore_eos": True}  # fmt: skip


def greedy_ids(oracle, ids: list[int], n: int) -> list[int]:
    """transformers' greedy continuation of `ids` (what the server's greedy output is)."""
    out = list(ids)
    for _ in range(n):
        out.append(int(oracle(out)[-1].argmax()))
    return out[len(ids) :]


def legacy_name(tokenizer, token: int) -> str:
    """OpenAI's legacy name of a token: its text, or `bytes:\\xNN` for part of a character."""
    raw = tokenizer.token_bytes(token)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes:" + "".join(f"\\x{b:02x}" for b in raw)


def char_offsets(tokenizer, tokens: list[int], start: bytes = b"") -> list[int]:
    """Where each token starts in the text: the characters the bytes before it complete."""
    return [
        len(codecs.utf_8_decode(start + b"".join(map(tokenizer.token_bytes, tokens[:j])),
                                "replace", False)[0])
        for j in range(len(tokens))
    ]  # fmt: skip


def sse(http: httpx.Client, path: str, body: dict) -> list[dict]:
    with http.stream("POST", path, json={**body, "stream": True}) as r:
        assert r.status_code == 200
        lines = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_completions_logprobs_and_echo(http, server_oracle):
    tokenizer, oracle = server_oracle
    r = http.post("/v1/completions", json={**BODY, "logprobs": 3})
    assert r.status_code == 200, r.text
    choice = r.json()["choices"][0]
    lp = choice["logprobs"]
    ids = tokenizer.encode(PROMPT)
    out_ids = greedy_ids(oracle, ids, 6)
    rows = oracle(ids + out_ids)
    assert lp["tokens"] == [legacy_name(tokenizer, t) for t in out_ids]
    assert len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == 6
    assert lp["text_offset"] == char_offsets(tokenizer, out_ids)
    assert all(o <= len(choice["text"]) for o in lp["text_offset"])
    for j, (token, value) in enumerate(zip(out_ids, lp["token_logprobs"], strict=True)):
        assert abs(value - float(rows[len(ids) - 1 + j, token])) < ATOL
        # the top 3 and the token, keyed by name (tokens of the same text share a key)
        top = {legacy_name(tokenizer, t): float(rows[len(ids) - 1 + j, t]) for t in
               rows[len(ids) - 1 + j].topk(3).indices.tolist()}  # fmt: skip
        assert lp["tokens"][j] in lp["top_logprobs"][j] and len(lp["top_logprobs"][j]) <= 4
        assert set(top) <= set(lp["top_logprobs"][j])
    # echo: the prompt first in text and logprobs, its first token with null logprobs
    r = http.post("/v1/completions", json={**BODY, "logprobs": 2, "echo": True})
    choice = r.json()["choices"][0]
    assert choice["text"] == PROMPT + tokenizer.decode(out_ids)
    elp = choice["logprobs"]
    assert len(elp["tokens"]) == len(ids) + 6
    assert elp["token_logprobs"][0] is None and elp["top_logprobs"][0] is None
    for j in range(1, len(ids)):
        assert abs(elp["token_logprobs"][j] - float(rows[j - 1, ids[j]])) < ATOL
    assert elp["token_logprobs"][len(ids) :] == lp["token_logprobs"]
    assert elp["text_offset"][len(ids)] == len(PROMPT)
    r = http.post("/v1/completions", json={**BODY, "echo": True})
    assert (
        r.json()["choices"][0]["text"] == choice["text"] and not r.json()["choices"][0]["logprobs"]
    )
    # streamed: the same, chunk by chunk (the echoed prompt in each choice's first chunk); with
    # n = 3 the prompt's logprobs are computed by choice 0 and its first chunk comes first
    chunks = sse(http, "/v1/completions", {**BODY, "logprobs": 2, "echo": True, "n": 3})
    for index in range(3):
        mine = [c["choices"][0] for c in chunks if c["choices"][0]["index"] == index]
        assert "".join(c["text"] for c in mine) == choice["text"]
        merged: dict[str, list] = {"tokens": [], "token_logprobs": [], "text_offset": []}
        for c in mine:
            for key in merged:
                merged[key] += (c["logprobs"] or {}).get(key, [])
        assert merged["tokens"] == elp["tokens"] and merged["text_offset"] == elp["text_offset"]
        values = merged["token_logprobs"]  # batched with its siblings: within float rounding
        assert values[0] is None and elp["token_logprobs"][0] is None
        pairs = zip(values[1:], elp["token_logprobs"][1:], strict=True)
        assert all(abs(a - b) < ATOL for a, b in pairs)


@pytest.mark.parametrize("stream", [False, True])
def test_completions_logprobs_name_byte_tokens_and_offset_by_characters(http, server_oracle,
                                                                         stream):  # fmt: skip
    """A character written as several byte tokens (the tiny tokenizer spells every non-ASCII
    byte apart): each token is named by its bytes (one U+FFFD text would name them all), and
    each starts where its character does; a stream's chunks end inside characters."""
    tokenizer, _ = server_oracle
    text = "🎉é🎉"
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert len(ids) == len(text.encode())  # a token a byte
    body = {"prompt": "Hi", "max_tokens": 12, "temperature": 0, "logprobs": 2,
            "structured_outputs": {"choice": [text]}}  # fmt: skip
    if stream:
        choices = [c["choices"][0] for c in sse(http, "/v1/completions", body) if c["choices"]]
        got_text = "".join(c["text"] for c in choices)
        lp = {key: [v for c in choices if c["logprobs"] for v in c["logprobs"][key]]
              for key in ("tokens", "text_offset", "top_logprobs")}  # fmt: skip
    else:
        choice = http.post("/v1/completions", json=body).json()["choices"][0]
        got_text, lp = choice["text"], choice["logprobs"]
    assert got_text == text
    assert lp["tokens"] == [legacy_name(tokenizer, t) for t in ids]
    assert lp["tokens"][:4] == ["bytes:\\xf0", "bytes:\\x9f", "bytes:\\x8e", "bytes:\\x89"]
    assert lp["text_offset"] == [0, 0, 0, 0, 1, 1, 2, 2, 2, 2]
    for name, top in zip(lp["tokens"], lp["top_logprobs"], strict=True):
        assert name in top and len(top) in (2, 3)  # distinct tokens, distinct keys

    # echo of a prompt that ends inside a character: the prompt's text and the output's are
    # decoded apart (the cut character U+FFFD), the output's offsets after the prompt's text
    prompt, last = ids[:-1], ids[-1]
    body = {"prompt": prompt, "echo": True, "max_tokens": 2, "temperature": 0, "logprobs": 1,
            "logit_bias": {str(last): 100}, "stream": stream}  # fmt: skip
    if stream:
        choices = [c["choices"][0] for c in sse(http, "/v1/completions", body) if c["choices"]]
        got_text = "".join(c["text"] for c in choices)
        offsets = [o for c in choices if c["logprobs"] for o in c["logprobs"]["text_offset"]]
    else:
        choice = http.post("/v1/completions", json=body).json()["choices"][0]
        got_text, offsets = choice["text"], choice["logprobs"]["text_offset"]
    echoed = tokenizer.decode(prompt, skip_special_tokens=False)
    assert got_text == echoed + tokenizer.decode([last, last])
    assert offsets == char_offsets(tokenizer, prompt) + [len(echoed), len(echoed) + 1]
    assert all(o < len(got_text) for o in offsets)


def test_prompt_logprobs_in_responses(http, server_oracle):
    tokenizer, oracle = server_oracle
    ids = tokenizer.encode(PROMPT)
    rows = oracle(ids)
    r = http.post("/v1/completions", json={**BODY, "prompt_logprobs": 2})
    prompt = r.json()["choices"][0]["prompt_logprobs"]
    assert len(prompt) == len(ids) and prompt[0] is None
    for j in range(1, len(ids)):
        entry = prompt[j][str(ids[j])]
        assert abs(entry["logprob"] - float(rows[j - 1, ids[j]])) < ATOL
        assert entry["decoded_token"] == tokenizer.token_text(ids[j]) and entry["rank"] >= 1
    r = http.post("/v1/chat/completions", json={**CHAT, "prompt_logprobs": 0})
    assert r.status_code == 200, r.text
    prompt = r.json()["prompt_logprobs"]
    assert prompt[0] is None and all(len(p) == 1 for p in prompt[1:])
    # echo's logprobs ask for more of the same positions: each field keeps its own N
    body = {**BODY, "echo": True, "logprobs": 3, "prompt_logprobs": 1}
    choice = http.post("/v1/completions", json=body).json()["choices"][0]
    prompt = choice["prompt_logprobs"]
    assert all(str(ids[j]) in prompt[j] and len(prompt[j]) <= 2 for j in range(1, len(ids)))
    assert any(len(p) == 2 for p in prompt[1:])
    tops = choice["logprobs"]["top_logprobs"]
    assert any(len(top) >= 3 for top in tops[1 : len(ids)])  # not cut to prompt_logprobs' 1


def test_chat_logprobs_with_the_openai_client(tiny_server, server_oracle):
    tokenizer, oracle = server_oracle
    client = OpenAI(base_url=tiny_server[1] + "/v1", api_key="x", max_retries=0)
    messages = CHAT["messages"]
    resp = client.chat.completions.create(model=tiny_server[0].state.client.engine.model_name,
                                          messages=messages, max_tokens=6, temperature=0,
                                          logprobs=True, top_logprobs=3,
                                          extra_body={"ignore_eos": True})  # fmt: skip
    content = resp.choices[0].logprobs.content
    assert len(content) == resp.usage.completion_tokens == 6
    ids = tokenizer.encode_chat(messages)
    out = greedy_ids(oracle, ids, 6)
    rows = oracle(ids + out)
    assert b"".join(bytes(c.bytes) for c in content).decode(errors="replace") == tokenizer.decode(
        out
    )
    for j, c in enumerate(content):
        assert c.token == tokenizer.token_text(out[j])
        assert bytes(c.bytes) == tokenizer.token_bytes(out[j])
        assert abs(c.logprob - float(rows[len(ids) - 1 + j, out[j]])) < ATOL
        assert len(c.top_logprobs) == 3
        assert [t.logprob for t in c.top_logprobs] == sorted((t.logprob for t in c.top_logprobs),
                                                             reverse=True)  # fmt: skip
        assert abs(c.top_logprobs[0].logprob - float(rows[len(ids) - 1 + j].max())) < ATOL
    stream = client.chat.completions.create(model=resp.model, messages=messages, max_tokens=6,
                                            temperature=0, logprobs=True, top_logprobs=3,
                                            stream=True, extra_body={"ignore_eos": True})  # fmt: skip
    streamed = [e for chunk in stream for ch in chunk.choices if ch.logprobs
                for e in ch.logprobs.content or []]  # fmt: skip
    assert [(e.token, e.logprob) for e in streamed] == [(c.token, c.logprob) for c in content]
    # logprobs off (the default) gives none; top_logprobs 0 gives the token's alone
    plain = client.chat.completions.create(model=resp.model, messages=messages, max_tokens=2)
    assert plain.choices[0].logprobs is None
    zero = client.chat.completions.create(model=resp.model, messages=messages, max_tokens=2,
                                          logprobs=True)  # fmt: skip
    assert all(c.top_logprobs == [] for c in zero.choices[0].logprobs.content)


def test_server_listed_tokens_logprobs(tiny_server, http, server_oracle):
    """vLLM's `logprob_token_ids` on chat (the openai client, streamed and not) and
    completions: each position's top list is its token, then the listed ones in order, with
    transformers' logprobs; the request's own checks are 400s naming the field."""
    tokenizer, oracle = server_oracle
    listed = [250, 9, 3]
    client = OpenAI(base_url=tiny_server[1] + "/v1", api_key="x", max_retries=0)
    model = tiny_server[0].state.client.engine.model_name
    kw = dict(model=model, messages=CHAT["messages"], max_tokens=5, temperature=0, logprobs=True,
              top_logprobs=2, extra_body={"ignore_eos": True, "logprob_token_ids": listed})  # fmt: skip
    resp = client.chat.completions.create(**kw)
    ids = tokenizer.encode_chat(CHAT["messages"])
    out = greedy_ids(oracle, ids, 5)
    rows = oracle(ids + out)
    content = resp.choices[0].logprobs.content
    for j, c in enumerate(content):
        row = rows[len(ids) - 1 + j]
        want = [out[j], *(t for t in listed if t != out[j])]
        assert [t.token for t in c.top_logprobs] == [tokenizer.token_text(t) for t in want]
        for t, entry in zip(want, c.top_logprobs, strict=True):
            assert abs(entry.logprob - float(row[t])) < ATOL
    streamed = [e for chunk in client.chat.completions.create(**kw, stream=True)
                for ch in chunk.choices if ch.logprobs for e in ch.logprobs.content or []]  # fmt: skip
    assert [[t.logprob for t in e.top_logprobs] for e in streamed] == [
        [t.logprob for t in c.top_logprobs] for c in content
    ]
    r = http.post("/v1/completions", json={**BODY, "max_tokens": 3, "logprobs": 1,
                                            "logprob_token_ids": listed})  # fmt: skip
    assert r.status_code == 200, r.text
    lp = r.json()["choices"][0]["logprobs"]
    p_ids = tokenizer.encode(PROMPT)
    out = greedy_ids(oracle, p_ids, 3)
    rows = oracle(p_ids + out)
    for j, top in enumerate(lp["top_logprobs"]):
        want = [out[j], *(t for t in listed if t != out[j])]
        assert list(top) == [legacy_name(tokenizer, t) for t in want]
        for t in want:
            assert abs(top[legacy_name(tokenizer, t)] - float(rows[len(p_ids) - 1 + j, t])) < ATOL
    vocab = tiny_server[0].state.client.engine.model_config.vocab_size
    for path, body in [
        ("/v1/chat/completions", {**CHAT, "logprob_token_ids": [1]}),  # no logprobs: true
        ("/v1/chat/completions", {**CHAT, "logprobs": True, "logprob_token_ids": [vocab]}),
        ("/v1/chat/completions", {**CHAT, "logprobs": True, "logprob_token_ids": [1, 1]}),
        ("/v1/chat/completions", {**CHAT, "logprobs": True, "top_logprobs": 99,
                                  "logprob_token_ids": [1]}),
        ("/v1/completions", {**BODY, "logprob_token_ids": [1]}),  # no logprobs
        ("/v1/completions", {**BODY, "logprobs": 1, "post_sampling_probs": True,
                             "logprob_token_ids": [1]}),
        ("/v1/completions", {**BODY, "logprobs": 1, "echo": True, "max_tokens": 0,
                             "logprob_token_ids": [1]}),
    ]:  # fmt: skip
        r = http.post(path, json=body)
        param = "top_logprobs" if "top_logprobs" in body else "logprob_token_ids"
        assert (r.status_code, r.json()["error"]["param"]) == (400, param), (body, r.text)
    r = http.post("/v1/completions", json={**BODY, "logprob_token_ids": []})  # none listed
    assert r.status_code == 200 and r.json()["choices"][0]["logprobs"] is None


def test_server_bad_words_and_allowed_token_ids(http, server_oracle):
    tokenizer, _ = server_oracle
    r = http.post("/v1/completions", json={**BODY, "allowed_token_ids": [5, 9]})
    assert r.status_code == 200, r.text
    assert set(tokenizer.encode(r.json()["choices"][0]["text"], False)) <= {5, 9}
    # logit_bias would make every token 7; bad_words bans it (its text, as a word)
    word = tokenizer.token_text(7)
    for path, body in [("/v1/completions", {**BODY, "logprobs": 0}),
                       ("/v1/chat/completions", {**CHAT, "logprobs": True})]:  # fmt: skip
        r = http.post(path, json={**body, "logit_bias": {"7": 100}})
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["text" if "prompt" in body else "message"]
        r = http.post(path, json={**body, "logit_bias": {"7": 100}, "bad_words": [word]})
        assert r.status_code == 200, r.text
        lp = r.json()["choices"][0]["logprobs"]
        tokens = lp["tokens"] if "prompt" in body else [c["token"] for c in lp["content"]]
        assert len(tokens) == 6 and word not in tokens
