"""What code written for vLLM's offline API hands `LLM` (session 58's audit): vLLM's prompt
dicts, `None` for its list fields, the names it reads off outputs and `LLM`; a default output
limit that refuses no prompt that fits; and the seeds' greedy-unless-do_sample arguments said
to do nothing where they do nothing."""

from __future__ import annotations

import warnings

import pytest

from roseinfer import LLM, SamplingParams
from roseinfer.compat import InferenceEngine

PROMPT = "The quick brown fox"
GREEDY = SamplingParams(max_tokens=6, temperature=0, ignore_eos=True)


@pytest.fixture(scope="module")
def llm(tiny_model_dir):
    return LLM(tiny_model_dir("llama"), dtype="float32", num_kv_blocks=64, max_model_len=48)


def test_vllms_prompt_dicts_are_prompts(llm):
    ids = llm.encode(PROMPT)
    want = llm.generate(PROMPT, GREEDY, use_tqdm=False)[0]
    assert want.prompt == PROMPT
    for prompt in ({"prompt": PROMPT}, {"prompt_token_ids": ids}):
        (one,) = llm.generate(prompt, GREEDY, use_tqdm=False)
        assert one.token_ids == want.token_ids and one.prompt_token_ids == ids
        (listed,) = llm.generate([prompt], GREEDY, use_tqdm=False)
        assert listed.token_ids == want.token_ids
        assert one.prompt == (PROMPT if "prompt" in prompt else None)
    assert llm.generate(ids, GREEDY, use_tqdm=False)[0].prompt is None
    with pytest.raises(ValueError, match="multi-modal") as e:
        llm.generate({"prompt": PROMPT, "multi_modal_data": {}}, GREEDY, use_tqdm=False)
    assert e.value.param == "multi_modal_data"
    with pytest.raises(ValueError, match="one of prompt or prompt_token_ids"):
        llm.generate({"prompt": PROMPT, "prompt_token_ids": ids}, GREEDY, use_tqdm=False)
    # encode is one prompt's ids, not vLLM's pooling encode: a list of texts is refused
    with pytest.raises(TypeError, match="LLM.embed pools"):
        llm.encode(["hello", "world"])  # type: ignore[list-item]
    assert llm.encode({"prompt_token_ids": ids}) == ids


def test_vllms_names_on_outputs_and_llm(llm):
    out = llm.generate(PROMPT, GREEDY, use_tqdm=False)[0]
    assert out.num_cached_tokens == out.metrics.num_cached_tokens
    assert llm.get_tokenizer() is llm.tokenizer.hf
    assert llm.get_default_sampling_params() == llm.default_params
    # None is vLLM's default of its list fields: none
    assert SamplingParams(stop=None, stop_token_ids=None, bad_words=None) == SamplingParams()


def test_the_output_is_cut_at_the_context_as_vllms_offline_engine(llm):
    """Without params the limit (SamplingParams' 64: the tiny model's file sets none) is cut to
    what the context leaves, as the server's chat does; a given `max_tokens` past the context
    is cut there too, the output ending with "length" (vLLM V1's offline engine), and one long
    prompt no longer refuses the whole batch. A prompt that leaves no room is still refused."""
    ids = llm.encode(PROMPT)
    long = ids * (40 // len(ids))  # 48 - len(long) tokens of room: fewer than 64
    room = 48 - len(long)
    (out,) = llm.generate([long], use_tqdm=False)
    assert len(out.prompt_token_ids) + len(out.token_ids) <= 48
    params = SamplingParams(max_tokens=64, min_tokens=60, temperature=0, ignore_eos=True)
    short, capped = llm.generate([ids, long], params, use_tqdm=False)
    assert len(short.token_ids) == 64 - (64 + len(ids) - 48) and short.finish_reason == "length"
    assert len(capped.token_ids) == room and capped.finish_reason == "length"
    # the same tokens as a request that asked for the room: the cut changes only the limit
    exact = SamplingParams(max_tokens=room, temperature=0, ignore_eos=True)
    assert llm.generate([long], exact, use_tqdm=False)[0].token_ids == capped.token_ids
    with pytest.raises(ValueError, match="context"):
        llm.generate([ids * 20], params, use_tqdm=False)


def test_a_choice_says_it_finished_by_a_method_as_vllms(llm):
    """vLLM's `CompletionOutput.finished()` is a method (its `RequestOutput.finished` a flag)."""
    out = llm.generate(PROMPT, GREEDY, use_tqdm=False)[0]
    assert out.finished is True and out.outputs[0].finished() is True


def test_chat_outputs_hold_the_rendered_prompt_as_vllms(llm):
    messages = [{"role": "user", "content": "Say hi"}]
    (out,) = llm.chat(messages, GREEDY, use_tqdm=False)
    assert out.prompt is not None and "Say hi" in out.prompt
    assert llm.tokenizer.encode(out.prompt, False) == out.prompt_token_ids
    assert out.prompt_token_ids == llm.encode_chat(messages)


def test_the_seeds_sampling_arguments_without_do_sample_are_said_to_do_nothing(llm):
    """They act only with do_sample (transformers' rule): a warning says so, as transformers'.
    (A session's refusals of the text rules: test_isolation.py.)"""
    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    with pytest.warns(UserWarning, match="do_sample is False: temperature, seed act only"):
        greedy = engine.generate(PROMPT, max_new_tokens=4, temperature=1.5, seed=3)
    assert greedy == engine.generate(PROMPT, max_new_tokens=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine.generate(PROMPT, max_new_tokens=4, temperature=1.5, seed=3, do_sample=True)


def test_stop_reason_is_a_stop_id_but_not_an_end_of_sequence(llm):
    """vLLM's: a request's stop token id names why it ended, unless it is an end-of-sequence
    token too, which ends it first (stop_reason None)."""
    eos = llm.tokenizer.eos_token_id
    for token, reason in ((eos, None), (7, 7)):
        params = SamplingParams(max_tokens=4, temperature=0, logit_bias={token: 100},
                                stop_token_ids=[token])  # fmt: skip
        out = llm.generate(PROMPT, params, use_tqdm=False)[0].outputs[0]
        assert (out.finish_reason, out.stop_reason) == ("stop", reason)
