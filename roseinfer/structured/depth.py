"""How deep a JSON schema nests, counted without recursion.

llguidance reads a schema with serde_json's default limit, 128 levels of objects and arrays,
and refuses a deeper one. The walks over a schema that come before it (a tool's `$defs` moved
to the call schema's root, strict mode's check) recurse in Python, where ~500 levels overflowed
the interpreter's stack (a 500 for what is a bad request). So a deeper schema is refused first,
as llguidance would refuse it."""

from __future__ import annotations

from typing import Any

MAX_SCHEMA_DEPTH = 128


def schema_depth_error(schema: Any, where: str) -> str | None:
    """Why `schema` nests too deeply (naming it `where`), or None (a value that is not an
    object or an array, None included, has no depth)."""
    stack: list[tuple[Any, int]] = [(schema, 1)] if isinstance(schema, dict | list) else []
    while stack:
        value, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            return f"{where} nests objects and arrays deeper than {MAX_SCHEMA_DEPTH} levels"
        items = value.values() if isinstance(value, dict) else value
        stack.extend((item, depth + 1) for item in items if isinstance(item, dict | list))
    return None
