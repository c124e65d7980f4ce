"""OpenAI's strict mode (`strict: true` on a function or a `json_schema` response format): it
takes only schemas whose every object is closed (`"additionalProperties": false`) and lists
every property as required, and refuses others (as OpenAI's API does). The grammar then holds
the output to exactly those keys; without `strict`, it follows the schema as JSON Schema reads
it, where an object that does not close itself may take keys it does not declare."""

from __future__ import annotations

from typing import Any

from roseinfer.structured.depth import schema_shape_error

# Keywords whose values are a schema, a list of schemas, or names -> schemas.
_ONE = ("items", "additionalItems", "not", "contains", "if", "then", "else", "propertyNames",
        "unevaluatedItems")  # fmt: skip
_MANY = ("anyOf", "allOf", "oneOf", "prefixItems", "items")
_NAMED = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def strict_schema_error(
    schema: Any, where: str = "the schema", object_root: bool = False
) -> str | None:
    """Why `schema` is not one strict mode takes (naming the place in it), or None. A schema of
    the wrong shape (`"required": true`) is left to the grammar's compiler, which refuses it.
    `object_root`: a response format's, whose root must be an object (`"type": "object"`, as
    OpenAI's API requires; a function's arguments are an object whatever their schema says)."""
    if object_root and not (isinstance(schema, dict) and schema.get("type") == "object"):
        return f'{where}: strict mode needs an object at the root ("type": "object")'
    return schema_shape_error(schema, where) or _strict_error(schema, where)


def _strict_error(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None  # true / false schemas, or not a schema: the compiler's to refuse
    kind = schema.get("type")
    properties = schema.get("properties")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or properties is not None:
        if schema.get("additionalProperties") is not False:
            return f'{where}: strict mode needs "additionalProperties": false on every object'
        required = schema.get("required") or []
        if isinstance(properties, dict) and isinstance(required, list):
            missing = [name for name in properties if name not in required]
            if missing:
                return f"{where}: strict mode needs every property required, not {missing}"
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            if error := _strict_error(schema[key], f"{where}.{key}"):
                return error
    for key in _MANY:
        if isinstance(schema.get(key), list):
            for i, sub in enumerate(schema[key]):
                if error := _strict_error(sub, f"{where}.{key}.{i}"):
                    return error
    for key in _NAMED:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                if error := _strict_error(sub, f"{where}.{key}.{name}"):
                    return error
    return None
