"""A /v1/responses body as the chat request it runs as: one request path for both APIs.

`responses_request` reads a body that `check_body` has passed (only honoured fields are left,
the field table's no-ops and neutral values dropped) into `ResponsesRequest`: the chat body
(`input` items as `messages`, `instructions` as the first system message, `text.format` as
`response_format`, flat function tools as chat's, `max_output_tokens` as
`max_completion_tokens`, `include`'s logprobs as `logprobs`), and what the response repeats
(`ResponseEcho`). Errors of the chat path name chat's fields; `ResponsesRequest.renamed` turns
them into the fields this request sent (`messages.3` -> `input.2`, `response_format` ->
`text.format`, ...).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from roseinfer.server.body_check import FieldError, check_object
from roseinfer.server.errors import APIError
from roseinfer.server.field_checks import metadata
from roseinfer.server.responses_fields import RESPONSES
from roseinfer.server.responses_store import Link

LOGPROBS_INCLUDE = "message.output_text.logprobs"
_ITEM_KEYS = {  # the keys each input item type takes (beside `type`)
    "message": {"role", "content"},
    "function_call": {"call_id", "name", "arguments"},
    "function_call_output": {"call_id", "output"},
    "reasoning": {"content", "summary"},
}
_ROLES = ("user", "assistant", "system", "developer")
_HISTORY = "previous_response_id"  # where the stored turns' messages come from
_MESSAGE_NAMES = (
    (r"response_format\.json_schema\.schema", "text.format.schema"),
    (r"response_format json_schema needs json_schema\.schema",
     "text.format of type json_schema needs schema"),
    (r"response_format", "text.format"),
    (r"max_completion_tokens", "max_output_tokens"),
    (r"'tool_call_id'", "'call_id'"),
    (r"no tool message answers before the next message",
     "no function_call_output answers before the next message"),
    (r'\{"type": "function", "function": \{"name": \.\.\.\}\}', '{"type": "function", "name": ...}'),
)  # fmt: skip


# the request's fields for the caller's own records, echoed in the Response as sent
_RECORDS = ("user", "prompt_cache_key", "prompt_cache_retention", "safety_identifier")
CACHE_RETENTIONS = ("in_memory", "24h")  # OpenAI's


@dataclass(frozen=True)
class ResponseEcho:
    """The request's settings a Response object repeats (OpenAI's fields, as sent or their
    defaults); `temperature` and `top_p` None where left out (the server's default then)."""

    instructions: str | None = None
    max_output_tokens: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    parallel_tool_calls: bool = True
    temperature: float | None = None
    top_p: float | None = None
    tool_choice: str | dict = "auto"
    tools: tuple[dict, ...] = ()
    text_format: dict = field(default_factory=lambda: {"type": "text"})
    top_logprobs: int = 0
    logprobs: bool = False  # include holds message.output_text.logprobs
    user: str | None = None
    # the caller's own records (no-ops: prefix caching is automatic and exact), echoed
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    safety_identifier: str | None = None
    store: bool = False  # the response is kept (GET /v1/responses/{id}, previous_response_id)
    truncation: str = "disabled"  # "auto": the oldest messages dropped to fit the context
    previous_response_id: str | None = None
    background: bool = False  # run apart from the request: polled, streamed again, cancelled
    conversation: str | None = None  # the Conversation it continues and adds its turn to


@dataclass(frozen=True)
class Source:
    """Where a chat message came from: "instructions", "input" or "input.<i>", the name of
    its text there ("content", a call's result: "output"; None: the item is the text), and
    the items of its tool calls."""

    path: str
    text: str | None = "content"
    calls: list[str] = field(default_factory=list)
    # a reasoning item's message, until the answer or a call after it joins it
    thinking_only: bool = False


@dataclass(frozen=True)
class ResponsesRequest:
    chat: dict[str, Any]  # the chat completions body (for protocol.ChatCompletionRequest)
    echo: ResponseEcho
    sources: tuple[Source, ...] = ()  # per chat message
    # this turn's: the conversation's items it read (OpenAI's "prepended to input_items"),
    # then `input`'s messages
    input_messages: tuple[dict, ...] = ()
    previous: Link | None = None  # the stored response it continues, as it was
    input: str | list = ""  # `input` as sent (checked): what GET .../input_items lists
    conversation_items: tuple[dict, ...] = ()  # read from its conversation, listed before it

    def turn(self, response: dict) -> list[dict]:
        """This turn of the conversation as chat messages: its input, then `response`'s
        output (what a response continuing it sees before its own input). A call cut short
        (its arguments unfinished JSON) is left out: no result can answer it."""
        answer: list[dict] = []
        sources: list[Source] = []  # (where an error would point: none can, it is ours)
        for i, item in enumerate(response["output"]):
            if item["type"] != "function_call" or item["status"] == "completed":
                _add_item(answer, sources, item, f"output.{i}")
        _drop_bare_thinking(answer, sources)
        return [*self.input_messages, *answer]

    def renamed(self, error: APIError) -> APIError:
        """`error` (of the chat path) naming the field this request sent."""
        param = error.param and responses_param(error.param, self.sources)
        message = error.message
        if error.param is not None and param is not None:
            message = re.sub(rf"(?<![\w.]){re.escape(error.param)}(?![\w])", param, message)
        message = re.sub(r"messages\[(\d+)\](\.tool_call_id)?",
                         lambda m: responses_param(f"messages.{m.group(1)}{m.group(2) or ''}",
                                                   self.sources),
                         message)  # fmt: skip
        for chat_name, name in _MESSAGE_NAMES:  # chat's words for the fields, where they remain
            message = re.sub(rf"(?<![\w.]){chat_name}(?![\w])", name, message)
        if (param, message) == (error.param, error.message):
            return error
        return APIError(error.status, message, param, error.code, error.type, error.headers)


_CALL_FIELDS = {"id": "call_id", "function.name": "name", "function.arguments": "arguments"}


def responses_param(param: str, sources: tuple[Source, ...] = ()) -> str:
    """A chat field's path as the Responses field it came from."""
    head, _, rest = param.partition(".")
    if head == "messages":
        index, _, tail = rest.partition(".")
        if not index.isdigit() or int(index) >= len(sources):
            return "input"
        source = sources[int(index)]
        if tail.startswith("tool_calls.") and source.calls:
            j, _, key = tail.removeprefix("tool_calls.").partition(".")
            if j.isdigit() and int(j) < len(source.calls):
                call = source.calls[int(j)]
                return f"{call}.{_CALL_FIELDS[key]}" if key in _CALL_FIELDS else call
        if tail.startswith("content") and source.text is not None:
            return source.path + "." + source.text + tail.removeprefix("content")
        if tail == "tool_call_id":  # a function_call_output item's
            return source.path + ".call_id"
        return source.path
    if head == "max_completion_tokens":
        return "max_output_tokens"
    if head == "logprobs":
        return "include"
    if head == "response_format":
        rest = rest.removeprefix("json_schema").lstrip(".")
        return "text.format" + (f".{rest}" if rest else "")
    if head in ("tools", "tool_choice"):  # chat's nested `function` is flat here
        return param.replace(".function", "", 1)
    return param


def responses_request(
    body: dict[str, Any],
    conversation: Callable[[str], tuple[list[dict], Link]] | None,
    conversation_items: Callable[[str], list[dict]] | None = None,
) -> ResponsesRequest:
    """The chat request a checked Responses body runs as (a FieldError naming the first field
    that cannot act). `conversation`: a stored response's chat messages and its link
    (`ResponseStore`; a KeyError whose text says why where there is none); None: this server
    keeps no responses. `conversation_items`: a Conversation's items (`ConversationStore`; a
    KeyError where there is none)."""
    chat = dict(body)
    messages: list[dict] = []
    sources: list[Source] = []
    instructions = chat.pop("instructions", None)
    if instructions is not None:
        if not isinstance(instructions, str):
            raise FieldError("instructions", "instructions must be a string", "invalid_value")
        messages.append({"role": "system", "content": instructions})
        sources.append(Source("instructions", None))
    store = chat.pop("store", None)
    background = chat.pop("background", False)
    for name, value in (("store", store), ("background", background)):
        if value is not None and not isinstance(value, bool):
            raise FieldError(name, f"{name} must be true or false", "invalid_value")
    if background and store is False:  # (OpenAI's and vLLM's rule: it is read by its id)
        raise FieldError("background", "background needs store: true (a background response "
                         "is read, streamed again or cancelled by its id later)")  # fmt: skip
    previous = chat.pop("previous_response_id", None)
    link = None
    if conversation is None:
        for name, value in (("store", store), ("background", background),
                            ("previous_response_id", previous)):  # fmt: skip
            if value not in (None, False):
                raise FieldError(name, f"{name} needs stored responses, and this server keeps "
                                 "none (--responses-store-size 0)")  # fmt: skip
    elif previous is not None:
        if not isinstance(previous, str):
            raise FieldError("previous_response_id", "previous_response_id must be a string",
                             "invalid_value")  # fmt: skip
        try:
            history, link = conversation(previous)
        except KeyError as e:  # (one still running says so: its own code)
            code = getattr(e, "code", "previous_response_not_found")
            raise FieldError("previous_response_id", str(e), code) from None
        messages += history
        sources += [Source(_HISTORY, None) for _ in history]
    conv = conversation_id(chat.pop("conversation", None), previous)
    turn_start, conv_items = len(messages), []
    if conv is not None:
        if conversation_items is None:
            raise FieldError("conversation", "conversation needs stored conversations, and this "
                             "server keeps none (--conversations-store-size 0)")  # fmt: skip
        try:
            conv_items = conversation_items(conv)
        except KeyError as e:
            raise FieldError("conversation", str(e), "conversation_not_found") from None
        for i, item in enumerate(conv_items):  # (checked when they were added)
            _add_item(messages, sources, item, f"conversation.items.{i}")
    if "input" not in chat:
        raise FieldError("input", "'input' is required", "invalid_value")
    items = chat.pop("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        sources.append(Source("input", None))
    elif isinstance(items, list) and items:
        for i, item in enumerate(items):
            _add_item(messages, sources, item, f"input.{i}")
    else:
        raise FieldError("input", "input must be a string or a non-empty list of items",
                         "invalid_value")  # fmt: skip
    _drop_bare_thinking(messages, sources)
    chat["messages"] = messages
    if "max_output_tokens" in chat:
        chat["max_completion_tokens"] = chat.pop("max_output_tokens")
    truncation = chat.pop("truncation", "disabled")
    if truncation not in ("disabled", "auto"):
        raise FieldError("truncation", f"truncation must be 'disabled' or 'auto', got "
                         f"{truncation!r}", "invalid_value")  # fmt: skip
    records = {name: chat.pop(name, None) for name in _RECORDS}
    for name, value in records.items():
        if value is not None and not isinstance(value, str):
            raise FieldError(name, f"{name} must be a string", "invalid_value")
    if records["prompt_cache_retention"] not in (None, *CACHE_RETENTIONS):
        raise FieldError("prompt_cache_retention", "prompt_cache_retention must be one of "
                         f"{', '.join(CACHE_RETENTIONS)}", "invalid_value")  # fmt: skip
    meta = chat.pop("metadata", {})
    if not metadata(meta, body):
        raise FieldError("metadata", "metadata must hold up to 16 strings of up to 512 "
                         "characters, keys of up to 64", "invalid_value")  # fmt: skip
    logprobs = _logprobs_included(chat.pop("include", []))
    top = chat.pop("top_logprobs", 0)
    if not isinstance(top, int) or isinstance(top, bool) or not 0 <= top <= 20:
        raise FieldError("top_logprobs", "top_logprobs must be an integer in [0, 20]",
                         "invalid_value")  # fmt: skip
    if logprobs:
        chat["logprobs"], chat["top_logprobs"] = True, top
    elif top != 0:
        raise FieldError("top_logprobs", f"top_logprobs needs include: [\"{LOGPROBS_INCLUDE}\"] "
                         "(without it no logprobs are returned)", "invalid_value")  # fmt: skip
    tools = chat.pop("tools", None)
    if tools is not None:
        if not isinstance(tools, list):
            raise FieldError("tools", "tools must be a list", "invalid_value")
        chat["tools"] = [_chat_tool(t, f"tools.{i}") for i, t in enumerate(tools)]
        tools = [t["function"] for t in chat["tools"]]
    tool_choice = chat.pop("tool_choice", None)
    if tool_choice is not None:
        chat["tool_choice"] = _chat_tool_choice(tool_choice)
    if logprobs and chat.get("tools") and tool_choice != "none":
        # logprobs belong to output_text; a function_call item has none to put them in
        raise FieldError("include", f"include {LOGPROBS_INCLUDE!r} beside tools that may be "
                         "called is not supported (a function_call item has no logprobs); "
                         "only with tool_choice 'none'")  # fmt: skip
    text_format: dict = {"type": "text"}
    text = chat.pop("text", None)
    if text is not None:
        text = check_object(_object(text, "text"), RESPONSES, "text", "text")
        if "format" in text:
            fmt = _object(text["format"], "text.format")
            text_format = check_object(fmt, RESPONSES, "text.format", "text.format")
            chat["response_format"] = _response_format(text_format)
    echo = ResponseEcho(
        instructions=instructions,
        max_output_tokens=chat.get("max_completion_tokens"),
        metadata=meta,
        parallel_tool_calls=chat.get("parallel_tool_calls", True),
        temperature=chat.get("temperature"),
        top_p=chat.get("top_p"),
        tool_choice="auto" if tool_choice is None else tool_choice,
        tools=tuple(_echo_tool(t) for t in tools or ()),
        text_format=text_format,
        top_logprobs=top,
        logprobs=logprobs,
        **records,
        truncation=truncation,
        store=conversation is not None and store is not False,  # OpenAI's default: stored
        previous_response_id=previous,
        background=bool(background),
        conversation=conv,
    )
    return ResponsesRequest(chat, echo, tuple(sources), tuple(messages[turn_start:]), link,
                            items, tuple(conv_items))  # fmt: skip


def conversation_id(value: Any, previous: str | None) -> str | None:
    """`conversation`: an id, or `{"id": ...}` (OpenAI's two forms)."""
    if value is None:
        return None
    if previous is not None:
        raise FieldError("conversation", "give conversation or previous_response_id, not both",
                         "invalid_value")  # fmt: skip
    if isinstance(value, dict) and set(value) == {"id"}:
        value = value["id"]
    if not isinstance(value, str) or not value:
        raise FieldError("conversation", "conversation must be a conversation's id or "
                         "{\"id\": ...}", "invalid_value")  # fmt: skip
    return value


def _object(value: Any, where: str) -> dict:
    if not isinstance(value, dict):
        raise FieldError(where, f"{where} must be an object", "invalid_value")
    return value


def _add_item(messages: list[dict], sources: list[Source], item: Any, where: str) -> None:
    """One input item as chat messages: a call joins the assistant message before it."""
    item = check_object(_object(item, where), RESPONSES, "input[]", where)
    kind = item.pop("type", "message" if "role" in item else None)
    if not isinstance(kind, str) or kind not in _ITEM_KEYS:
        raise FieldError(f"{where}.type", f"input item type {kind!r} is not supported; only "
                         "message, function_call, function_call_output and reasoning")  # fmt: skip
    for key in item:
        if key not in _ITEM_KEYS[kind]:
            raise FieldError(f"{where}.{key}", f"'{where}.{key}' is not a field of a {kind} item",
                             "unknown_field")  # fmt: skip
    if kind == "reasoning":  # the thinking before the answer it joins (chat's reasoning)
        content = item.get("content")
        text = None if content is None else _parts_text(content, f"{where}.content",
                                                       "reasoning_text")  # fmt: skip
        messages.append({"role": "assistant", "content": "", "reasoning_content": text})
        sources.append(Source(where, None, thinking_only=True))
        return
    last = messages[-1] if messages else None
    thought = bool(sources) and sources[-1].thinking_only
    if kind == "function_call":
        call = {"id": item.get("call_id"), "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments")}}  # fmt: skip
        # (a stored turn's answer stays as it was: a call in `input` opens a message of its own)
        if last is None or last["role"] != "assistant" or sources[-1].path == _HISTORY:
            messages.append({"role": "assistant", "content": None})
            sources.append(Source(where))
        messages[-1].setdefault("tool_calls", []).append(call)
        sources[-1].calls.append(where)
        sources[-1] = dataclasses.replace(sources[-1], thinking_only=False)
        return
    if kind == "function_call_output":
        output = item.get("output")
        if isinstance(output, list):  # input_text parts
            output = _parts_text(output, f"{where}.output", "input_text")
        messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": output})
        sources.append(Source(where, "output"))
        return
    role = item.get("role")
    if role not in _ROLES:
        raise FieldError(f"{where}.role", f"role {role!r} is not one of {', '.join(_ROLES)}",
                         "invalid_value")  # fmt: skip
    content = item.get("content")
    if isinstance(content, list):
        part_type = "output_text" if role == "assistant" else "input_text"
        content = _parts_text(content, f"{where}.content", part_type)
    if role == "assistant" and thought:  # the answer of the thinking just before it
        assert last is not None
        last["content"] = content
        sources[-1] = Source(where)
        return
    messages.append({"role": role, "content": content})
    sources.append(Source(where))


