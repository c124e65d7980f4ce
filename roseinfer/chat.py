"""A conversation's prompt: its messages (and tools) through the model's chat template, for
every front door (`LLM.chat`, the server's chat endpoint and `/tokenize`).

Tools go to a template that reads `tools` as transformers' `apply_chat_template(tools=...)`
does, with earlier calls as `tool_calls` (arguments as objects) and results as `tool` messages.
A template without tool support gets the Hermes convention instead: a system prompt listing the
tools (`tool_prompt`), calls as `<tool_call>` blocks of the assistant's content, and results as
`<tool_response>` blocks of a user turn, in the calls' order.

What acts through the template (`add_generation_prompt`, `continue_final_message`, template
variables, `messages[].name`) is honoured by handing it to it; a variable it never reads is
refused (`ChatError`, a 400 naming the field from the server), and a speaker's name it never
renders is written before that message's text (`name: text`), so neither is accepted and
ignored.

The message and tool shapes are OpenAI's, as pydantic models (strict: the server's 400s name
the field; `LLM.chat` reads plain dicts through them).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from roseinfer.chat_template import (
    ChatError,
    checked_template_kwargs,
    effort_kwargs,
    reads_variable,
    template_source,
    template_variables,
)
from roseinfer.structured.strict import strict_schema_error
from roseinfer.structured.tools import (
    Tool,
    ToolChoice,
    ToolFieldError,
    ToolUse,
    call_text,
    tool_prompt,
)
from roseinfer.tokenizer import Tokenizer

CHAT_ROLES = ("system", "user", "assistant", "developer", "tool")


class Shape(BaseModel):
    # forbid: an unknown key is refused, naming it; strict: no coercion ("1" is not 1)
    model_config = ConfigDict(extra="forbid", strict=True)


class TextPart(Shape):
    type: str  # "text": the server's field table refuses the others
    text: str


class FunctionCall(Shape):
    name: str
    arguments: str  # JSON text of an object, as OpenAI sends it


class ToolCallMessage(Shape):
    """An assistant's earlier call, in the history."""

    id: str
    type: str  # "function" (refused otherwise, naming it)
    function: FunctionCall


class ChatMessage(Shape):
    role: str
    content: str | list[TextPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallMessage] | None = None  # assistant messages
    tool_call_id: str | None = None  # tool messages: the call this is the result of
    # assistant messages: their thinking, as a reasoning parser read it apart (vLLM's newer
    # name, DeepSeek's and llama.cpp's): the template's `reasoning_content`
    reasoning: str | None = None
    reasoning_content: str | None = None

    def text(self) -> str:
        """The content as text: its parts joined by newlines ("" where there is none)."""
        if isinstance(self.content, list):
            return "\n".join(p.text for p in self.content)
        return self.content or ""

    def thinking(self, i: int) -> str | None:
        """The message's thinking, from either name (ChatError where they differ, or where a
        message other than the assistant's has one)."""
        given = [(k, v) for k, v in (("reasoning", self.reasoning),
                                     ("reasoning_content", self.reasoning_content)) if v is not None]  # fmt: skip
        if given and self.role != "assistant":
            raise ChatError(f"messages.{i}.{given[0][0]}", "only assistant messages have "
                            "reasoning", "invalid_value")  # fmt: skip
        if len(given) == 2 and given[0][1] != given[1][1]:
            raise ChatError(f"messages.{i}.reasoning_content", "reasoning and reasoning_content "
                            "are two names of one field: they differ", "invalid_value")  # fmt: skip
        return given[0][1] if given else None


class FunctionDefinition(Shape):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None  # OpenAI's strict mode: the schema must close every object


class ToolDefinition(Shape):
    type: str  # "function"
    function: FunctionDefinition


class NamedFunction(Shape):
    name: str


class NamedToolChoice(Shape):
    type: str  # "function"
    function: NamedFunction


