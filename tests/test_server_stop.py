"""StopStringChecker: stop strings split across pieces, never leaked, not even partially."""

from __future__ import annotations

import itertools
import random

import pytest
from conftest import lines_run
from hypothesis import given, settings
from hypothesis import strategies as st

from roseinfer.stop import StopStringChecker


def run(stops, pieces):
    checker = StopStringChecker(stops)
    out, emitted_each = [], []
    for piece in pieces:
        emitted, matched = checker.feed(piece)
        out.append(emitted)
        emitted_each.append(emitted)
        if matched:
            return "".join(out), True, emitted_each
    out.append(checker.flush())
    return "".join(out), False, emitted_each


def test_no_stop_strings_passes_text_through():
    checker = StopStringChecker([])
    assert checker.feed("hello") == ("hello", False)
    assert checker.flush() == ""


def test_stop_within_one_piece_truncates_before_it():
    assert run(["END"], ["abc END def"])[:2] == ("abc ", True)


def test_stop_split_across_pieces_is_never_emitted():
    text, matched, each = run(["<|end|>"], ["Hello <", "|en", "d|> more"])
    assert (text, matched) == ("Hello ", True)
    assert all("<" not in e for e in each)  # no partial stop string was ever emitted


def test_held_back_prefix_is_released_when_it_does_not_become_a_stop():
    checker = StopStringChecker(["STOP"])
    assert checker.feed("abc ST") == ("abc ", False)
    assert checker.held == "ST"
    assert checker.feed("ART") == ("START", False)
    assert checker.feed("ST") == ("", False)
    assert checker.flush() == "ST"


def test_earliest_match_wins_and_later_feeds_are_empty():
    checker = StopStringChecker(["bb", "a"])
    assert checker.feed("xxbbya") == ("xx", True)
    assert checker.matched == "bb"
    assert checker.feed("more") == ("", True)
    assert checker.flush() == ""


def test_single_string_argument_and_empty_strings_ignored():
    checker = StopStringChecker("\n\n")
    assert checker.stop == ("\n\n",)
    assert StopStringChecker(["", "x"]).stop == ("x",)


@pytest.mark.parametrize("seed", range(20))
def test_random_splits_equal_whole_text_truncation(seed):
    rng = random.Random(seed)
    alphabet = "ab\n<>|"
    text = "".join(rng.choice(alphabet) for _ in range(60))
    stops = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(2)]
    cuts = sorted(rng.sample(range(1, len(text)), 8))
    pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    hits = [(text.find(s), s) for s in stops if text.find(s) != -1]
    expected = text[: min(hits)[0]] if hits else text
    got, matched, _ = run(stops, pieces)
    assert got == expected
    assert matched == bool(hits)


def first_stop(text: str, stops: list[str], bounds: list[tuple[int, int, bool]],
               include: bool = False) -> str:  # fmt: skip
    """The reference: in the first piece where stop strings end (and may: `can_match`), the one
    that starts first (the longest on a tie) cuts the text, before it (`include`: after it);
    none: the whole text."""
    for start, end, can_match in bounds:
        if not can_match:
            continue
        found = [(at, -len(s)) for s in set(stops) if s for at in range(len(text))
                 if text.startswith(s, at) and start < at + len(s) <= end]  # fmt: skip
        if found:
            at, minus_len = min(found)
            return text[: at - minus_len if include else at]
    return text


def longest_partial(text: str, stops: list[str]) -> int:
    return max((k for s in stops for k in range(1, len(s)) if text.endswith(s[:k])), default=0)


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet="ab#", max_size=40),
    stops=st.lists(st.text(alphabet="ab#", min_size=1, max_size=6), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 40), max_size=8),
    min_pieces=st.integers(0, 4),
    include=st.booleans(),
)
def test_stop_strings_against_a_reference(text, stops, cuts, min_pieces, include):
    """Pieces in any split; the first `min_pieces` before min_tokens (no stop string may end in
    them, vLLM's rule). The text held back after each piece is exactly the longest suffix that
    could still become a stop string: nothing is held longer than needed; with `include`
    (the stop string kept, vLLM's include_stop_str_in_output) nothing at all."""
    marks = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    bounds = [(a, b, k >= min_pieces) for k, (a, b) in enumerate(itertools.pairwise(marks))]
    checker, out = StopStringChecker(stops, include), []
    for start, end, can_match in bounds:
        emitted, matched = checker.feed(text[start:end], can_match)
        out.append(emitted)
        if matched:
            break
        assert len(checker.held) == (0 if include else longest_partial(text[:end], stops))
    else:
        out.append(checker.flush())
    assert "".join(out) == first_stop(text, stops, bounds, include)


def test_a_stop_string_that_ended_before_min_tokens_never_matches():
    """vLLM's rule: only stop strings that end in text after min_tokens count ("ab" ended
    before it; it was still held, a prefix of "abcd", when the next piece came)."""
    checker = StopStringChecker(["ab", "abcd"])
    assert checker.feed("ab", can_match=False) == ("", False)
    assert checker.feed("x") == ("abx", False)
    assert checker.feed("ab") == ("", True)


def test_a_long_stop_string_costs_each_piece_its_own_length():
    """A 30,000-character stop string whose prefix the output keeps matching (the output forced
    to '#'): each piece is followed in steps of its own characters. A search of the held text
    for each of the stop string's prefixes had taken cubic time in the output (a victim on the
    server's event loop waited 7.8 s)."""
    checker = StopStringChecker(["x" + "#" * 30_000, "#" * 30_000 + "b"])
    for _ in range(300):
        assert checker.feed("#" * 20) == ("", False)
    (emitted, matched), lines = lines_run("stop.py", lambda: checker.feed("#" * 20))
    assert (emitted, matched) == ("", False) and len(checker.held) == 6_020
    assert lines < 20 * 2 * 10, lines  # old: ~2 x 6,000 prefixes tried, each a slice and compare
    assert run(["#" * 30_000 + "b"], ["a", "#" * 30_000, "b", "c"])[:2] == ("a", True)