def _drop_bare_thinking(messages: list[dict], sources: list[Source]) -> None:
    """Reasoning items no answer or call joined (an answer cut while thinking): left out, as a
    template shows earlier thinking only with its answer (an empty turn would be shown)."""
    keep = [k for k, source in enumerate(sources) if not source.thinking_only]
    messages[:] = [messages[k] for k in keep]
    sources[:] = [sources[k] for k in keep]


def _parts_text(parts: list, where: str, part_type: str) -> str:
    """Text parts joined with newlines (as chat's parts); other part types refused."""
    if not parts:
        raise FieldError(where, "an empty list of content parts: give at least one",
                         "invalid_value")  # fmt: skip
    texts = []
    for j, part in enumerate(parts):
        at = f"{where}.{j}"
        part = check_object(_object(part, at), RESPONSES, "input[].content[]", at)
        if part.get("type") != part_type:
            raise FieldError(f"{at}.type", f"content part type {part.get('type')!r} is not "
                             f"supported here; only {part_type!r}")  # fmt: skip
        if not isinstance(part.get("text"), str):
            raise FieldError(f"{at}.text", f"{at}.text must be a string", "invalid_value")
        texts.append(part["text"])
    return "\n".join(texts)


def _logprobs_included(include: Any) -> bool:
    if not isinstance(include, list) or not all(isinstance(v, str) for v in include):
        raise FieldError("include", "include must be a list of strings", "invalid_value")
    for j, value in enumerate(include):
        if value != LOGPROBS_INCLUDE:
            raise FieldError(f"include.{j}", f"include {value!r} is not supported by this "
                             f"server; only {LOGPROBS_INCLUDE!r}")  # fmt: skip
    return bool(include)


