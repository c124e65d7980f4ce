"""One request never hurts another, offline (`LLM.generate` on a tiny model): whatever fails
while one request is handled (its sampling, its logits, its prompt logprobs, its output
processing, its admission) ends that request with reason "error" and a message, the others get
exactly what they get alone (tokens, seeded draws, logprobs), and no block stays held."""

from __future__ import annotations

import json

import pytest
from conftest import crowded_llm

import roseinfer.engine.model_runner as model_runner
from roseinfer import LLM, InferenceEngine, SamplingParams
from roseinfer.engine.model_runner import ModelRunner
from roseinfer.output.processor import ChoiceState
from roseinfer.output.stop import StopStringChecker
from roseinfer.outputs import TokenLogprobs
from roseinfer.sampling_params import StructuredOutputs

PROMPTS = ["Hello world", "The quick brown fox", "Paris is"]
POISON = "POISON"  # a stop string that makes the output processing raise


def greedy(n: int, **kw) -> SamplingParams:
    return SamplingParams(max_tokens=n, temperature=0, ignore_eos=True, **kw)


SEEDED = SamplingParams(max_tokens=10, temperature=1.0, seed=5, ignore_eos=True, logprobs=2)


@pytest.fixture(scope="module")
def llm(tiny_model_dir) -> LLM:
    return crowded_llm(tiny_model_dir("llama"))


def alone(llm: LLM, prompt: str, params: SamplingParams):
    (out,) = llm.generate([prompt], params, use_tqdm=False)
    return out.outputs[0]


def logprobs_of(choice) -> list[tuple[int, float]]:
    return [(t, lp[t].logprob) for t, lp in zip(choice.token_ids, choice.logprobs, strict=True)]


def assert_idle(llm: LLM) -> None:
    bm = llm.engine.block_manager
    assert not llm.engine.has_unfinished() and not llm.processor.states
    assert all(b.ref_count == 0 for b in bm.blocks) and bm.num_free_blocks == bm.num_blocks


def assert_alone(llm: LLM, prompt: str, params: SamplingParams, choice) -> None:
    ref = alone(llm, prompt, params)
    assert choice.finish_reason == ref.finish_reason and choice.token_ids == ref.token_ids
    if params.logprobs is not None:  # batched rows may differ in the last float bits
        got, want = logprobs_of(choice), logprobs_of(ref)
        assert [t for t, _ in got] == [t for t, _ in want]
        assert [lp for _, lp in got] == pytest.approx([lp for _, lp in want], abs=1e-4)


def test_a_mask_that_leaves_no_token_fails_that_request_alone(llm):
    """A grammar (`b+`) and allowed_token_ids (`a`) that exclude every token: found at
    sampling, without an exception. The neighbours' raw logprobs and seeded draws are theirs."""
    (a,) = llm.tokenizer.encode("a", add_special_tokens=False)
    empty = greedy(4, structured_outputs=StructuredOutputs(regex="b+"), allowed_token_ids=(a,))
    params = [empty, SEEDED, greedy(6, logprobs=1, allowed_token_ids=tuple(range(50, 90)))]
    outs = [o.outputs[0] for o in llm.generate(PROMPTS, params, use_tqdm=False)]
    assert outs[0].finish_reason == "error" and outs[0].token_ids == []
    assert "no token may be generated" in (outs[0].error or "")
    for i in (1, 2):
        assert_alone(llm, PROMPTS[i], params[i], outs[i])
    assert_idle(llm)


def test_a_failed_request_is_an_error_through_every_front_door(llm):
    """LLM.stream and the seeds' readers say that the engine failed a request: they had shown
    an empty completion (the stream ended quietly, `pop_response` and `run()` gave the prompt
    alone; `roseinfer generate`, reading the stream, printed nothing and exited 0)."""
    from roseinfer.compat import InferenceEngine, OfflineScheduler, OnlineScheduler
    from roseinfer.outputs import RequestFailed

    (a,) = llm.tokenizer.encode("a", add_special_tokens=False)
    empty = greedy(4, structured_outputs=StructuredOutputs(regex="b+"), allowed_token_ids=(a,))
    with pytest.raises(RequestFailed, match="no token may be generated"):
        list(llm.stream(llm.encode(PROMPTS[0]), empty))
    assert "".join(llm.stream(llm.encode(PROMPTS[1]), greedy(3)))  # the LLM goes on
    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    online = OnlineScheduler(engine)
    bad, good = online.add_request(PROMPTS[0], params=empty), online.add_request(PROMPTS[1], 3)
    while online.has_unfinished():
        online.step()
    with pytest.raises(RequestFailed, match="no token may be generated"):
        online.pop_response(bad)
    assert online.pop_response(good).startswith(PROMPTS[1])
    offline = OfflineScheduler(engine)
    bad, good = offline.add_request(PROMPTS[0], params=empty), offline.add_request(PROMPTS[1], 3)
    texts = offline.run()
    assert list(texts) == [good] and texts[good].startswith(PROMPTS[1])
    assert "no token may be generated" in offline.errors[bad]
    assert_idle(llm)


