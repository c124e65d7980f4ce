"""A chat request's prompt: its messages (and tools) through the model's chat template.

Tools go to a template that reads `tools` as transformers' `apply_chat_template(tools=...)`
does, with earlier calls as `tool_calls` (arguments as objects) and results as `tool` messages.
A template without tool support gets the Hermes convention instead: a system prompt listing the
tools (`tool_prompt`), calls as `<tool_call>` blocks of the assistant's content, and results as
`<tool_response>` blocks of a user turn, in the calls' order.

The fields that act through the template (`add_generation_prompt`, `continue_final_message`,
`chat_template_kwargs`, `messages[].name`) are honoured by handing them to it, and refused with
a 400 naming them where the template would drop them: a name the template never renders, or a
`chat_template_kwargs` key it never reads, would otherwise be accepted and ignored.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from roseinfer.server import protocol as P
from roseinfer.server.fields import FieldError
from roseinfer.structured.tools import Tool, call_text, tool_prompt
from roseinfer.tokenizer import Tokenizer, TokenizerError

# Arguments of transformers' apply_chat_template, and the request's own fields: not template
# variables a client may set through chat_template_kwargs.
_RESERVED = frozenset({
    "messages", "conversation", "add_generation_prompt", "continue_final_message", "tools",
    "documents", "chat_template", "tokenize", "padding", "truncation", "max_length",
    "return_tensors", "return_dict", "return_assistant_tokens_mask", "tokenizer_kwargs",
})  # fmt: skip


def template_messages(
    messages: list[P.ChatMessage], native_tools: bool = True
) -> list[dict[str, Any]]:
    """The messages as templates take them: {role, content[, name, tool_calls, tool_call_id]},
    string content; without `native_tools`, calls and results written in the Hermes format."""
    out: list[dict[str, Any]] = []
    calls: list[str] = []  # ids of the calls of the last assistant message
    answerable: list[list[str]] = []  # per message, the calls it may answer
    for i, m in enumerate(messages):
        if m.role not in P.CHAT_ROLES:
            raise FieldError(
                f"messages.{i}.role",
                f"messages[{i}].role {m.role!r} is not one of {', '.join(P.CHAT_ROLES)}",
                "invalid_value",
            )
        if isinstance(m.content, list):
            content = "\n".join(p.text for p in m.content)
        else:
            content = m.content or ""
        message: dict[str, Any] = {
            "role": "system" if m.role == "developer" else m.role,
            "content": content,
        }
        if m.name:  # "" names nobody: the same as no name
            message["name"] = m.name
        _check_tool_fields(m, i)
        answerable.append(calls)
        if m.role == "assistant":
            calls = [c.id for c in m.tool_calls or ()]
            if m.tool_calls:
                history = [
                    (c.function.name, _arguments(c, i, j)) for j, c in enumerate(m.tool_calls)
                ]
                if native_tools:
                    message["tool_calls"] = [
                        {"id": c.id, "type": "function",
                         "function": {"name": name, "arguments": args}}
                        for c, (name, args) in zip(m.tool_calls, history, strict=True)
                    ]  # fmt: skip
                else:
                    blocks = [call_text(name, args) for name, args in history]
                    message["content"] = "\n".join(([content] if content else []) + blocks)
        elif m.role == "tool":
            if m.tool_call_id not in calls:
                raise FieldError(
                    f"messages.{i}.tool_call_id",
                    f"messages[{i}].tool_call_id {m.tool_call_id!r} names no call of the "
                    "assistant message before it",
                    "invalid_value",
                )
            message["tool_call_id"] = m.tool_call_id
        out.append(message)
    return out if native_tools else _hermes_results(out, answerable)


def with_system_prompt(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """`prompt` after the system message's content, or as the system message."""
    if messages[0]["role"] == "system":
        first = dict(messages[0])
        first["content"] = f"{first['content']}\n\n{prompt}" if first["content"] else prompt
        return [first, *messages[1:]]
    return [{"role": "system", "content": prompt}, *messages]


def _check_tool_fields(m: P.ChatMessage, i: int) -> None:
    if m.tool_calls and m.role != "assistant":
        raise FieldError(f"messages.{i}.tool_calls", "only assistant messages have tool_calls",
                         "invalid_value")  # fmt: skip
    for j, call in enumerate(m.tool_calls or ()):
        if call.type != "function":
            raise FieldError(f"messages.{i}.tool_calls.{j}.type",
                             f"tool call type {call.type!r} is not 'function'", "invalid_value")  # fmt: skip
    if (m.role == "tool") != (m.tool_call_id is not None):
        raise FieldError(f"messages.{i}.tool_call_id",
                         "a tool message, and only a tool message, has a tool_call_id",
                         "invalid_value")  # fmt: skip


