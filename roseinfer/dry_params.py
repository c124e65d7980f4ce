"""A request's DRY penalty (`SamplingParams.dry`): llama.cpp's "don't repeat yourself" sampler,
its parameters checked once. The engine turns the breakers into token ids
(`engine/dry_breakers.py`); the sampler applies the penalty (`layers/dry.py`)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

from roseinfer.checks import is_int, is_number

# The request fields (llama.cpp's names) that DryPenalty's checks name, in its order.
FIELDS = ("dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
          "dry_sequence_breakers")  # fmt: skip
# llama.cpp's defaults (common.h: `dry_sequence_breakers`)
DEFAULT_BREAKERS: tuple[str, ...] = ("\n", ":", '"', "*")
MAX_BREAKERS = 64
MAX_BREAKER_BYTES = 40  # llama.cpp cuts a longer one to this (with a warning): refused here


@dataclass(frozen=True)
class DryPenalty:
    """Where the sequence's last tokens repeat a run of tokens seen earlier in its window (the
    last `last_n` tokens of the prompt and the output; -1: all of them; 0: off), the token that
    followed that earlier run, which would make the repeat longer, has its logit lowered by
    `multiplier * base ** (length - allowed_length)` for runs of `allowed_length` tokens or
    more (the longest such run per token). A run never reaches back past the last sequence
    breaker in the window (a token whose text holds one of `sequence_breakers`, or that starts
    one that the tokens after it complete), and a token that is a breaker by itself is never
    lowered. Applied after the penalties, before the temperature and the truncation (llama.cpp's
    chain); greedy requests too."""

    multiplier: float
    base: float = 1.75
    allowed_length: int = 2
    last_n: int = -1
    sequence_breakers: tuple[str, ...] = DEFAULT_BREAKERS

    def __post_init__(self) -> None:
        if not is_number(self.multiplier) or self.multiplier < 0:
            raise ValueError(
                f"dry_multiplier must be a finite number >= 0, got {self.multiplier!r}"
            )
        if not is_number(self.base) or self.base < 1:
            raise ValueError(f"dry_base must be a finite number >= 1, got {self.base!r}")
        if not is_int(self.allowed_length) or self.allowed_length < 0:
            raise ValueError(
                f"dry_allowed_length must be an integer >= 0, got {self.allowed_length!r}"
            )
        if not is_int(self.last_n) or self.last_n < -1:
            raise ValueError(f"dry_penalty_last_n must be an integer >= -1 (-1: the whole "
                             f"context; 0: off), got {self.last_n!r}")  # fmt: skip
        breakers = self.sequence_breakers
        if isinstance(breakers, str) or not all(isinstance(b, str) and b for b in breakers):
            raise ValueError("dry_sequence_breakers must be a list of non-empty strings")
        breakers = tuple(dict.fromkeys(breakers))
        if len(breakers) > MAX_BREAKERS:
            raise ValueError(f"dry_sequence_breakers takes at most {MAX_BREAKERS} strings")
        for b in breakers:
            try:
                size = len(b.encode("utf-8"))
            except UnicodeEncodeError:  # a lone surrogate: no text to match
                raise ValueError(
                    f"dry_sequence_breakers must hold valid Unicode, got {b!r}"
                ) from None
            if size > MAX_BREAKER_BYTES:
                raise ValueError(f"dry_sequence_breakers must hold strings of at most "
                                 f"{MAX_BREAKER_BYTES} bytes of UTF-8, got {b!r}")  # fmt: skip
        object.__setattr__(self, "sequence_breakers", breakers)

    @property
    def active(self) -> bool:
        """It can lower a logit: a multiplier above 0 and a window (llama.cpp's off values)."""
        return self.multiplier > 0 and self.last_n != 0

    @property
    def multiplier_fp32(self) -> float:
        """The multiplier as llama.cpp holds it (a float)."""
        return _fp32(self.multiplier)

    @property
    def base_fp32(self) -> float:
        return _fp32(self.base)

    @property
    def max_exponent(self) -> int:
        """The exponent from which llama.cpp caps `base ** exponent`, computed in fp32 as it
        does (`FLOAT_MAX_LOG / log(base)`: base 4 gives 64, whose power overflows to inf), or
        0: no cap (a base of 1 or next to it)."""
        base = self.base_fp32
        if base <= _fp32(1.000001):
            return 0
        return int(_fp32(_fp32(88.7228391) / _fp32(math.log(base))))


def _fp32(x: float) -> float:
    """x rounded to the nearest float32 (inf past its range)."""
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)
