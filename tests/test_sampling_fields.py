"""Issue 19 (subset): presence/frequency/repetition penalties, min_p and logit_bias.

The processed logits are checked against transformers' own processors and OpenAI's penalty
formula on random logits and histories; then by their effect through `LLM.generate` and the
server (the in-process `tiny_server`), including a penalised request beside plain ones and
penalties across preemption."""

from __future__ import annotations

import dataclasses

import httpx
import pytest
import torch
from conftest import lines_run, record_preemptions
from transformers import (
    MinPLogitsWarper,
    RepetitionPenaltyLogitsProcessor,
    SequenceBiasLogitsProcessor,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from roseinfer import LLM
from roseinfer.engine import InferenceEngine
from roseinfer.layers.sampler import (
    Sampler,
    apply_penalties,
    apply_top_k_top_p,
    min_p_filter,
    sample_from,
    unnormalised_probs,
)
from roseinfer.sampling_params import SamplingParams

V = 50


@dataclasses.dataclass(eq=False)
class Hist:
    seq_id: int
    token_ids: list[int]
    num_prompt_tokens: int
    is_finished: bool = False
    bad_words_token_ids: tuple[tuple[int, ...], ...] = ()


def histories(gen: torch.Generator, b: int) -> list[Hist]:
    out = []
    for i in range(b):
        n_prompt = int(torch.randint(1, 12, (1,), generator=gen))
        n_out = int(torch.randint(0, 15, (1,), generator=gen))
        ids = torch.randint(0, V, (n_prompt + n_out,), generator=gen).tolist()
        out.append(Hist(i, ids, n_prompt))
    return out


def openai_penalties(logits: torch.Tensor, h: Hist, freq: float, pres: float) -> torch.Tensor:
    out = logits.clone()
    generated = h.token_ids[h.num_prompt_tokens :]
    for t in set(generated):
        c = generated.count(t)
        out[t] -= freq * c + pres * (c > 0)
    return out


# ---- the processed logits against transformers and OpenAI's formula ----------------------------


def test_penalties_match_transformers_and_openai():
    gen = torch.Generator().manual_seed(0)
    for _ in range(5):
        b = 4
        logits = torch.randn(b, V, generator=gen) * 3
        hs = histories(gen, b)
        rep = torch.rand(b, generator=gen) * 2 + 0.2
        freq = torch.rand(b, generator=gen) * 4 - 2
        pres = torch.rand(b, generator=gen) * 4 - 2
        from roseinfer.layers.sampler import TokenCounts

        seen = TokenCounts(torch.device("cpu")).gather(hs, range(b), V)
        got = apply_penalties(logits.clone(), seen, rep, freq, pres)
        for i, h in enumerate(hs):
            ids = torch.tensor([h.token_ids])
            want = RepetitionPenaltyLogitsProcessor(float(rep[i]))(ids, logits[i : i + 1].clone())
            want = openai_penalties(want[0], h, float(freq[i]), float(pres[i]))
            torch.testing.assert_close(got[i], want)


def test_token_counts_are_incremental_and_rebuilt_on_mismatch():
    from roseinfer.layers.sampler import TokenCounts

    tc = TokenCounts(torch.device("cpu"))
    a, b = Hist(1, [1, 2, 3], 2), Hist(2, [4, 4], 1)
    tc.gather([a, b], [0, 1], V)
    a.token_ids += [3, 5]  # generated on
    b.token_ids[:] = [4, 4, 7]  # rewritten (as if recomputed differently): still derived from ids
    counts, seen = dense(tc.gather([b, a], [0, 1], V), 2)
    assert counts[1, 3].item() == 2 and counts[1, 5].item() == 1 and counts[1].sum() == 3
    assert counts[0, 4].item() == 1 and counts[0, 7].item() == 1 and counts[0].sum() == 2
    assert seen[1].nonzero().flatten().tolist() == [1, 2, 3, 5]
    b.token_ids[:] = [4]  # fewer outputs than counted: rebuilt
    counts, seen = dense(tc.gather([b], [0], V), 1)
    assert counts.sum() == 0 and seen[0].nonzero().flatten().tolist() == [4]
    a.is_finished = True
    c = Hist(3, [9, 9, 9], 1)
    counts, seen = dense(tc.gather([c], [5], V), 6)  # a's row is reused, cleared
    assert counts[5, 9].item() == 2 and counts.sum() == 2 and seen.sum() == 1


def llamacpp_penalties(logits: torch.Tensor, h: Hist, window: int, rep: float, freq: float,
                       pres: float) -> torch.Tensor:  # fmt: skip
    """llama.cpp's `llama_sampler_penalties_apply`, over the last `window` tokens of the prompt
    and output (-1: all), written from its source."""
    out = logits.clone()
    last = h.token_ids if window < 0 else h.token_ids[max(0, len(h.token_ids) - window) :]
    for t in set(last):
        c = last.count(t)
        out[t] = out[t] * rep if out[t] <= 0 else out[t] / rep
        out[t] -= c * freq + (c > 0) * pres
    return out


@pytest.mark.parametrize("window", [-1, 1, 3, 8, 64])
def test_a_window_of_the_penalties_follows_the_sequence_as_llamacpps(window):
    """Counts of the last n tokens of the prompt and output, kept step by step (tokens leaving
    the window taken off), equal a recount at every step; the penalised logits equal
    llama.cpp's formula over that window; a rewritten sequence is rebuilt."""
    from roseinfer.layers.sampler import TokenCounts

    gen = torch.Generator().manual_seed(window + 2)
    tc = TokenCounts(torch.device("cpu"))
    hs = [Hist(i, torch.randint(0, 12, (5 + 3 * i,), generator=gen).tolist(), 5 + 3 * i)
          for i in range(3)]  # fmt: skip
    plain = Hist(9, [1, 2, 1], 2)  # vLLM's penalties beside them, in the same batch
    for step in range(20):
        logits = torch.randn(4, V, generator=gen) * 3
        seen = tc.gather([*hs, plain], range(4), V, [window] * 3 + [None])
        got = apply_penalties(logits.clone(), seen, torch.full((4,), 1.3),
                              torch.full((4,), 0.5), torch.full((4,), 0.25))  # fmt: skip
        for i, h in enumerate(hs):
            want = llamacpp_penalties(logits[i], h, window, 1.3, 0.5, 0.25)
            torch.testing.assert_close(got[i], want, msg=f"step {step} row {i}")
        ids = torch.tensor([plain.token_ids])
        want = RepetitionPenaltyLogitsProcessor(1.3)(ids, logits[3:4].clone())
        torch.testing.assert_close(got[3], openai_penalties(want[0], plain, 0.5, 0.25))
        for h in hs:  # a token of a small vocabulary: repeats enter and leave the window
            h.token_ids.append(int(torch.randint(0, 12, (1,), generator=gen)))
        plain.token_ids.append(step % 5)
        if step == 10:
            hs[0].token_ids[:] = hs[0].token_ids[:4]  # rewritten shorter: rebuilt


def dense(seen, rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """SeenTokens as dense [rows, V] (counts, seen)."""
    counts = torch.zeros(rows, V, dtype=torch.int32)
    counts[seen.rows, seen.cols] = seen.counts
    touched = torch.zeros(rows, V, dtype=torch.bool)
    touched[seen.rows, seen.cols] = True
    return counts, touched


def test_warpers_and_bias_match_transformers():
    gen = torch.Generator().manual_seed(1)
    ids = torch.zeros(1, 1, dtype=torch.long)
    for _ in range(10):
        logits = torch.randn(1, V, generator=gen) * 2
        k = int(torch.randint(1, V, (1,), generator=gen))
        p = float(torch.rand(1, generator=gen)) * 0.9 + 0.05
        m = float(torch.rand(1, generator=gen))
        got = apply_top_k_top_p(logits.clone(), torch.tensor([k]), None)
        assert torch.equal(got, TopKLogitsWarper(k)(ids, logits.clone()))
        got = apply_top_k_top_p(logits.clone(), None, torch.tensor([p]))
        assert torch.equal(got, TopPLogitsWarper(p)(ids, logits.clone()))
        kept = min_p_filter(unnormalised_probs(logits), [m]) > 0
        assert torch.equal(kept, MinPLogitsWarper(m)(ids, logits.clone()) > float("-inf"))
        # rows of different min_p (and none) in one batch
        rows = torch.randn(3, V, generator=gen) * 2
        kept = min_p_filter(unnormalised_probs(rows), [m, 0.0, m / 2]) > 0
        assert kept[1].all()
        for i, value in ((0, m), (2, m / 2)):
            want = MinPLogitsWarper(value)(ids, rows[i : i + 1].clone()) > float("-inf")
            assert torch.equal(kept[i : i + 1], want)
    # logit_bias through the Sampler (greedy rows take it too) against SequenceBias
    logits = torch.randn(2, V, generator=gen)
    bias = {3: 5.0, 7: -100.0, 11: 2.5}
    want = SequenceBiasLogitsProcessor({(t,): b for t, b in bias.items()})(
        torch.zeros(2, 1, dtype=torch.long), logits.clone()
    )
    sampler = Sampler("cpu", 0, [])
    params = [SamplingParams(temperature=0, logit_bias=bias)] * 2
    hs = [Hist(0, [1], 1), Hist(1, [1], 1)]
    states = [
        sampler.new_row_state(p, h.bad_words_token_ids) for p, h in zip(params, hs, strict=True)
    ]
    got = sampler(logits.clone(), params, states, [0, 0], hs).token_ids
    assert torch.equal(got, want.argmax(dim=-1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rows_with_logits_that_are_not_finite_are_reported_alone(dtype):
    """A greedy row holding NaN or +inf, a sampled row holding +inf, and a greedy row that is
    -inf everywhere: each is named in `non_finite_rows`, in an all-greedy batch (which returns
    early) and in a mixed one; the finite rows are not."""
    logits = torch.randn(5, 40, generator=torch.Generator().manual_seed(0)).to(dtype)
    logits[1, 3] = float("nan")
    logits[2, 9] = float("inf")
    logits[3] = float("-inf")
    greedy = SamplingParams(temperature=0)
    sampled = SamplingParams(temperature=0.8, seed=1)
    sampler = Sampler("cpu", 0, [])
    out = sampler(logits.clone(), [greedy] * 5, [sampler.new_row_state(greedy)] * 5, [0] * 5)
    assert out.non_finite_rows == [1, 2, 3]
    params = [sampled, greedy, sampled, greedy, greedy]
    out = sampler(logits.clone(), params, [sampler.new_row_state(p) for p in params], [0] * 5)
    assert out.non_finite_rows == [1, 2, 3]


def test_sample_from_draws_from_the_distribution():
    """The inverse-CDF draw: zero-probability tokens never, the others at their frequency (a
    vocabulary that is not a multiple of the block, unnormalised rows)."""
    gen = torch.Generator().manual_seed(3)
    probs = torch.rand(1, 300, generator=gen) ** 4
    probs[0, torch.randperm(300, generator=gen)[:200]] = 0.0
    probs[0, 299] = 0.0  # the last token too: rounding must not land on it
    n = 100_000
    u = torch.rand(n, generator=gen, dtype=torch.float64)
    u[:10] = 1 - 1e-17  # the top of [0, 1)
    drawn = sample_from(probs.expand(n, -1) * 3.0, u)
    freq = torch.bincount(drawn, minlength=300).double() / n
    want = (probs[0] / probs[0].sum()).double()
    assert (freq[want == 0] == 0).all()
    sigma = (want * (1 - want) / n).sqrt()
    assert ((freq - want).abs() <= 5 * sigma + 1e-9).all()


def test_sampler_order_matches_transformers_chain():
    """bias, penalties, temperature, top-k, top-p, min-p: the distribution the sampler draws
    from equals transformers' processors chained in that order (checked via min_p=1 greedy)."""
    gen = torch.Generator().manual_seed(2)
    logits = torch.randn(3, V, generator=gen) * 3
    hs = histories(gen, 3)
    bias = {5: 3.0}
    params = SamplingParams(temperature=0.7, top_k=10, top_p=0.9, min_p=1.0, logit_bias=bias,
                            repetition_penalty=1.3, frequency_penalty=0.5,
                            presence_penalty=-0.4)  # fmt: skip
    sampler = Sampler("cpu", 0, [])
    states = [sampler.new_row_state(params, h.bad_words_token_ids) for h in hs]
    got = sampler(logits.clone(), [params] * 3, states, [0] * 3, hs).token_ids
    for i, h in enumerate(hs):
        row = logits[i : i + 1].clone()
        row[0, 5] += 3.0
        row = RepetitionPenaltyLogitsProcessor(1.3)(torch.tensor([h.token_ids]), row)
        row = openai_penalties(row[0], h, 0.5, -0.4).unsqueeze(0) / 0.7
        for warp in (TopKLogitsWarper(10), TopPLogitsWarper(0.9), MinPLogitsWarper(1.0)):
            row = warp(torch.zeros(1, 1, dtype=torch.long), row)
        assert int(got[i]) == int(row.argmax())


def test_validation_messages_name_the_field():
    for kw, name in [
        ({"presence_penalty": 2.5}, "presence_penalty"),
        ({"frequency_penalty": float("nan")}, "frequency_penalty"),
        ({"repetition_penalty": 0}, "repetition_penalty"),
        ({"min_p": 1.5}, "min_p"),
        ({"logit_bias": {1: 101}}, "logit_bias"),
        ({"logit_bias": {-1: 1}}, "logit_bias"),
        ({"logit_bias": {"x": 1}}, "logit_bias"),
        ({"logit_bias": {"\u0662\u0668": 1}}, "logit_bias"),  # Arabic-Indic "28"
        ({"logit_bias": {"28": 100, "028": -100}}, "logit_bias"),  # one token twice
        ({"logit_bias": {28: 1, "28": 1}}, "logit_bias"),
    ]:
        with pytest.raises(ValueError, match=f"^{name}"):
            SamplingParams(**kw)
    assert SamplingParams(logit_bias={"3": 1}).logit_bias == {3: 1.0}
    assert SamplingParams(logit_bias={}).logit_bias is None


# ---- by effect through LLM.generate --------------------------------------------------------------


@pytest.fixture(scope="module")
def llm(tiny_model_dir) -> LLM:
    return LLM(model=tiny_model_dir("llama"), dtype="float32", block_size=4, num_kv_blocks=256,
               max_num_seqs=4, max_num_batched_tokens=32, lone_prefill_tokens=0)  # fmt: skip


def greedy(n: int = 16, **kw) -> SamplingParams:
    return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True, **kw)


PROMPT = "The quick brown fox"


def ids_of(llm: LLM, params: SamplingParams, prompt: str = PROMPT) -> list[int]:
    return llm.generate(prompt, params, use_tqdm=False)[0].token_ids


def test_logit_bias_min_p_and_frequency_penalty_by_effect(llm):
    assert set(ids_of(llm, greedy(logit_bias={7: 100}))) == {7}
    sampled = SamplingParams(max_tokens=16, temperature=1.0, min_p=1.0, ignore_eos=True, seed=3)
    assert ids_of(llm, sampled) == ids_of(llm, greedy())
    # a repetitive greedy continuation repeats less with a frequency penalty
    plain = ids_of(llm, greedy(32))
    penalised = ids_of(llm, greedy(32, frequency_penalty=2.0))
    assert len(set(plain)) < len(plain)  # the tiny random model does repeat
    assert len(penalised) - len(set(penalised)) < len(plain) - len(set(plain))


def test_penalised_request_leaves_plain_ones_unchanged(llm):
    prompts = ["The quick brown fox", "def add(a, b):", "Hello, world!"]
    plain = [greedy(12), SamplingParams(max_tokens=12, seed=5, ignore_eos=True), greedy(12)]
    mixed = plain[:1] + [greedy(12, presence_penalty=1.5, repetition_penalty=1.5, min_p=0.1,
                                logit_bias={3: 4.0})] + plain[1:]  # fmt: skip
    outs = llm.generate([prompts[0], prompts[1], prompts[1], prompts[2]], mixed, use_tqdm=False)
    for out, p, prompt in zip([outs[0], outs[2], outs[3]], plain, prompts, strict=True):
        assert out.token_ids == ids_of(llm, p, prompt)
    assert outs[1].token_ids == ids_of(llm, mixed[1], prompts[1])


def test_penalties_survive_preemption(tiny_model_dir):
    """Few KV blocks: sequences are preempted and recomputed, and still get the penalties they
    get alone."""
    small = LLM(model=tiny_model_dir("llama"), dtype="float32", block_size=4, num_kv_blocks=14,
                max_num_seqs=4, max_num_batched_tokens=16, lone_prefill_tokens=0)  # fmt: skip
    preempted = record_preemptions(small)
    params = [greedy(20, frequency_penalty=1.0, repetition_penalty=1.3, presence_penalty=0.5)] * 4
    prompts = ["The quick brown fox", "def add(a, b):", "Hello, world!", "One two three"]
    outs = small.generate(prompts, params, use_tqdm=False)
    assert preempted
    for out, prompt in zip(outs, prompts, strict=True):
        ids = small.encode(prompt)
        alone = InferenceEngine(small.config, loaded=small.loaded)
        assert out.token_ids == alone.generate_ids(ids, params[0])


# ---- through the server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=60) as c:
        yield c


BODY = {"prompt": PROMPT, "max_tokens": 8, "temperature": 0, "ignore_eos": True}


def tokens(http: httpx.Client, tokenizer, **fields) -> list[int]:
    r = http.post("/v1/completions", json={**BODY, **fields})
    assert r.status_code == 200, r.text
    return tokenizer.encode(r.json()["choices"][0]["text"], False)


def test_server_honours_the_fields(http, tiny_server):
    client = tiny_server[0].state.client
    tokenizer = client.engine.tokenizer
    r = http.post("/v1/completions", json={**BODY, "logit_bias": {"7": 100}})
    assert r.status_code == 200, r.text
    text = r.json()["choices"][0]["text"]
    assert text == tokenizer.decode([7] * 8)
    r = http.post("/v1/chat/completions", json={
        "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0,
        "ignore_eos": True, "logit_bias": {"7": 100}})  # fmt: skip
    assert r.json()["choices"][0]["message"]["content"] == tokenizer.decode([7] * 4)
    same = tokens(http, tokenizer, repetition_penalty=1.5)
    assert tokens(http, tokenizer, repeat_penalty=1.5) == same
    assert tokens(http, tokenizer, min_p=1.0, temperature=1.0, seed=1) == tokens(http, tokenizer)
    for fields, param in [
        ({"logit_bias": {"999999": 1}}, "logit_bias"),
        ({"logit_bias": {"1": 200}}, "logit_bias"),
        ({"presence_penalty": 3}, "presence_penalty"),
        ({"frequency_penalty": -2.5}, "frequency_penalty"),
        ({"repeat_penalty": 0}, "repeat_penalty"),
        ({"repetition_penalty": -1}, "repetition_penalty"),
        ({"repetition_penalty": 1.1, "repeat_penalty": 1.2}, "repeat_penalty"),
        ({"min_p": -0.1}, "min_p"),
        ({"repeat_last_n": -2, "repeat_penalty": 1.1}, "repeat_last_n"),
        ({"repeat_last_n": 1.5}, "repeat_last_n"),
        ({"repeat_last_n": True}, "repeat_last_n"),
    ]:
        r = http.post("/v1/completions", json={**BODY, **fields})
        assert (r.status_code, r.json()["error"]["param"]) == (400, param), (fields, r.text)


def test_llamacpps_penalties_read_the_last_n_tokens_of_the_prompt_and_output(http):
    """A token the prompt holds four times, biased to be the greedy one: vLLM's frequency
    penalty counts the output only and leaves it first; llama.cpp's (its `repeat_last_n`, and
    /completion's default window of 64) counts the prompt too and takes it off; a window of 0
    turns the penalties off."""
    body = {"prompt": [7, 7, 7, 7], "max_tokens": 1, "temperature": 0, "logit_bias": {"7": 6},
            "frequency_penalty": 2}  # fmt: skip

    def first(path: str = "/v1/completions", **fields) -> str:
        r = http.post(path, json={**body, **fields})
        assert r.status_code == 200, r.text
        answer = r.json()
        return answer["content"] if path == "/completion" else answer["choices"][0]["text"]

    assert first() == first(frequency_penalty=0) == first(repeat_last_n=0)
    penalised = first(repeat_last_n=-1)
    assert penalised == first(repeat_last_n=4) == first("/completion") != first()
    assert first("/completion", repeat_last_n=0) == first()


def test_a_steps_python_work_does_not_grow_with_a_rows_id_lists(monkeypatch):
    """A row's allowed_token_ids, logit_bias, stop_token_ids (before min_tokens) and bad words
    are made into tensors and lookups once (`Sampler.new_row_state`); a step's Python work is
    the same for 3 ids as for 3,000 (walked at every step, 400,000 allowed ids with n = 32 had
    held every other request 22 s). Counted in lines the interpreter runs in the sampler, and
    in the Python lists a step makes tensors of (one-token bad words had been one, per row)."""
    vocab = 10_000
    longest = 0
    tensor = torch.tensor

    def watched_tensor(data, *args, **kwargs):
        nonlocal longest
        if isinstance(data, list | tuple):
            longest = max(longest, len(data))
        return tensor(data, *args, **kwargs)

    def lines_per_step(size: int) -> int:
        ids, stops, banned = (range(k * size + 1, (k + 1) * size + 1) for k in range(3))
        params = SamplingParams(temperature=0.8, seed=1, allowed_token_ids=ids, min_tokens=5,
                                logit_bias={t: 0.5 for t in ids}, stop_token_ids=stops,
                                bad_words=["x"])  # fmt: skip
        words = tuple((t, t + 1) for t in banned) + tuple((t,) for t in banned)
        hs = [Hist(i, [1, 2, 3, 4], 2, bad_words_token_ids=words) for i in range(4)]
        sampler = Sampler("cpu", 0, [0])
        states = [sampler.new_row_state(params, h.bad_words_token_ids) for h in hs]
        logits = torch.randn(4, vocab, generator=torch.Generator().manual_seed(0))
        monkeypatch.setattr(torch, "tensor", watched_tensor)
        try:
            out, count = lines_run(
                "sampler.py", lambda: sampler(logits.clone(), [params] * 4, states, [3] * 4, hs)
            )
        finally:
            monkeypatch.setattr(torch, "tensor", tensor)
        assert all(t in ids for t in out.token_ids.tolist()), out
        return count

    small, large = lines_per_step(3), lines_per_step(3000)
    assert large <= small + 20, (small, large)
    assert longest <= 8, longest  # the batch's rows, never a row's ids
