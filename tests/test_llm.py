"""The offline API: `LLM(model=...).generate(prompts, SamplingParams(...))` on a tiny model.

Every output is checked against the same request run alone (`InferenceEngine.generate_ids`),
and every call must leave the KV cache with no block referenced.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import crowded_llm

from roseinfer import LLM, InferenceEngine, RequestOutput, SamplingParams
from roseinfer.engine import InvalidRequestError

PROMPTS = [
    "The quick brown fox",
    "Hello, world! How are you",
    "def add(a, b):",
    "Paris is the capital of France. Berlin is the capital of",
    "Numbers: 0 1 2",
]


def greedy(n: int, **kw) -> SamplingParams:
    return SamplingParams(max_new_tokens=n, temperature=0, ignore_eos=True, **kw)


@pytest.fixture(scope="module")
def llm(tiny_model_dir) -> LLM:
    return crowded_llm(tiny_model_dir("llama"))


def alone(llm: LLM, prompt_ids: list[int], params: SamplingParams) -> list[int]:
    return InferenceEngine(llm.config, loaded=llm.loaded).generate_ids(prompt_ids, params)


def assert_idle(llm: LLM) -> None:
    bm = llm.engine.block_manager
    assert not llm.engine.has_unfinished()
    assert all(b.ref_count == 0 for b in bm.blocks) and bm.num_free_blocks == bm.num_blocks


def test_generate_matches_single_requests_in_order(llm):
    params = greedy(10)
    outs = llm.generate(PROMPTS, params, use_tqdm=False)
    assert len({o.request_id for o in outs}) == len(PROMPTS)  # in order: prompt ids below
    for prompt, out in zip(PROMPTS, outs, strict=True):
        assert isinstance(out, RequestOutput)
        ids = llm.encode(prompt)
        assert out.prompt_token_ids == ids
        assert out.token_ids == alone(llm, ids, params)
        assert out.text == llm.tokenizer.decode(out.token_ids)
        assert out.finish_reason == "length"
        assert 0 <= out.metrics.ttft <= out.metrics.e2e_latency
    assert_idle(llm)


def test_single_string_token_ids_and_per_request_params(llm):
    [one] = llm.generate(PROMPTS[0], greedy(4), use_tqdm=False)
    assert one.token_ids == alone(llm, llm.encode(PROMPTS[0]), greedy(4))
    id_prompts = [[5, 6, 7], [100, 3, 42, 42, 9, 1], [7]]
    params = [greedy(3), greedy(7), greedy(1)]
    outs = llm.generate(id_prompts, params, use_tqdm=False)
    for ids, p, out in zip(id_prompts, params, outs, strict=True):
        assert out.prompt_token_ids == ids
        assert out.token_ids == alone(llm, ids, p) and len(out.token_ids) == p.max_new_tokens
    assert_idle(llm)


def test_seeded_sampling_matches_the_single_request(llm):
    params = SamplingParams(
        max_new_tokens=12, temperature=0.9, top_k=40, top_p=0.95, seed=123, ignore_eos=True
    )
    outs = llm.generate(PROMPTS[:3], params, use_tqdm=False)
    for prompt, out in zip(PROMPTS[:3], outs, strict=True):
        assert out.token_ids == alone(llm, llm.encode(prompt), params)


def test_stop_token_ids_and_stop_strings(llm):
    ids = llm.encode(PROMPTS[3])
    ref = alone(llm, ids, greedy(16))
    # A stop token: generation ends right after it, with reason "stop".
    k = 5
    [out] = llm.generate([ids], greedy(16, stop_token_ids=(ref[k],)), use_tqdm=False)
    assert out.token_ids == ref[: ref.index(ref[k]) + 1] and out.finish_reason == "stop"
    # A stop string: the text ends before it, reason "stop", and the request is freed.
    ref_text = llm.tokenizer.decode(ref)
    stop = ref_text[len(ref_text) // 2 : len(ref_text) // 2 + 2]
    assert stop and ref_text.find(stop) > 0
    [out] = llm.generate([ids], greedy(16, stop=(stop,)), use_tqdm=False)
    assert out.text == ref_text[: ref_text.find(stop)]
    assert out.finish_reason == "stop"
    assert out.token_ids == ref[: len(out.token_ids)] and len(out.token_ids) < 16
    # include_stop_str_in_output (vLLM's): the same end, the stop string kept
    [kept] = llm.generate([ids], greedy(16, stop=(stop,), include_stop_str_in_output=True),
                          use_tqdm=False)  # fmt: skip
    assert kept.text == out.text + stop and kept.token_ids == out.token_ids
    assert kept.finish_reason == "stop" and kept.outputs[0].stop_reason == stop
    # ... and the text of a stop token that ended it (vLLM's)
    params = greedy(16, stop_token_ids=(ref[k],), include_stop_str_in_output=True)
    [kept] = llm.generate([ids], params, use_tqdm=False)
    cut = ref.index(ref[k]) + 1
    assert kept.token_ids == ref[:cut] and kept.text == llm.tokenizer.decode(ref[:cut])
    assert_idle(llm)


def test_skip_special_tokens_false_keeps_their_text(llm):
    [special] = llm.tokenizer.encode("<|im_start|>", add_special_tokens=False)
    bias = {special: 100.0}
    [hidden, shown] = [
        llm.generate(["Hi"], greedy(2, logit_bias=bias, skip_special_tokens=skip), use_tqdm=False)[
            0
        ]
        for skip in (True, False)
    ]
    assert hidden.token_ids == shown.token_ids == [special, special]
    assert (hidden.text, shown.text) == ("", "<|im_start|><|im_start|>")
    with pytest.raises(ValueError, match="skip_special_tokens"):
        SamplingParams(skip_special_tokens="no")


def test_prefix_cache_metrics_and_reset(llm):
    ids = list(range(10, 50))  # 40 tokens
    first = llm.generate([ids], greedy(3), use_tqdm=False)[0]
    second = llm.generate([ids + [7]], greedy(3), use_tqdm=False)[0]
    assert second.metrics.num_cached_tokens == 40
    assert second.token_ids == alone(llm, ids + [7], greedy(3))
    llm.reset_prefix_cache()
    third = llm.generate([ids + [7]], greedy(3), use_tqdm=False)[0]
    assert third.metrics.num_cached_tokens == 0 and third.token_ids == second.token_ids
    assert first.token_ids == alone(llm, ids, greedy(3))
    assert_idle(llm)


def test_chat(llm):
    conv = [{"role": "user", "content": "Hello, world!"}]
    [out] = llm.chat(conv, greedy(6), use_tqdm=False)
    ids = llm.encode_chat(conv)
    assert out.prompt_token_ids == ids and out.token_ids == alone(llm, ids, greedy(6))
    outs = llm.chat(
        [conv, [{"role": "user", "content": "def add(a, b):"}]], greedy(2), use_tqdm=False
    )
    assert len(outs) == 2
    with pytest.raises(ValueError, match="conversation 1: .*role"):  # which one is bad
        llm.chat([conv, [{"role": "robot", "content": "x"}]], greedy(2), use_tqdm=False)


@pytest.mark.parametrize(
    "prompts, message",
    [
        (["fine", ""], "non-empty"),
        ([[1, 2], []], "prompt is empty"),
        ([[1, 2], list(range(300))], "maximum context length"),
        ([[1, 2], [1, 10**6]], "prompt token ids"),
    ],
)
def test_bad_request_in_a_batch_queues_nothing(llm, prompts, message):
    with pytest.raises(ValueError, match=message):
        llm.generate(prompts, greedy(4), use_tqdm=False)
    assert_idle(llm)
    assert llm.engine.scheduler.num_waiting == 0 and not llm.engine.scheduler.waiting
    [out] = llm.generate([[1, 2]], greedy(2), use_tqdm=False)  # still works
    assert out.token_ids == alone(llm, [1, 2], greedy(2))


def test_bad_sampling_params():
    for kwargs, message in [
        (dict(max_new_tokens=0), "max_new_tokens"),
        (dict(temperature=-1.0), "temperature"),
        (dict(top_p=0.0), "top_p"),
        (dict(top_p=1.01), "top_p"),
        (dict(top_k=-2), "top_k"),
    ]:
        with pytest.raises(ValueError, match=message):
            SamplingParams(**kwargs)


def test_params_count_mismatch(llm):
    with pytest.raises(ValueError, match="2 sampling params for 3 prompts"):
        llm.generate(PROMPTS[:3], [greedy(2), greedy(2)], use_tqdm=False)
    assert_idle(llm)


def test_interrupted_generate_frees_every_block(llm, monkeypatch):
    calls = {"n": 0}
    step = llm.engine.step

    def interrupted_step():
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return step()

    monkeypatch.setattr(llm.engine, "step", interrupted_step)
    with pytest.raises(KeyboardInterrupt):
        llm.generate(PROMPTS, greedy(20), use_tqdm=False)
    monkeypatch.undo()
    assert_idle(llm)
    outs = llm.generate(PROMPTS[:2], greedy(5), use_tqdm=False)
    assert outs[1].token_ids == alone(llm, llm.encode(PROMPTS[1]), greedy(5))


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        LLM(model=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="max_num_seqs"):
        LLM(model=str(tmp_path), max_num_seqs=0)


def test_invalid_request_error_is_a_value_error():
    assert issubclass(InvalidRequestError, ValueError)


def test_a_sampler_failure_fails_that_request_alone(llm, monkeypatch):
    """The batched sampler raises for one row: that request ends with "error", the others get
    the tokens they get alone, and every block is freed."""
    sampler = llm.engine.runner.sampler
    real_call = type(sampler).__call__

    def call(self, logits, params, *rest):
        if any(p.seed == 666 for p in params):
            raise RuntimeError("poisoned")
        return real_call(self, logits, params, *rest)

    monkeypatch.setattr(type(sampler), "__call__", call)
    params = [greedy(6), SamplingParams(max_tokens=6, temperature=0.8, seed=666), greedy(6)]
    outs = llm.generate(PROMPTS[:3], params, use_tqdm=False)
    assert outs[1].finish_reason == "error" and outs[1].token_ids == []
    for i in (0, 2):
        assert outs[i].finish_reason == "length"
        assert outs[i].token_ids == alone(llm, llm.encode(PROMPTS[i]), greedy(6))
    assert_idle(llm)


def test_n_choices_draw_from_seed_plus_i(llm):
    """n = 3 with a seed: choice i is the request with seed + i and n = 1 (modulo 2**64)."""
    base = SamplingParams(max_tokens=6, temperature=1.0, seed=2**64 - 2, ignore_eos=True)
    (out,) = llm.generate(PROMPTS[0], replace(base, n=3), use_tqdm=False)
    assert [o.index for o in out.outputs] == [0, 1, 2]
    for i, choice in enumerate(out.outputs):
        (one,) = llm.generate(
            PROMPTS[0], replace(base, seed=(base.seed + i) % 2**64), use_tqdm=False
        )
        assert choice.token_ids == one.token_ids and choice.text == one.text
    assert_idle(llm)


def test_a_requests_params_are_checked_once_for_its_n_choices(llm, monkeypatch):
    """Each choice's params are a copy (n = 1, its own seed), not built and checked again: a
    49,152-entry logit_bias with n = 32 had been 1.5 M checks on the engine loop."""
    import roseinfer.sampling_params as sampling_params

    checks = 0
    check = sampling_params.SamplingParams.__post_init__

    def counted(self, *args):
        nonlocal checks
        checks += 1
        return check(self, *args)

    params = SamplingParams(n=8, max_tokens=3, temperature=1.0, seed=5,
                            logit_bias={t: 0.5 for t in range(40)})  # fmt: skip
    monkeypatch.setattr(sampling_params.SamplingParams, "__post_init__", counted)
    (out,) = llm.generate([[1, 2, 3]], params, use_tqdm=False)
    assert checks == 0 and len(out.outputs) == 8
    monkeypatch.undo()
    seeded = SamplingParams(max_tokens=3, temperature=1.0, seed=5 + 7,
                            logit_bias={t: 0.5 for t in range(40)})  # fmt: skip
    assert out.outputs[7].token_ids == alone(llm, [1, 2, 3], seeded)


@pytest.mark.parametrize(("prefix_cache", "prompt_logprobs", "first_step"),
                         [(True, None, 1), (False, None, 3), (False, 0, 1)])  # fmt: skip
def test_a_requests_choices_wait_for_its_prompt_where_that_pays(
    tiny_model_dir, prefix_cache, prompt_logprobs, first_step
):
    """Choices 1..n-1 wait for choice 0 to compute the prompt when the prefix cache will serve
    it to them, or when its prompt logprobs must reach the client first; with neither, all
    three compute it at once (waiting would only delay them)."""
    llm = LLM(model=tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64,
              enable_prefix_cache=prefix_cache)  # fmt: skip
    params = SamplingParams(n=3, max_tokens=2, prompt_logprobs=prompt_logprobs)
    llm.engine.add_request("r", list(range(1, 40)), params)
    assert len(llm.engine.step()) == first_step  # the choices that sampled a token
    while llm.engine.has_unfinished():
        llm.engine.step()