def read_tools(
    definitions: list[ToolDefinition] | None,
    choice: str | NamedToolChoice | None = None,
    parallel: bool = True,
) -> tuple[tuple[Tool, ...], ToolUse | None]:
    """(the tools the model is shown, how it must use them: None for tool_choice "none" or no
    tools) from OpenAI's `tools`, `tool_choice` (default "auto") and `parallel_tool_calls`."""
    tools = []
    for i, t in enumerate(definitions or ()):
        if t.type != "function":
            raise ChatError(f"tools.{i}.type", f"tool type {t.type!r} is not 'function'")
        try:
            tools.append(Tool(t.function.name, t.function.description, t.function.parameters))
        except ToolFieldError as e:
            raise ChatError(f"tools.{i}.function.{e.field}", str(e)) from None
        if t.function.strict and (error := strict_schema_error(tools[-1].schema, "parameters")):
            raise ChatError(
                f"tools.{i}.function.parameters", f"function {t.function.name!r}: {error}"
            )
    mode, name = _tool_choice(choice)
    if not tools:
        if mode in ("required", "named"):
            raise ChatError("tool_choice", "tool_choice needs tools")
        return (), None
    if mode == "none":
        return tuple(tools), None
    try:
        return tuple(tools), ToolUse(tuple(tools), mode, name, parallel)
    except ValueError as e:
        raise ChatError("tool_choice" if name else "tools", str(e)) from None


def _tool_choice(
    choice: str | NamedToolChoice | None,
) -> tuple[ToolChoice | Literal["none"], str | None]:
    """(the mode, the function of a named choice)."""
    if choice is None:
        return "auto", None
    if isinstance(choice, NamedToolChoice):
        if choice.type != "function":
            raise ChatError(
                "tool_choice.type", f"tool_choice type {choice.type!r} is not 'function'"
            )
        return "named", choice.function.name
    if choice == "none":
        return "none", None
    if choice == "auto":
        return "auto", None
    if choice == "required":
        return "required", None
    raise ChatError("tool_choice", f"tool_choice {choice!r} is not none, auto, required or "
                    '{"type": "function", "function": {"name": ...}}')  # fmt: skip


def template_messages(
    messages: list[ChatMessage], native_tools: bool = True, shows_thinking: bool = True
) -> list[dict[str, Any]]:
    """The messages as templates take them: {role, content[, name, tool_calls, tool_call_id,
    reasoning_content]}, string content; without `native_tools`, calls and results written in
    the Hermes format; without `shows_thinking`, earlier thinking checked and left out."""
    out: list[dict[str, Any]] = []
    calls: list[str] = []  # ids of the calls of the last assistant message
    functions: dict[str, str] = {}  # their functions' names, by id
    answerable: list[list[str]] = []  # per message, the calls it may answer
    # calls of the last assistant message without a result: (message, call) of each
    unanswered: dict[str, tuple[int, int]] = {}
    answered: dict[str, int] = {}  # and those with one: the message that holds it
    for i, m in enumerate(messages):
        if m.role not in CHAT_ROLES:
            raise ChatError(
                f"messages.{i}.role",
                f"messages[{i}].role {m.role!r} is not one of {', '.join(CHAT_ROLES)}",
                "invalid_value",
            )
        if m.content is None and not (m.role == "assistant" and m.tool_calls):
            raise ChatError(
                f"messages.{i}.content",
                f"messages[{i}] has no content (only an assistant message with tool_calls may "
                "leave it out)",
                "invalid_value",
            )
        content = m.text()
        message: dict[str, Any] = {
            "role": "system" if m.role == "developer" else m.role,
            "content": content,
        }
        if m.name:  # "" names nobody: the same as no name
            message["name"] = m.name
        if (thinking := m.thinking(i)) is not None and shows_thinking:
            message["reasoning_content"] = thinking
        _check_tool_fields(m, i)
        if m.role != "tool":
            if unanswered:
                _refuse_unanswered(unanswered)
            calls = []  # a result answers a call of the assistant message just before it
        answerable.append(calls)
        if m.role == "assistant":
            calls = [c.id for c in m.tool_calls or ()]
            if len(set(calls)) < len(calls):  # a result could not say which call it answers
                j = next(j for j, c in enumerate(calls) if c in calls[:j])
                raise ChatError(f"messages.{i}.tool_calls.{j}.id", f"messages[{i}].tool_calls[{j}]"
                                f".id {calls[j]!r} is the id of an earlier call of the same "
                                "message (each call's id is its own)", "invalid_value")  # fmt: skip
            functions = {c.id: c.function.name for c in m.tool_calls or ()}
            unanswered = {c: (i, j) for j, c in enumerate(calls)}
            answered = {}
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
                raise ChatError(
                    f"messages.{i}.tool_call_id",
                    f"messages[{i}].tool_call_id {m.tool_call_id!r} names no call of the "
                    "assistant message before it",
                    "invalid_value",
                )
            if (first := answered.get(m.tool_call_id)) is not None:  # OpenAI's 400, its words
                raise ChatError(
                    f"messages.{i}.tool_call_id",
                    f"Duplicate value for 'tool_call_id' of {m.tool_call_id!r}, in "
                    f"messages[{first}] and messages[{i}] (a call has one result)",
                    "invalid_value",
                )
            message["tool_call_id"] = m.tool_call_id
            unanswered.pop(m.tool_call_id, None)
            answered[m.tool_call_id] = i
            if m.name and m.name != functions[m.tool_call_id]:  # (the cookbook's form names it)
                raise ChatError(
                    f"messages.{i}.name",
                    f"messages[{i}].name {m.name!r} is not the function of call "
                    f"{m.tool_call_id!r} ({functions[m.tool_call_id]!r})",
                    "invalid_value",
                )
        out.append(message)
    if messages and messages[-1].role == "tool" and unanswered:  # results for some calls only
        _refuse_unanswered(unanswered)
    return out if native_tools else _hermes_results(out, answerable)


