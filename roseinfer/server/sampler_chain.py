"""llama.cpp's `samplers`: the chain of samplers a request runs, in order, as its server reads it
(`common_sampler_types_from_names` / `_from_chars`), mapped onto this engine's sampler.

A sampler left out of the list does not run: its parameter is set to its neutral value (the
temperature to 1, as llama.cpp's chain then never divides). The engine runs the penalties, then
DRY, top-k, top-p, min-p, XTC and the infill filter in that order, with the temperature after
DRY and before all the others (vLLM's order) or after them (`temperature_last`, llama.cpp's
default); a list whose order that cannot run is a 400 naming the two samplers, where their
order changes the output (a sampler at its neutral value has no place in the order; top-k and
min-p, and top-k and the temperature, give the same set either way round; so do the repetition
penalty, a factor, and a temperature above 0, and DRY and penalties that only subtract).
llama.cpp's samplers this engine does not have (`typ_p`,
`top_n_sigma`, `adaptive_p`) may be listed, and listed again: the field table holds
their parameters at their neutral values, where they change nothing; another listed twice is
a 400 (this engine runs each once). A name llama.cpp does not know is a 400 here (llama.cpp
skips it with a warning). A sampler's value is checked whether it is listed or not.
"""

from __future__ import annotations

from dataclasses import dataclass

from roseinfer.sampling_params import GREEDY_TEMPERATURE
from roseinfer.server.errors import APIError

__all__ = ["LLAMACPP_DEFAULT_SAMPLERS", "SamplerChain", "ran", "sampler_chain"]

# llama.cpp's default chain (`common_params_sampling.samplers`), /completion's and /infill's
LLAMACPP_DEFAULT_SAMPLERS = ("penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p",
                             "min_p", "xtc", "temperature")  # fmt: skip
_CANONICAL = ("dry", "top_k", "top_p", "top_n_sigma", "typ_p", "min_p", "temperature", "xtc",
              "infill", "penalties", "adaptive_p")  # fmt: skip
_NAMES = {name: name for name in _CANONICAL}
for _name in _CANONICAL:
    if "_" in _name:  # llama.cpp's aliases: kebab-case and no separator ("top-k", "topk")
        _NAMES[_name.replace("_", "-")] = _name
        _NAMES[_name.replace("_", "")] = _name
_NAMES.update(nucleus="top_p", temp="temperature", typ="typ_p")
_CHARS = {"d": "dry", "k": "top_k", "y": "typ_p", "p": "top_p", "s": "top_n_sigma", "m": "min_p",
          "t": "temperature", "x": "xtc", "i": "infill", "e": "penalties", "a": "adaptive_p"}  # fmt: skip
# llama.cpp's samplers this engine has not (their parameters held neutral: listed, and listed
# again, they change nothing)
_INERT = frozenset({"typ_p", "top_n_sigma", "adaptive_p"})
# the engine's order of the samplers whose place matters (the temperature's is its own)
_ORDER = ("penalties", "dry", "top_k", "top_p", "min_p", "xtc", "infill")
_COMMUTE = {frozenset({"top_k", "min_p"})}  # the same set in either order


@dataclass(frozen=True)
class SamplerChain:
    """What a `samplers` list runs: `names`, canonical, in order; `temperature_last`."""

    names: tuple[str, ...]
    temperature_last: bool

    @property
    def infill(self) -> bool:
        return "infill" in self.names


def ran(temperature_last: bool, infill: bool, xtc: bool = False, dry: bool = False) -> list[str]:
    """The chain the engine ran for a request, under llama.cpp's names (a sampler the request
    left out ran at its neutral value)."""
    first = ["penalties"] + (["dry"] if dry else [])
    inner = ["top_k", "top_p", "min_p"] + (["xtc"] if xtc else []) + (["infill"] if infill else [])
    if temperature_last:
        return [*first, *inner, "temperature"]
    return [*first, "temperature", *inner]


