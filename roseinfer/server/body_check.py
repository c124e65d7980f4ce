"""The field table (`fields.py`) applied to a parsed JSON body before pydantic sees it: only the
honoured, non-null fields go on; an unknown field, a no-op of the wrong type or a refused field
set to something other than its neutral value is a `FieldError` (a 400 naming it)."""

from __future__ import annotations

from typing import Any

from roseinfer.server.errors import APIError
from roseinfer.server.fields import CHAT, EMBEDDINGS, TABLE, Kind


class FieldError(ValueError):
    """A 400 naming `param`."""

    def __init__(self, param: str | None, message: str, code: str = "unsupported_field") -> None:
        super().__init__(message)
        self.param, self.code = param, code

    def api_error(self) -> APIError:
        return APIError(400, str(self), param=self.param, code=self.code)


def check_body(data: Any, endpoint: str) -> dict:
    """The body with only its honoured, non-null fields (nested ones too), for pydantic; or a
    FieldError naming the first field that is unknown, of the wrong type (no-ops), or set to
    something we do not do (refused)."""
    if not isinstance(data, dict):
        raise FieldError(None, "the request body must be a JSON object", "invalid_value")
    view = {k: v for k, v in data.items() if v is not None}
    out = check_object(data, endpoint, "", "", view=view)
    if endpoint in (CHAT, EMBEDDINGS):  # (vLLM's chat form of embeddings: chat's messages)
        if isinstance(out.get("messages"), list):
            out["messages"] = [_check_message(m, i) for i, m in enumerate(out["messages"])]
    if isinstance(out.get("stream_options"), dict):
        out["stream_options"] = check_object(
            out["stream_options"], endpoint, "stream_options", "stream_options"
        )
    if isinstance(out.get("structured_outputs"), dict):  # its constraint's keys: the model's
        out["structured_outputs"] = check_object(
            out["structured_outputs"], endpoint, "structured_outputs", "structured_outputs", True
        )
    if out.get("stream_options") is not None and out.get("stream") is not True:
        raise FieldError(
            "stream_options",
            "'stream_options' is only allowed with 'stream': true",
            "invalid_value",
        )
    return out


def check_object(
    data: dict,
    endpoint: str,
    scope: str,
    where: str,
    others_to_model: bool = False,
    view: dict | None = None,
) -> dict:
    """Check the keys of one JSON object; `scope` names it in the table, `where` in errors.
    `others_to_model`: keys the table does not name are left to the pydantic model (whose
    fields the table does not list), not refused here. `view`: the object the value checks
    read (`data` itself by default)."""
    view = data if view is None else view
    table = TABLE[endpoint]
    out = {}
    for key, value in data.items():
        name = f"{scope}.{key}" if scope else key
        param = f"{where}.{key}" if where else key
        spec = table.get(name)
        if spec is None and others_to_model:
            out[key] = value
            continue
        if spec is None:
            raise FieldError(param, f"'{param}' is not a field this server knows", "unknown_field")
        if value is None:
            continue  # null: the field left out (clients send explicit nulls)
        if spec.kind is Kind.HONOURED:
            out[key] = value
            continue
        accepts = spec.accepts
        assert accepts is not None  # every no-op and refused field has its check (_noop, _ref)
        if spec.kind is Kind.NOOP:
            if not accepts(value, view):
                raise FieldError(
                    param,
                    f"'{param}' is not a value this field takes (it is accepted and unused: "
                    f"{spec.doc})",
                    "invalid_value",
                )
        elif not accepts(value, view):
            raise FieldError(
                param,
                f"'{param}' ({spec.doc}) is not supported by this server; "
                f"only {spec.accepts_doc}, which asks for nothing, is accepted",
            )
    return out


def _check_call(call: Any, where: str) -> Any:
    """A history call's keys, and its function's, through the table (the rest: the model's)."""
    if not isinstance(call, dict):
        return call  # pydantic names it
    out = check_object(call, CHAT, "messages[].tool_calls[]", where, others_to_model=True)
    if isinstance(function := out.get("function"), dict):
        out["function"] = check_object(function, CHAT, "messages[].tool_calls[].function",
                                        f"{where}.function", others_to_model=True)  # fmt: skip
    return out


def _check_message(message: Any, i: int) -> Any:
    if not isinstance(message, dict):
        return message  # pydantic names it
    out = check_object(message, CHAT, "messages[]", f"messages.{i}")
    if isinstance(calls := out.get("tool_calls"), list):
        out["tool_calls"] = [_check_call(call, f"messages.{i}.tool_calls.{j}")
                             for j, call in enumerate(calls)]  # fmt: skip
    content = out.get("content")
    if content == []:  # OpenAI's API wants at least one part
        raise FieldError(
            f"messages.{i}.content", "an empty list of content parts: give at least one",
            "invalid_value",
        )  # fmt: skip
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content):
            where = f"messages.{i}.content.{j}"
            if isinstance(part, dict):
                kind = part.get("type")
                if kind != "text":
                    raise FieldError(
                        f"{where}.type",
                        f"content part type {kind!r} is not supported; only 'text'",
                    )
                part = check_object(part, CHAT, "messages[].content[]", where)
            parts.append(part)
        out["content"] = parts
    return out
