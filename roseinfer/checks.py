"""The value checks that engine settings, requests and the server's fields share."""

from __future__ import annotations

import math

# What torch.Generator.manual_seed takes: a seed is used modulo 2**64 (choice i of n: seed + i).
SEED_MIN, SEED_MAX = -(1 << 63), (1 << 64) - 1


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_bools(**flags: object) -> None:
    """ValueError naming the first of `flags` that is not True or False ("no" is truthy)."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be a boolean, got {value!r}")


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
