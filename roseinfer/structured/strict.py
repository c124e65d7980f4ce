"""OpenAI's strict mode (`strict: true` on a function or a `json_schema` response format): it
takes only schemas whose every object is closed (`"additionalProperties": false`) and lists
every property as required, and refuses others (as OpenAI's API does). The grammar then holds
the output to exactly those keys; without `strict`, it follows the schema as JSON Schema reads
it, where an object that does not close itself may take keys it does not declare."""

from __future__ import annotations

from typing import Any

# Keywords whose values are schemas, lists of schemas, or names -> schemas.
_ONE = ("items", "not", "contains", "additionalItems")
_MANY = ("anyOf", "allOf", "oneOf", "prefixItems")
_NAMED = ("properties", "$defs", "definitions")


def strict_schema_error(schema: Any, where: str = "the schema") -> str | None:
    """Why `schema` is not one strict mode takes (naming the place in it), or None."""
    if not isinstance(schema, dict):
        return None  # true / false schemas
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema:
        if schema.get("additionalProperties") is not False:
            return f'{where}: strict mode needs "additionalProperties": false on every object'
        properties = schema.get("properties") or {}
        missing = [name for name in properties if name not in (schema.get("required") or ())]
        if missing:
            return f"{where}: strict mode needs every property required, not {missing}"
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            if error := strict_schema_error(schema[key], f"{where}.{key}"):
                return error
    for key in _MANY:
        for i, sub in enumerate(schema.get(key) or ()):
            if error := strict_schema_error(sub, f"{where}.{key}.{i}"):
                return error
    for key in _NAMED:
        for name, sub in (schema.get(key) or {}).items():
            if error := strict_schema_error(sub, f"{where}.{key}.{name}"):
                return error
    return None