def test_a_failed_generation_is_one_line_from_the_command_line(capsys):
    """`roseinfer generate` and `chat` read `LLM.stream`: its RequestFailed is one line on
    stderr and exit 1, as a user's other errors."""
    import argparse

    from roseinfer.commands import run_command
    from roseinfer.outputs import RequestFailed

    def fail(args):
        raise RequestFailed("no token may be generated")

    args = argparse.Namespace(func=fail, log_level="warning")
    assert run_command(args, "roseinfer generate") == 1
    assert capsys.readouterr().err == "roseinfer generate: error: no token may be generated\n"


def test_the_seeds_readers_refuse_what_they_cannot_give_back(llm):
    """A session (one sequence, token ids) and the schedulers (one text per request) refuse
    params they would have dropped: n, logprobs, and for a session stop strings and the other
    rules on the text (min_indent, stop_at_newline_after_ms). The
    schedulers' texts are cut at a stop string, as LLM's."""
    from roseinfer.compat import InferenceEngine, OnlineScheduler

    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    ids = llm.encode(PROMPTS[0])
    for field, params in [("n", SamplingParams(max_tokens=3, temperature=0, n=2)), ("stop", greedy(3, stop=["x"])),
                          ("logprobs", greedy(3, logprobs=1)),
                          ("prompt_logprobs", greedy(3, prompt_logprobs=1)),
                          ("min_indent", greedy(3, min_indent=4)),  # (rules on the text's lines)
                          ("stop_at_newline_after_ms", greedy(3, stop_at_newline_after_ms=1.0))]:  # fmt: skip
        with pytest.raises(ValueError, match=field) as e:
            engine.generate_ids(ids, params)
        assert e.value.param == field
    online = OnlineScheduler(engine)
    for field, params in [("n", SamplingParams(max_tokens=3, temperature=0, n=2)), ("logprobs", greedy(3, logprobs=1)),
                          ("prompt_logprobs", greedy(3, prompt_logprobs=1))]:  # fmt: skip
        with pytest.raises(ValueError, match=field) as e:
            online.add_request(PROMPTS[0], params=params)
        assert e.value.param == field
    assert not online.has_unfinished()
    want = alone(llm, PROMPTS[0], greedy(12))
    stop = want.text[len(want.text) // 2 :][:3]
    cut = alone(llm, PROMPTS[0], greedy(12, stop=[stop]))
    assert cut.text != want.text
    rid = online.add_request(PROMPTS[0], params=greedy(12, stop=[stop]))
    while online.has_unfinished():
        online.step()
    assert online.pop_response(rid) == llm.tokenizer.decode(llm.encode(PROMPTS[0])) + cut.text
    assert_idle(llm)


def test_the_schedulers_text_of_a_prompt_that_ends_inside_a_character(llm):
    """The seeds' text is one decode of the prompt and the generated tokens: a prompt cut inside
    a character, completed by the first generated token, reads whole (prompt text + generated
    text would have kept the cut prompt's replacement character)."""
    from roseinfer.compat import InferenceEngine, OfflineScheduler

    ids = llm.tokenizer.encode("hello 日本語 world", add_special_tokens=False)
    decode = llm.tokenizer.decode
    cut = next(
        i
        for i in range(1, len(ids))  # one token short of a whole character
        if decode(ids[:i]).endswith("\ufffd") and "\ufffd" not in decode(ids[: i + 1])
    )
    offline = OfflineScheduler(InferenceEngine(llm.config, loaded=llm.loaded))
    params = greedy(1, allowed_token_ids=(ids[cut],))  # the token that completes it
    rid = offline.add_request(prompt_token_ids=ids[:cut], params=params)
    text = offline.run()[rid]
    assert text == decode(ids[: cut + 1]) and "\ufffd" not in text, text
    assert_idle(llm)


def test_logits_that_are_not_finite_fail_that_request_alone(llm, monkeypatch):
    """NaN in one row (greedy) and +inf in another (sampled): those two fail, naming why,
    instead of emitting token 0 as if nothing happened."""
    real = ModelRunner.sample

    def sample(self, seqs, logits, fresh_logits=None):
        logits = logits.clone()
        for i, seq in enumerate(seqs):
            if seq.params.max_tokens == 13:
                logits[i, 7] = float("nan") if seq.params.greedy else float("inf")
        return real(self, seqs, logits, fresh_logits)

    monkeypatch.setattr(ModelRunner, "sample", sample)
    bad_sampled = SamplingParams(max_tokens=13, temperature=0.8, seed=1, ignore_eos=True)
    params = [greedy(13), bad_sampled, greedy(8)]
    outs = [o.outputs[0] for o in llm.generate(PROMPTS, params, use_tqdm=False)]
    for bad in outs[:2]:
        assert bad.finish_reason == "error" and bad.token_ids == []
        assert "not finite" in (bad.error or "")
    assert_alone(llm, PROMPTS[2], params[2], outs[2])
    assert_idle(llm)


def test_a_sampling_retry_gives_the_neighbours_their_own_draws_and_logprobs(llm, monkeypatch):
    """The batch's sampling raises after its masks and draws (here: building one request's
    logprob records), so it is sampled again row by row: the seeded neighbour draws once, not
    twice, and the masked neighbour's logprobs are of its raw logits, not of the masked ones."""
    real = model_runner.to_records

    def to_records(tensors, token_ids, num_top):
        if 7 in num_top:
            raise RuntimeError("poisoned logprobs")
        return real(tensors, token_ids, num_top)

    monkeypatch.setattr(model_runner, "to_records", to_records)
    masked = greedy(6, logprobs=1, allowed_token_ids=tuple(range(50, 90)))
    params = [greedy(3, logprobs=7), SEEDED, masked]
    outs = [o.outputs[0] for o in llm.generate(PROMPTS, params, use_tqdm=False)]
    assert outs[0].finish_reason == "error"
    assert "poisoned logprobs" in (outs[0].error or "")
    for i in (1, 2):
        assert_alone(llm, PROMPTS[i], params[i], outs[i])
    assert_idle(llm)


def test_prompt_logprobs_that_fail_fail_that_request_alone(llm, monkeypatch):
    real = ModelRunner._prompt_logprobs

    def prompt_logprobs(self, s, hidden, last):
        if s.seq.params.prompt_logprobs == 3:
            raise RuntimeError("poisoned prompt logprobs")
        return real(self, s, hidden, last)

    monkeypatch.setattr(ModelRunner, "_prompt_logprobs", prompt_logprobs)
    params = [greedy(8), greedy(8, prompt_logprobs=3), greedy(8, prompt_logprobs=1)]
    outs = llm.generate(PROMPTS, params, use_tqdm=False)
    assert outs[1].outputs[0].finish_reason == "error"
    assert "prompt logprobs failed" in (outs[1].outputs[0].error or "")
    for i in (0, 2):
        assert_alone(llm, PROMPTS[i], params[i], outs[i].outputs[0])
    assert outs[2].prompt_logprobs is not None and len(outs[2].prompt_logprobs) > 1
    assert_idle(llm)


@pytest.fixture
def poisoned_stop(monkeypatch):
    real = StopStringChecker.feed

    def feed(self, text, can_match=True):
        if POISON in self.stop:
            raise ValueError("poisoned output")
        return real(self, text, can_match)

    monkeypatch.setattr(StopStringChecker, "feed", feed)


def test_output_processing_that_fails_fails_that_request_alone(llm, poisoned_stop):
    """The stop-string check raises for one request (n = 2: both its choices): they end with
    "error", the others finish as alone, and the failed choices' sequences are stopped in the
    engine at once, not run to max_tokens."""
    poisoned = SamplingParams(n=2, max_tokens=200, temperature=0, ignore_eos=True, stop=(POISON,))
    params = [greedy(6), poisoned, greedy(6, logprobs=1)]
    outs = llm.generate(PROMPTS, params, use_tqdm=False)
    for choice in outs[1].outputs:
        assert choice.finish_reason == "error" and len(choice.token_ids) == 1
        assert "poisoned output" in (choice.error or "")
    for i in (0, 2):
        assert_alone(llm, PROMPTS[i], params[i], outs[i].outputs[0])
    assert_idle(llm)


def test_a_request_that_fails_to_queue_leaves_nothing_running(llm, monkeypatch):
    """The third request's grammar state cannot be made (after validation): `generate` raises,
    and the two queued before it are not left running into the next call."""
    grammars = llm.engine.grammars
    real = type(grammars).matcher

    def matcher(self, spec):
        if spec.regex == "x+":
            raise RuntimeError("no matcher today")
        return real(self, spec)

    monkeypatch.setattr(type(grammars), "matcher", matcher)
    params = [greedy(20), greedy(20), greedy(4, structured_outputs=StructuredOutputs(regex="x+"))]
    with pytest.raises(RuntimeError, match="no matcher today"):
        llm.generate(PROMPTS, params, use_tqdm=False)
    assert_idle(llm)
    assert alone(llm, PROMPTS[0], greedy(3)).finish_reason == "length"


def test_a_stop_string_ends_the_choice_at_its_token_whatever_the_stream_interval(llm):
    """`stream_interval` hands a choice several tokens at once: the ones after the token that
    completes a stop string are dropped (tokens and logprobs), as one token at a time does."""
    ref = alone(llm, PROMPTS[1], greedy(12))
    stop = llm.tokenizer.decode(ref.token_ids[:5])[-2:]  # completed by one of the first five
    params = greedy(12, stop=(stop,), logprobs=0)
    tokens = ref.token_ids[:8]
    records = [TokenLogprobs(t, -1.0, 1, ()) for t in tokens]
    prompt = llm.encode(PROMPTS[1])

    def choice() -> ChoiceState:
        return ChoiceState(0, prompt, params, llm.tokenizer, frozenset())

    one = choice()
    text = "".join(one.feed((t,), None, (r,)) for t, r in zip(tokens, records, strict=True))
    assert one.finish_reason == "stop" and len(one.token_ids) <= 5
    many = choice()
    assert many.feed(tokens, None, records) == text
    assert many.finish_reason == "stop" and many.token_ids == one.token_ids
    assert many.logprobs is not None and len(many.logprobs) == len(one.token_ids)


def test_stop_strings_wait_for_min_tokens(llm):
    """vLLM's rule: no stop string ends within the first `min_tokens` tokens."""
    ref = alone(llm, PROMPTS[1], greedy(12))
    stop = llm.tokenizer.decode(ref.token_ids[:2])[-1]
    early = alone(llm, PROMPTS[1], greedy(12, stop=(stop,)))
    assert early.finish_reason == "stop" and len(early.token_ids) <= 2
    late = alone(llm, PROMPTS[1], greedy(12, stop=(stop,), min_tokens=12))
    assert late.finish_reason == "length" and late.token_ids == ref.token_ids


def test_the_seeds_session_honours_bad_words_and_grammars(llm):
    """`InferenceEngine.generate_ids` (the tests' "alone" reference) runs the same
    request as `LLM.generate`, bad words and grammars included."""
    engine = InferenceEngine(llm.config, loaded=llm.loaded)
    ids = llm.encode(PROMPTS[2])
    plain = engine.generate_ids(ids, greedy(8))
    words = [llm.tokenizer.decode([t]).strip() for t in plain]
    word = next(w for w in words if w.isalnum())  # a word the model writes, as text
    banned = greedy(8, bad_words=(word,))
    assert engine.generate_ids(ids, banned) == alone(llm, PROMPTS[2], banned).token_ids
    assert engine.generate_ids(ids, banned) != plain
    regex = greedy(8, structured_outputs=StructuredOutputs(regex="[a-z]+"))
    assert engine.generate_ids(ids, regex) == alone(llm, PROMPTS[2], regex).token_ids


def where(calls: list[str]):
    """A wrapper recording, for each call, the thread's name, or "event loop" where the thread
    runs an asyncio loop (the server's, which every request's answer waits on)."""
    import asyncio
    import threading

    def record() -> None:
        try:
            asyncio.get_running_loop()
            calls.append("event loop")
        except RuntimeError:
            calls.append(threading.current_thread().name)

    return record


def test_the_server_tokenizes_off_its_event_loop_and_engine_loop(tiny_server, monkeypatch):
    """A prompt (4 MB took 1.6 s) and `bad_words` (10,000 words 0.3 s, once per choice) are
    tokenized on the server's worker threads: on the event loop they had held every answer, on
    the engine loop every running request's next token. A request's list of bad words is
    tokenized once, whatever n."""
    import httpx

    import roseinfer.engine.bad_words as bad_words_module
    from roseinfer.tokenizer import Tokenizer

    encodes: list[str] = []
    bad_words: list[str] = []
    encode, tokenize_words = Tokenizer.encode, bad_words_module.bad_words_token_ids
    record_encode, record_words = where(encodes), where(bad_words)

    def watched_encode(self, text, add_special_tokens=True):
        if "probe-prompt" in text:
            record_encode()
        return encode(self, text, add_special_tokens)

    def watched_words(tokenizer, words):
        record_words()
        return tokenize_words(tokenizer, words)

    monkeypatch.setattr(Tokenizer, "encode", watched_encode)
    monkeypatch.setattr(bad_words_module, "bad_words_token_ids", watched_words)
    url = tiny_server[1]
    body = {"max_tokens": 2, "n": 3, "bad_words": ["probe-word-a", "probe-word-b"]}
    r = httpx.post(url + "/v1/completions", json={"prompt": "probe-prompt one", **body},
                   timeout=60)  # fmt: skip
    assert r.status_code == 200, r.text
    chat = {"messages": [{"role": "user", "content": "probe-prompt"}], "max_tokens": 2}
    assert httpx.post(url + "/v1/chat/completions", json=chat, timeout=60).status_code == 200
    r = httpx.post(url + "/tokenize", json={"prompt": "probe-prompt two"}, timeout=60)
    assert r.status_code == 200, r.text
    r = httpx.post(url + "/generate", json={"prompt": "probe-prompt three", "max_new_tokens": 1},
                   timeout=60)  # fmt: skip
    assert r.status_code == 200, r.text
    assert len(encodes) == 4 and "event loop" not in encodes, encodes
    assert len(bad_words) == 1, bad_words
    assert bad_words[0] not in ("event loop", "roseinfer-engine"), bad_words


def test_tokenize_and_detokenize_work_off_the_event_loop(tiny_server, monkeypatch):
    """/tokenize's token strings and /detokenize's id check and decode run on worker threads:
    on the event loop half a million ids held every other answer ~0.25 s (a 4 MB prompt's
    strings, ~0.35 s)."""
    import httpx

    import roseinfer.server.tokenization as tokenization
    from roseinfer.tokenizer import Tokenizer

    calls: dict[str, list[str]] = {"strs": [], "check": [], "decode": []}
    check, decode = tokenization._check_ids, Tokenizer.decode
    record_check, record_decode = where(calls["check"]), where(calls["decode"])

    def watched_check(tokenizer, ids):
        record_check()
        return check(tokenizer, ids)

    def watched_decode(self, ids, *args, **kwargs):
        record_decode()
        return decode(self, ids, *args, **kwargs)

    monkeypatch.setattr(tokenization, "_check_ids", watched_check)
    monkeypatch.setattr(Tokenizer, "decode", watched_decode)
    hf = tiny_server[0].state.client.engine.tokenizer.hf
    to_strs, record_strs = hf.convert_ids_to_tokens, where(calls["strs"])

    def watched_strs(ids, *args, **kwargs):
        record_strs()
        return to_strs(ids, *args, **kwargs)

    monkeypatch.setattr(hf, "convert_ids_to_tokens", watched_strs)
    url = tiny_server[1]
    r = httpx.post(url + "/tokenize", json={"prompt": "hello there", "return_token_strs": True},
                   timeout=60)  # fmt: skip
    assert r.status_code == 200 and r.json()["token_strs"], r.text
    r = httpx.post(url + "/detokenize", json={"tokens": r.json()["tokens"]}, timeout=60)
    assert r.status_code == 200 and "hello" in r.json()["prompt"], r.text
    assert {name: len(c) for name, c in calls.items()} == {"strs": 1, "check": 1, "decode": 1}
    assert not [c for c in calls.values() if "event loop" in c or "roseinfer-engine" in c], calls


def test_the_server_converts_a_gbnf_grammar_once_off_its_loops(tiny_server, monkeypatch):
    """GBNF's conversion to Lark is Python, holding the GIL (llguidance's took 4.4 s for a dense
    64 KB grammar; ours ~0.1 s): it runs once, on a worker thread. It had run again on the engine
    loop when the engine checked the request and for each of its choices (a victim waited 13 s)."""
    import httpx

    import roseinfer.structured.gbnf as gbnf

    calls: list[str] = []
    convert, record = gbnf.gbnf_to_lark, where(calls)

    def watched(text):
        record()
        return convert(text)

    monkeypatch.setattr(gbnf, "gbnf_to_lark", watched)
    body = {"prompt": "hi", "max_tokens": 16, "n": 3, "grammar": 'root ::= "probe-" [a-c]+'}
    r = httpx.post(tiny_server[1] + "/v1/completions", json=body, timeout=60)
    assert r.status_code == 200, r.text
    for choice in r.json()["choices"]:  # the grammar's, or a prefix of it (cut by max_tokens)
        text = choice["text"]
        assert text.startswith("probe-") or "probe-".startswith(text), text
    assert len(calls) == 1 and calls[0] not in ("event loop", "roseinfer-engine"), calls


def dumps_written(monkeypatch) -> list[int]:
    """The length of each text the server's `dumps` writes from now on, in order."""
    import roseinfer.server.json_text as json_text
    import roseinfer.server.serving as serving

    sizes: list[int] = []
    dumps = json_text.dumps

    def counted(obj):
        text = dumps(obj)
        sizes.append(len(text))
        return text

    for module in (json_text, serving):
        monkeypatch.setattr(module, "dumps", counted)
    return sizes


def test_a_big_response_is_written_in_pieces_the_same_as_at_once(monkeypatch):
    """`dumps_in_pieces` writes what `dumps` writes, in calls of a bounded size (each holds the
    GIL whole: one choice with a 400-word prompt's logprobs held a short request beside it for
    ~66 ms at every hand-off, up to 1.0-1.3 s in all)."""
    import math

    import roseinfer.server.json_text as json_text

    top = [{f"tok{j}\u00e9": -j / 3 for j in range(3)} for _ in range(1000)]
    choice = {"index": 0, "text": "x\n\"y\"", "finish_reason": None,
              "logprobs": {"tokens": [f"t{i}" for i in range(1000)], "token_logprobs":
                           [None] + [-i / 7 for i in range(999)], "top_logprobs": top,
                           "text_offset": list(range(1000))},
              "prompt_logprobs": [None, *top[:600]], "nested": [[1, [2, {"a": []}]]] * 300,
              "small": [1, 2], "ints": {1: "one"}}  # fmt: skip
    dumps = json_text.dumps
    sizes = dumps_written(monkeypatch)
    assert json_text.dumps_in_pieces(choice) == dumps(choice)
    assert max(sizes) < len(dumps(choice)) / 5 and len(sizes) > 10
    with pytest.raises(ValueError):  # NaN refused as dumps refuses it
        json_text.dumps_in_pieces({"a": [math.nan] * 1000})


def test_a_response_is_written_off_the_event_loop_with_its_prompt_once(tiny_server, monkeypatch):
    """A non-streamed response is built and written to JSON on a worker thread: n = 16 choices
    with `echo`, logprobs 20 and prompt_logprobs 20 of an 800-token prompt came to 55 MB, and
    held every other answer 12 s on the event loop. What it writes of the prompt (echo's
    logprobs, prompt_logprobs) is made once for its n choices."""
    import httpx

    import roseinfer.server.json_text as json_text
    import roseinfer.server.serving as serving

    calls: dict[str, list[str]] = {"completion": [], "prompt": [], "chat": []}
    for name, attr in (("completion", "completion_logprobs"), ("prompt", "prompt_logprobs_json"),
                       ("chat", "chat_logprobs")):  # fmt: skip
        original, record = getattr(serving, attr), where(calls[name])

        def watched(*args, _original=original, _record=record, **kw):
            _record()
            return _original(*args, **kw)

        monkeypatch.setattr(serving, attr, watched)
    url = tiny_server[1]
    body = {"prompt": "probe one two three", "max_tokens": 4, "n": 3, "echo": True,
            "logprobs": 2, "prompt_logprobs": 1}  # fmt: skip
    r = httpx.post(url + "/v1/completions", json=body, timeout=60)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json", r.text
    choices = r.json()["choices"]
    assert len(choices) == 3 and all(c["text"].startswith("probe one two three") for c in choices)
    assert all(c["prompt_logprobs"] == choices[0]["prompt_logprobs"] for c in choices)
    assert len(calls["completion"]) == 1 + 3 and len(calls["prompt"]) == 1, calls  # echo once
    chat = {"messages": [{"role": "user", "content": "probe"}], "max_tokens": 2, "n": 2,
            "logprobs": True, "top_logprobs": 2, "prompt_logprobs": 0}  # fmt: skip
    r = httpx.post(url + "/v1/chat/completions", json=chat, timeout=60)
    assert r.status_code == 200 and len(r.json()["prompt_logprobs"]) > 1, r.text
    assert len(calls["chat"]) == 2 and len(calls["prompt"]) == 2, calls
    assert all(thread != "event loop" for names in calls.values() for thread in names), calls
    # streamed: the echoed prompt's logprobs made once for the n choices, off the loop (each
    # choice's tokens' are made on the loop as they come: a few entries each)
    calls["completion"].clear()
    written: list[str] = []  # JSON written with the prompt's text in it
    dumps = json_text.dumps

    def watched_dumps(obj):
        text = dumps(obj)
        if "probe one two three" in text:
            written.append(text)
        return text

    for module in (json_text, serving):
        monkeypatch.setattr(module, "dumps", watched_dumps)
    stream = {**body, "stream": True}
    del stream["prompt_logprobs"]  # (not with stream, as vLLM)
    r = httpx.post(url + "/v1/completions", json=stream, timeout=60)
    events = [line[6:] for line in r.text.splitlines() if line.startswith("data: {")]
    echoed = [json.loads(e)["choices"][0] for e in events]
    echoed = [c for c in echoed if c["text"].startswith("probe one two three")]
    assert len(echoed) == 3 and len({json.dumps(c["logprobs"]) for c in echoed}) == 1, echoed
    assert None not in echoed[0]["logprobs"]["token_logprobs"][1:], echoed[0]
    off_loop = [thread for thread in calls["completion"] if thread != "event loop"]
    assert len(off_loop) == 1, calls["completion"]
    assert len(written) == 1  # the prompt's part of the three first chunks, written once


def test_a_response_writes_its_prompt_parts_to_json_once_for_its_n_choices(
    tiny_server, monkeypatch
):
    """n choices of one prompt hold the same echo logprobs and prompt_logprobs: written to JSON
    once and copied (16 choices of a 400-word prompt had written them 16 times, ~1 s of Python
    of a 55 MB response). The response reads the same as written choice by choice."""
    import httpx

    written = dumps_written(monkeypatch)
    prompt = " ".join(f"probe{i}" for i in range(14))
    body = {"prompt": prompt, "echo": True, "logprobs": 2, "prompt_logprobs": 2, "n": 4,
            "max_tokens": 2}  # fmt: skip
    r = httpx.post(tiny_server[1] + "/v1/completions", json=body, timeout=60)
    assert r.status_code == 200, r.text
    choices = r.json()["choices"]
    assert len(choices) == 4 and all(c["text"].startswith(prompt) for c in choices)
    for c in choices:  # the prompt's tokens, then the choice's own two
        assert c["prompt_logprobs"] == choices[0]["prompt_logprobs"]
        lp = c["logprobs"]
        assert {len(v) for v in lp.values()} == {len(lp["tokens"])} and len(lp["tokens"]) > 40
        assert lp["tokens"][:-2] == choices[0]["logprobs"]["tokens"][:-2]
        assert lp["token_logprobs"][0] is None and None not in lp["token_logprobs"][1:]
        assert lp["text_offset"] == sorted(lp["text_offset"])
    assert sum(written) < 0.45 * len(r.content), (sum(written), len(r.content))