def parse_names(samplers: list[str] | str) -> tuple[str, ...]:
    """The canonical names of a `samplers` list (names, any case) or string (one letter each)."""
    if isinstance(samplers, str):
        unknown = [c for c in samplers if c not in _CHARS]
        if unknown:
            raise APIError(400, f"samplers: {unknown[0]!r} names no sampler (llama.cpp's letters: "
                                f"{''.join(_CHARS)})", param="samplers")  # fmt: skip
        names = tuple(_CHARS[c] for c in samplers)
    else:
        # (ASCII letters alone lowered, as llama.cpp's tolower: the Kelvin sign is no "k")
        found = [_NAMES.get(n.lower() if n.isascii() else n) for n in samplers]
        if None in found:
            bad = samplers[found.index(None)]
            raise APIError(400, f"samplers: {bad!r} names no sampler (llama.cpp's: "
                                f"{', '.join(_CANONICAL)})", param="samplers")  # fmt: skip
        names = tuple(n for n in found if n is not None)
    twice = next((n for i, n in enumerate(names) if n in names[:i] and n not in _INERT), None)
    if twice is not None:
        raise APIError(400, f"samplers lists {twice} twice: this engine runs each sampler once",
                       param="samplers")  # fmt: skip
    return names


def sampler_chain(
    samplers: list[str] | str,
    temperature: float,
    active: frozenset[str],
) -> SamplerChain:
    """The chain a `samplers` value asks for; `temperature`, and `active`: which of the
    penalties, dry, top_k, top_p, min_p and xtc the request sets to other than their neutral
    values (only their order is checked), "shift" where the penalties include presence or
    frequency (subtracted: the repetition penalty, a factor, commutes with the temperature)
    and "factor" where they include the repetition penalty (which DRY, subtracted, does not
    commute with)."""
    names = parse_names(samplers)
    live = [n for n in names if n in active or n == "infill"]
    order = {n: i for i, n in enumerate(live)}
    commute = _COMMUTE if "factor" in active else _COMMUTE | {frozenset({"penalties", "dry"})}
    for i, a in enumerate(live):
        for b in live[i + 1 :]:
            if _ORDER.index(a) > _ORDER.index(b) and frozenset({a, b}) not in commute:
                raise APIError(400, f"samplers: {a} before {b} is an order this engine cannot "
                                    f"run (it runs {', '.join(_ORDER)} in that order)",
                               param="samplers")  # fmt: skip
    if "temperature" not in names or temperature == 1.0:  # (1: it changes nothing anywhere)
        return SamplerChain(names, temperature_last=False)
    at = names.index("temperature")
    # (a factor commutes with a temperature above 0; llama.cpp's greedy temperature leaves one
    # token, which no penalty after it can change)
    shifts = "shift" in active or temperature < GREEDY_TEMPERATURE
    if shifts and "penalties" in order and names.index("penalties") > at:
        raise APIError(400, "samplers: temperature before penalties is an order this engine "
                            "cannot run (it applies the penalties first)", param="samplers")  # fmt: skip
    if "dry" in order and names.index("dry") > at:  # (DRY subtracts: it never commutes)
        raise APIError(400, "samplers: temperature before dry is an order this engine cannot "
                            "run (it applies DRY first)", param="samplers")  # fmt: skip
    # where the temperature stands among the samplers it does not commute with (greedy: those
    # that may take away the likeliest token)
    greedy = ("xtc", "infill")
    after_it = greedy if temperature < GREEDY_TEMPERATURE else ("top_p", "min_p", *greedy)
    around = [n for n in live if n in after_it]
    before = [n for n in around if names.index(n) < at]
    if before and len(before) < len(around):
        later = next(n for n in around if names.index(n) > at)
        raise APIError(400, f"samplers: temperature between {before[-1]} and {later} is an "
                            "order this engine cannot run (it applies the temperature before "
                            "top-k, top-p, min-p, xtc and infill, or after all of them)",
                       param="samplers")  # fmt: skip
    return SamplerChain(names, temperature_last=bool(before) or at == len(names) - 1)