def _refuse_unanswered(unanswered: dict[str, tuple[int, int]]) -> None:
    """OpenAI's rule: an assistant message's calls are each answered by a tool message after
    it, before any other message or the conversation's end (a model shown a call without its
    result would answer as if it had one). A conversation may end with the calls themselves
    (to count its tokens, to continue it)."""
    call_id, (i, j) = next(iter(unanswered.items()))
    ids = ", ".join(repr(c) for c in unanswered)
    raise ChatError(f"messages.{i}.tool_calls.{j}.id", f"messages[{i}] calls tools that no tool "
                    f"message answers before the next message or the end: {ids} (each call "
                    "needs its result, as OpenAI requires)", "invalid_value")  # fmt: skip


def with_system_prompt(messages: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """`prompt` after the system message's content, or as the system message."""
    if messages[0]["role"] == "system":
        first = dict(messages[0])
        first["content"] = f"{first['content']}\n\n{prompt}" if first["content"] else prompt
        return [first, *messages[1:]]
    return [{"role": "system", "content": prompt}, *messages]


def _check_tool_fields(m: ChatMessage, i: int) -> None:
    if m.tool_calls and m.role != "assistant":
        raise ChatError(f"messages.{i}.tool_calls", "only assistant messages have tool_calls",
                         "invalid_value")  # fmt: skip
    for j, call in enumerate(m.tool_calls or ()):
        if call.type != "function":
            raise ChatError(f"messages.{i}.tool_calls.{j}.type",
                             f"tool call type {call.type!r} is not 'function'", "invalid_value")  # fmt: skip
    if (m.role == "tool") != (m.tool_call_id is not None):
        raise ChatError(f"messages.{i}.tool_call_id",
                         "a tool message, and only a tool message, has a tool_call_id",
                         "invalid_value")  # fmt: skip


def _arguments(call: ToolCallMessage, i: int, j: int) -> dict[str, Any]:
    """A history call's arguments as an object (templates write them with `tojson`)."""
    try:
        args = json.loads(call.function.arguments)
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise ChatError(
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
    tokenizer: Tokenizer,
    messages: list[ChatMessage],
    tools: tuple[Tool, ...] = (),
    add_generation_prompt: bool = True,
    continue_final_message: bool = False,
    template_kwargs: dict[str, Any] | None = None,
) -> list[int]:
    """Token ids of the conversation's prompt (`chat_prompt_text`'s: the template writes the
    special tokens, so none are added)."""
    text = chat_prompt_text(tokenizer, messages, tools, add_generation_prompt,
                            continue_final_message, template_kwargs)  # fmt: skip
    return tokenizer.encode(text, False)


def chat_prompt_text(
    tokenizer: Tokenizer,
    messages: list[ChatMessage],
    tools: tuple[Tool, ...] = (),
    add_generation_prompt: bool = True,
    continue_final_message: bool = False,
    template_kwargs: dict[str, Any] | None = None,
    documents: list[dict[str, str]] | None = None,
    reasoning_effort: str | None = None,
) -> str:
    """The conversation's prompt; ChatError (naming the field) for a field that cannot act,
    TokenizerError when the template refuses the messages; `documents` (vLLM's, for
    retrieval-augmented templates) go to a template that reads them; `reasoning_effort`
    (OpenAI's) as vLLM hands it over (`effort_kwargs`)."""
    if continue_final_message and add_generation_prompt:
        raise ChatError(
            "continue_final_message",
            "continue_final_message needs add_generation_prompt: false (one continues the last "
            "message, the other opens a new turn)",
            "invalid_value",
        )
    native = "tools" in (template_variables(tokenizer) or ())
    if template_kwargs is not None and not isinstance(template_kwargs, dict):
        raise ChatError("chat_template_kwargs", "chat_template_kwargs must be an object of names")
    # earlier thinking, where the template reads none, could change nothing: checked, left out
    shows_thinking = "reasoning_content" in template_source(tokenizer)
    as_given = template_messages(messages, native, shows_thinking)
    kwargs = checked_template_kwargs(tokenizer, as_given, template_kwargs or {})
    if documents:  # (each a dict of strings: the request's model checked them)
        if not reads_variable(tokenizer, as_given, "documents", documents):
            raise ChatError("documents", "this model's chat template does not read documents "
                            "(a retrieval-augmented template's variable)")  # fmt: skip
        kwargs["documents"] = documents
    if reasoning_effort is not None:
        kwargs |= effort_kwargs(tokenizer, as_given, kwargs, reasoning_effort)
    if tools and native:
        kwargs["tools"] = [t.as_json() for t in tools]
    system = tool_prompt(tools) if tools and not native else None

    def apply(rendered: list[dict[str, Any]]) -> str:
        if system is not None:
            rendered = with_system_prompt(rendered, system)
        return tokenizer.apply_chat_template(
            rendered, add_generation_prompt, continue_final_message, **kwargs
        )

    text = apply(as_given)

    def render(msgs: list[ChatMessage]) -> str:
        return apply(template_messages(msgs, native, shows_thinking))

    hidden = _names_not_shown(messages, text, render)
    if not hidden:
        return text
    # the model is to know who speaks (OpenAI's `name`): a name the template drops is written
    # before its message's text, as SillyTavern's own "message content" mode writes it
    return render([
        m.model_copy(update={"content": f"{m.name}: {m.text()}"}) if i in hidden else m
        for i, m in enumerate(messages)
    ])  # fmt: skip


def _names_not_shown(
    messages: list[ChatMessage], text: str, render: Callable[[list[ChatMessage]], str]
) -> list[int]:
    """The messages whose name the template does not show (a template may show some roles'
    names and drop the others'). One render with each name replaced by a marker of digits
    (which case filters leave alone) finds the shown ones; only a name whose marker is missing
    (dropped, or changed by the template) costs a render of its own. An assistant's name (the
    model's own label: multi-agent frameworks stamp each reply) and a tool result's (its
    call's function, which `tool_call_id` names already) tell the model nothing it lacks:
    no-ops where not shown."""
    named = [i for i, m in enumerate(messages) if m.name and m.role not in ("assistant", "tool")]
    if not named:
        return []
    shown_to_check = set(named)
    nonce = f"{secrets.randbelow(10**9):09d}"
    marked = [
        m.model_copy(update={"name": f"{nonce}{i:07d}"}) if i in shown_to_check else m
        for i, m in enumerate(messages)
    ]
    marked_text = render(marked)
    hidden = []
    for i in named:
        if f"{nonce}{i:07d}" in marked_text:
            continue
        unnamed = [
            m.model_copy(update={"name": None}) if j == i else m for j, m in enumerate(messages)
        ]
        if render(unnamed) == text:
            hidden.append(i)
    return hidden
