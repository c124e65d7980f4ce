"""The field table's row (`FieldSpec`: honoured, no-op or refused) and the value checks of its
no-op and refused fields (`fields.py`, `responses_fields.py`): each check takes (the value, the
whole body or message) and says whether it is accepted."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from roseinfer.checks import is_number

Check = Callable[[Any, dict], bool]  # (value, the whole body or message) -> accepted


def of_type(*types: type) -> Check:
    def check(v: Any, _: dict) -> bool:
        if isinstance(v, bool) and bool not in types:
            return False
        return isinstance(v, types)

    return check


is_str, is_bool, is_int = of_type(str), of_type(bool), of_type(int)


def anything(_: Any, __: dict) -> bool:
    return True


def is_num(v: Any, _: dict) -> bool:
    return is_number(v)


def str_list(v: Any, _: dict) -> bool:
    return isinstance(v, list) and all(isinstance(s, str) for s in v)


def equals(*values: Any) -> Check:
    """Equal to one of `values`, of the same kind (`0` is not `false`)."""

    def check(v: Any, _: dict) -> bool:
        return any(type(v) is type(x) or (is_number(v) and is_number(x)) for x in values) and (
            v in values
        )

    return check


def metadata(v: Any, _: dict) -> bool:
    """OpenAI's rule: up to 16 string keys of up to 64 characters, string values up to 512."""
    return (
        isinstance(v, dict)
        and len(v) <= 16
        and all(isinstance(k, str) and len(k) <= 64 for k in v)
        and all(isinstance(x, str) and len(x) <= 512 for x in v.values())
    )


def never(_: Any, __: dict) -> bool:
    return False  # only null (the field left out) asks for nothing


def nulls_only(v: Any, _: dict) -> bool:
    """An object that asks for nothing: `{}`, or each of its keys null (left out)."""
    return isinstance(v, dict) and all(x is None for x in v.values())


def at_most_zero(v: Any, _: dict) -> bool:
    return is_number(v) and v <= 0


def negative(v: Any, _: dict) -> bool:
    return is_number(v) and v < 0


def best_of(v: Any, body: dict) -> bool:
    n = next((body[k] for k in ("n", "n_cmpl") if body.get(k) is not None), 1)  # llama.cpp's
    return is_int(v, body) and v == n


def tool_choice_none(v: Any, _: dict) -> bool:
    return v in ("none", "auto")  # "auto" with no tools is "none"


def function_call_neutral(v: Any, body: dict) -> bool:
    """The legacy choice, where it asks for what `tool_choice` does anyway: without `tools`
    either asks for nothing; beside them "none" must come with `tool_choice: "none"` (it asks
    for no calls) and "auto" with the default."""
    if not body.get("tools"):
        return tool_choice_none(v, body)
    return v == (body.get("tool_choice") or "auto")


class Kind(StrEnum):
    HONOURED = "honoured"
    NOOP = "no-op"
    REFUSED = "refused"


@dataclass(frozen=True)
class FieldSpec:
    name: str  # dotted for nested fields: "messages[].name", "stream_options.include_usage"
    endpoints: tuple[str, ...]
    kind: Kind
    doc: str
    origin: str  # who defines it: OpenAI, vLLM, llama.cpp, roseinfer
    # no-op: the values of the right type; refused: the neutral values (accepted as no-ops).
    accepts: Check | None = None
    accepts_doc: str = ""


def honoured_field(name: str, endpoints: tuple[str, ...], doc: str,
                   origin: str = "OpenAI") -> FieldSpec:  # fmt: skip
    return FieldSpec(name, endpoints, Kind.HONOURED, doc, origin)


def noop_field(name: str, endpoints: tuple[str, ...], accepts: Check, doc: str,
               origin: str = "OpenAI") -> FieldSpec:  # fmt: skip
    """`accepts`: the values of the right type."""
    return FieldSpec(name, endpoints, Kind.NOOP, doc, origin, accepts)


def refused_field(name: str, endpoints: tuple[str, ...], neutral: Check, neutral_doc: str,
                  doc: str, origin: str = "OpenAI") -> FieldSpec:  # fmt: skip
    """`neutral`: the values that ask for nothing (accepted as no-ops), `neutral_doc` in words."""
    return FieldSpec(name, endpoints, Kind.REFUSED, doc, origin, neutral, neutral_doc)


def shared_with(
    rows: Iterable[FieldSpec], source: str, shares: Callable[[FieldSpec], bool], target: str
) -> tuple[FieldSpec, ...]:
    """`rows` with `target` added to the endpoints of each row of `source` that `shares` (an
    endpoint that reads those fields as `source` does: /v1/responses chat's sampling)."""
    return tuple(
        dataclasses.replace(s, endpoints=(*s.endpoints, target))
        if source in s.endpoints and shares(s)
        else s
        for s in rows
    )
