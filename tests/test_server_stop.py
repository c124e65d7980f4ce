"""StopStringChecker: stop strings split across pieces, never leaked, not even partially."""

from __future__ import annotations

import random

import pytest

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