def _arguments(call: P.ToolCallMessage, i: int, j: int) -> dict[str, Any]:
    """A history call's arguments as an object (templates write them with `tojson`)."""
    try:
        args = json.loads(call.function.arguments)
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise FieldError(
            f"messages.{i}.tool_calls.{j}.function.arguments",
            "tool call arguments must be the JSON text of an object",
            "invalid_value",
        )
    return args


def _hermes_results(messages: list[dict[str, Any]], calls: list[list[str]]) -> list[dict]:
    """Each run of tool results as one user turn of `<tool_response>` blocks, in the order of
    the calls they answer (`calls[i]`: the ids of the calls messages[i] may answer)."""
    out: list[dict[str, Any]] = []
    run: list[tuple[int, str]] = []  # (the call's position, the result)
    for i, m in enumerate(messages + [{"role": "end"}]):
        if m["role"] == "tool":
            run.append((calls[i].index(m["tool_call_id"]), m["content"]))
            continue
        if run:
            blocks = [f"<tool_response>\n{r}\n</tool_response>" for _, r in sorted(run)]
            out.append({"role": "user", "content": "\n".join(blocks)})
            run = []
        if m["role"] != "end":
            out.append(m)
    return out


def chat_prompt_ids(
    tokenizer: Tokenizer, body: P.ChatCompletionRequest, tools: tuple[Tool, ...] = ()
) -> list[int]:
    """Token ids of the request's prompt; FieldError (a 400 naming the field) for a template
    field that cannot act, TokenizerError when the template refuses the messages."""
    if body.continue_final_message and body.add_generation_prompt:
        raise FieldError(
            "continue_final_message",
            "continue_final_message needs add_generation_prompt: false (one continues the last "
            "message, the other opens a new turn)",
            "invalid_value",
        )
    native = "tools" in (template_variables(tokenizer) or ())
    messages = template_messages(body.messages, native)
    kwargs = _template_kwargs(tokenizer, messages, body.chat_template_kwargs or {})
    if tools and native:
        kwargs["tools"] = [t.as_json() for t in tools]
    elif tools:
        messages = with_system_prompt(messages, tool_prompt(tools))

    def render(msgs: list[dict]) -> str:
        return tokenizer.apply_chat_template(
            msgs, body.add_generation_prompt, body.continue_final_message, **kwargs
        )

    text = render(messages)
    named = [i for i, m in enumerate(messages) if "name" in m]
    if named:
        unnamed = [{k: v for k, v in m.items() if k != "name"} for m in messages]
        if render(unnamed) == text:
            raise FieldError(
                f"messages.{named[0]}.name",
                "this model's chat template does not use message names, so the model would "
                "never see it: leave 'name' out",
            )
    return tokenizer.encode(text, False)


def _template_kwargs(tokenizer: Tokenizer, messages: list[dict], kwargs: dict) -> dict[str, Any]:
    variables = template_variables(tokenizer)
    for key in kwargs:
        param = f"chat_template_kwargs.{key}"
        if key in _RESERVED:
            raise FieldError(param, f"'{key}' cannot be set through chat_template_kwargs")
        if variables is None:  # a template we cannot parse: see whether the key changes it
            if _renders_same(tokenizer, messages, {key: kwargs[key]}):
                variables = frozenset()
            else:
                continue
        if key not in variables:
            raise FieldError(
                param, f"this model's chat template does not read a variable named '{key}'"
            )
    return kwargs


def _renders_same(tokenizer: Tokenizer, messages: list[dict], kwargs: dict) -> bool:
    try:
        return tokenizer.apply_chat_template(messages, **kwargs) == (
            tokenizer.apply_chat_template(messages)
        )
    except TokenizerError:
        return False  # the template used it (and refused the value): the render will say so


def template_variables(tokenizer: Tokenizer) -> frozenset[str] | None:
    """The variables the chat template reads; empty without a template, None if unparsable."""
    source = getattr(tokenizer.hf, "chat_template", None)
    if isinstance(source, dict):
        source = source.get("default")
    if not source:
        return frozenset()
    return _variables_of(source)


@lru_cache(maxsize=8)
def _variables_of(source: str) -> frozenset[str] | None:
    import jinja2
    from jinja2 import meta

    env = jinja2.Environment(extensions=["jinja2.ext.loopcontrols", "jinja2.ext.do"])
    try:
        return frozenset(meta.find_undeclared_variables(env.parse(source)))
    except jinja2.TemplateError:
        return None
