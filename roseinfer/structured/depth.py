"""What llguidance cannot read of a JSON schema, found without recursion.

llguidance reads a schema with serde_json's default limit, 128 levels of objects and arrays,
and refuses a deeper one. The walks over a schema that come before it (a tool's `$ref`s moved
under the call's arguments, strict mode's check) recurse in Python, where ~500 levels overflowed
the interpreter's stack (a 500 for what is a bad request). So a deeper schema is refused first,
as llguidance would refuse it. A number that is not finite (`1e400` reads as infinity) has no
JSON form: llguidance read it as null (`{"const": 1e400}` held the output to null), so it is
refused too."""

from __future__ import annotations

import math
from typing import Any

MAX_SCHEMA_DEPTH = 128


def schema_shape_error(schema: Any, where: str) -> str | None:
    """Why llguidance cannot read `schema` (naming it `where`): it nests too deeply, or holds a
    number that is not finite (named by its dotted path in the schema); or None (a value that is
    not an object or an array has no depth)."""
    stack: list[tuple[Any, int, str]] = [(schema, 1, "")] if isinstance(schema, dict | list) else []
    while stack:
        value, depth, path = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            return f"{where} nests objects and arrays deeper than {MAX_SCHEMA_DEPTH} levels"
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(item, dict | list):
                stack.append((item, depth + 1, f"{path}.{key}"))
            elif isinstance(item, float) and not math.isfinite(item):
                at = f"{path}.{key}"[1:]  # paths start with a dot below the root
                return f"{where} holds {item} at {at}, a number JSON cannot hold (beyond a double)"
    return None
