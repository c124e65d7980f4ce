"""llama.cpp's DRY penalty: its own test vectors (tests/test-sampling.cpp's `test_dry`), a
scalar restatement of its four steps on random sequences, the breakers read off a vocabulary,
and the sampler applying it (greedy rows too, alone or batched)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest
import torch

from roseinfer.dry_params import DryPenalty
from roseinfer.engine.dry_breakers import DryBreakerTable, breaker_heads
from roseinfer.layers.dry import DryBreakers, DryState
from roseinfer.layers.sampler import Sampler
from roseinfer.sampling_params import SamplingParams


def token_breakers(*sequences: tuple[int, ...]) -> DryBreakers:
    """Breakers given as token sequences (llama.cpp's `llama_sampler_init_dry_testing`)."""
    tails: dict[int, set[tuple[int, ...]]] = {}
    for seq in sequences:
        tails.setdefault(seq[0], set()).add(tuple(seq[1:]))
    return DryBreakers({h: tuple(sorted(t)) for h, t in tails.items()})


def lowered(tokens: list[int], penalty: DryPenalty, breakers: DryBreakers) -> dict[int, float]:
    got = DryState(penalty, breakers, torch.device("cpu")).penalties(tokens)
    if got is None:
        return {}
    return dict(zip(got[0].tolist(), got[1].tolist(), strict=True))


# (probs, last tokens, expected probs, multiplier, base, allowed length, last_n, breakers)
LLAMA_CPP_CASES = [
    ([0.25] * 4, [0, 1], [0.25] * 4, 1.0, 1.1, 2, 4, ()),
    ([0.25] * 4, [0, 1, 2, 0, 1], [0.296923, 0.296923, 0.109232, 0.296923], 1.0, 1.1, 2, 5, ()),
    ([0.2] * 5, [0, 1, 3, 4, 0, 1], [0.2] * 5, 1.0, 1.1, 2, 6, ((3,),)),
    ([0.2] * 5, [0, 1, 2, 0, 1], [0.241818, 0.241818, 0.032727, 0.241818, 0.241818],
     2.0, 1.1, 2, 5, ()),
    ([0.2] * 5, [0, 1, 2, 3, 4, 0, 1], [0.2] * 5, 1.0, 1.1, 4, 7, ()),
]  # fmt: skip


@pytest.mark.parametrize("case", LLAMA_CPP_CASES)
def test_llama_cpp_vectors(case):
    probs, last, expected, multiplier, base, allowed, last_n, breakers = case
    penalty = DryPenalty(multiplier, base, allowed, last_n)
    logits = torch.tensor(probs).log()
    for token, amount in lowered(last, penalty, token_breakers(*breakers)).items():
        logits[token] -= amount
    torch.testing.assert_close(logits.softmax(-1), torch.tensor(expected), atol=2e-6, rtol=0)


def scalar_dry(tokens: list[int], p: DryPenalty, breakers: DryBreakers) -> dict[int, float]:
    """llama.cpp's four steps, one position at a time (its Z-algorithm's result, restated)."""
    w = tokens if p.last_n < 0 else tokens[max(0, len(tokens) - p.last_n) :]
    n = len(w)
    if n <= p.allowed_length:
        return {}
    limit = n
    for i in range(n):  # i tokens from the end
        head = w[n - 1 - i]
        matches = [len(t) for t in breakers.tails.get(head, ())
                   if len(t) <= i and tuple(w[n - i : n - i + len(t)]) == t]  # fmt: skip
        if matches:
            limit = i - max(matches)
            break
    if limit < p.allowed_length:
        return {}
    longest: dict[int, int] = {}
    for j in range(n - 1):
        length = 0
        while length < limit and j - length >= 0 and w[j - length] == w[n - 1 - length]:
            length += 1
        if length >= p.allowed_length:
            longest[w[j + 1]] = max(longest.get(w[j + 1], 0), length)
    out = {}
    for token, length in longest.items():
        if () in breakers.tails.get(token, ()):
            continue
        exponent = length - p.allowed_length
        if p.max_exponent > 0:
            exponent = min(exponent, p.max_exponent)
        # (llama.cpp's float multiplier and base, the power in double, the product as a float)
        out[token] = float(torch.tensor(p.multiplier_fp32 * p.base_fp32**exponent).float())
    return out


def test_matches_the_scalar_steps_on_random_sequences():
    rng = random.Random(0)
    for trial in range(300):
        vocab = rng.choice([3, 5, 8])
        tokens = [rng.randrange(vocab) for _ in range(rng.randrange(1, 60))]
        if trial % 3 == 0:  # long repeats
            run = tokens[: rng.randrange(1, 8)]
            tokens = tokens + run * rng.randrange(2, 6)
        breakers = token_breakers(*[tuple(rng.randrange(vocab) for _ in range(rng.randrange(1, 3)))
                                    for _ in range(rng.randrange(0, 3))])  # fmt: skip
        penalty = DryPenalty(
            rng.choice([0.5, 1.0, 2.0]), rng.choice([1.0, 1.1, 1.75, 300.0]),
            rng.randrange(0, 5), rng.choice([-1, 3, 10, 40]),
        )  # fmt: skip
        want = scalar_dry(tokens, penalty, breakers)
        got = lowered(tokens, penalty, breakers)
        assert got.keys() == want.keys(), (tokens, penalty, breakers)
        for token, amount in want.items():
            assert math.isclose(got[token], amount, rel_tol=1e-6), (tokens, token)


def test_runs_kept_between_steps_match_the_steps_taken_afresh():
    """A sequence followed a token at a time (its runs grown, not computed again) against the
    scalar steps at every length, through long loops and a rewrite shorter."""
    rng = random.Random(2)
    penalty = DryPenalty(1.0, 1.75, 2, 24)
    breakers = token_breakers((4,), (5, 6))
    for _ in range(20):
        tokens = [rng.randrange(7) for _ in range(rng.randrange(9, 20))]
        state = DryState(penalty, breakers, torch.device("cpu"))
        for _ in range(80):
            tokens.append(
                tokens[-rng.choice([1, 3, 9])] if rng.random() < 0.7 else rng.randrange(7)
            )
            got = state.penalties(tokens)
            have = {} if got is None else dict(zip(got[0].tolist(), got[1].tolist(), strict=True))
            assert have == pytest.approx(scalar_dry(tokens, penalty, breakers)), tokens
        del tokens[-30:]  # rewritten shorter: the runs made again
        got = state.penalties(tokens)
        have = {} if got is None else dict(zip(got[0].tolist(), got[1].tolist(), strict=True))
        assert have == pytest.approx(scalar_dry(tokens, penalty, breakers))


def test_an_overflowing_power_is_inf_as_llama_cpp_computes_it():
    """Base 4: llama.cpp's fp32 cap is 64, and 4 ** 64 = 2 ** 128 passes fp32's range: the
    token's logit goes to -inf (so does llama.cpp's)."""
    penalty = DryPenalty(1.0, 4.0, 1)
    assert penalty.max_exponent == 64
    run = list(range(10, 90))
    got = lowered(run + [5] + run, penalty, DryBreakers())
    assert got == {5: math.inf}


def test_the_window_follows_the_sequence_as_it_grows_and_shrinks():
    penalty = DryPenalty(1.0, 2.0, 2, 6)
    state = DryState(penalty, DryBreakers(), torch.device("cpu"))
    tokens = [5, 6, 7, 1, 2, 3, 9, 1, 2]  # "1 2" was followed by 3; the window: 6 tokens
    for end in range(1, len(tokens) + 1):  # one token a step, as a sequence grows
        got = state.penalties(tokens[:end])
    assert got is not None and got[0].tolist() == [3]
    assert state.penalties([1, 2, 3, 1, 2]) is not None  # rewritten shorter: read again
    assert lowered([1, 2, 3, 4, 5, 6, 7, 1, 2], penalty, DryBreakers()) == {}  # "1 2 3" left it


def test_a_breaker_stops_a_run_and_is_never_lowered():
    penalty = DryPenalty(1.0, 2.0, 2)
    run = [1, 2, 3, 4]
    assert lowered(run + [9] + run, penalty, DryBreakers()) == {9: 4.0}  # 4 tokens: 2 ** 2
    # 3 breaks: the run after it is "4" alone, shorter than allowed
    assert lowered(run + [9] + run, penalty, token_breakers((3,))) == {}
    # a two-token breaker (2, 3): whole, it cuts the run to "4"; 2 alone does not
    assert lowered(run + [9] + run, penalty, token_breakers((2, 3))) == {}
    assert lowered([1, 2, 5, 9, 1, 2], penalty, token_breakers((2, 3))) == {5: 1.0}
    # a single-token breaker that would extend a run keeps its logit
    assert lowered([1, 2, 3, 1, 2], penalty, token_breakers((3,))) == {}


def test_breakers_read_off_token_texts():
    texts = [b"a", b"b\n", b"x:", b"he", b'"q', b"en", b"end"]

    def encode(text: str) -> list[int]:
        return [texts.index(text.encode())] if text.encode() in texts else [99]

    assert breaker_heads(texts, b"\n", encode) == {1: {()}}
    # "end": held by token 6; begun by "he" ("e" + "nd") and "en" ("en" + "d")
    assert breaker_heads(texts, b"end", encode) == {6: {()}, 3: {(99,)}, 5: {(99,)}}


@dataclass
class _Seq:
    token_ids: list[int]


def test_the_sampler_lowers_repeats_for_greedy_rows_alone_or_batched():
    history = _Seq([7, 1, 2, 3, 8, 1, 2])  # "1 2" was followed by 3
    logits = torch.zeros(1, 12)
    logits[0, 3] = 2.0  # the repeat is the argmax
    logits[0, 4] = 1.5
    sampler = Sampler("cpu", 0, [11])
    dry = SamplingParams(temperature=0, dry=DryPenalty(1.0, 1.75, 2))
    plain = SamplingParams(temperature=0)

    def tokens(params: list[SamplingParams]) -> list[int]:
        states = [sampler.new_row_state(p) for p in params]
        batch = logits.expand(len(params), -1).clone()
        return sampler(batch, params, states, [0] * len(params), [history] * len(params)).token_ids.tolist()  # fmt: skip

    assert tokens([plain]) == [3]
    assert tokens([dry]) == [4]  # 3 lowered by 1.0 (a run of 2 = allowed: 1.75 ** 0)
    assert tokens([plain, dry, plain]) == [3, 4, 3]
    off = SamplingParams(temperature=0, dry=DryPenalty(1.0, 1.75, 2, last_n=0))
    assert not off.uses_dry and tokens([off]) == [3]
    # its own breakers: a single-token breaker 3 (as the engine gives the row state)
    states = [sampler.new_row_state(dry, (), token_breakers((3,)))]
    out = sampler(logits.clone(), [dry], states, [0], [history])
    assert out.token_ids.tolist() == [3]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"multiplier": -1.0}, "dry_multiplier"),
        ({"multiplier": float("nan")}, "dry_multiplier"),
        ({"base": 0.9}, "dry_base"),
        ({"allowed_length": -1}, "dry_allowed_length"),
        ({"sequence_breakers": ("\ud800",)}, "valid Unicode"),
        ({"last_n": -2}, "dry_penalty_last_n"),
        ({"sequence_breakers": ("",)}, "dry_sequence_breakers"),
        ({"sequence_breakers": "\n"}, "dry_sequence_breakers"),
        (
            {"sequence_breakers": ("x" * 41,)},
            "dry_sequence_breakers must hold strings of at most 40",
        ),
    ],
)
def test_bad_values_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DryPenalty(**{"multiplier": 1.0, **kwargs})


def test_the_engine_table_reads_a_real_tokenizer():
    from conftest import build_tokenizer

    from roseinfer.tokenizer import Tokenizer

    tokenizer = Tokenizer(build_tokenizer())
    table = DryBreakerTable(tokenizer)
    breakers = table.of(["\n"])
    newline = tokenizer.encode("\n", add_special_tokens=False)
    assert len(newline) == 1 and newline[0] in breakers.single
    assert all(b"\n" in tokenizer.token_bytes(t) for t in breakers.single)
    assert table.of(["\n"]) is breakers  # worked out once per list