def _chat_tool(tool: Any, where: str) -> dict:
    tool = check_object(_object(tool, where), RESPONSES, "tools[]", where)
    if tool.get("type") != "function":
        raise FieldError(f"{where}.type", f"tool type {tool.get('type')!r} is not supported; "
                         "only 'function'")  # fmt: skip
    function = {k: v for k, v in tool.items() if k != "type"}
    function.setdefault("strict", True)  # the Responses API's default (chat's is false)
    return {"type": "function", "function": function}


def _echo_tool(tool: dict) -> dict:
    """A tool (its chat function) as the response repeats it (OpenAI's shape, `description`
    null where left out)."""
    return {"type": "function", "name": tool.get("name"), "parameters": tool.get("parameters"),
            "strict": tool.get("strict"), "description": tool.get("description")}  # fmt: skip


def _chat_tool_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return choice  # a string: chat's check names a bad one
    choice = check_object(choice, RESPONSES, "tool_choice", "tool_choice")
    if choice.get("type") != "function":
        raise FieldError("tool_choice.type", f"tool_choice type {choice.get('type')!r} is not "
                         "supported; only 'function'")  # fmt: skip
    if not isinstance(choice.get("name"), str):
        raise FieldError("tool_choice.name", "tool_choice.name must name a function",
                         "invalid_value")  # fmt: skip
    return {"type": "function", "function": {"name": choice.get("name")}}


def _response_format(fmt: dict) -> dict:
    kind = fmt.get("type")
    if kind != "json_schema":
        for key in ("name", "schema", "strict", "description"):
            if key in fmt:
                raise FieldError(f"text.format.{key}", f"text.format.{key} is only used with "
                                 f"type 'json_schema', not {kind!r}", "invalid_value")  # fmt: skip
        return {"type": kind}
    schema = {k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}
    return {"type": "json_schema", "json_schema": schema}
