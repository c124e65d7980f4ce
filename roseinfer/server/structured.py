"""The request forms of structured output, read into one `StructuredOutputs`: OpenAI's
`response_format`, vLLM's `structured_outputs` and older `guided_*` fields, llama.cpp's
`json_schema` and `grammar`, and a chat request's `tools` (`tool_use`: their grammar). A request
uses at most one form (two are a 400 naming the second); whether its schema, regex or grammar
compiles is the engine's check (`LLMEngine.validate`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roseinfer.chat import ChatError, read_tools
from roseinfer.server import protocol as P
from roseinfer.server.errors import APIError
from roseinfer.structured.grammar import GrammarError
from roseinfer.structured.params import StructuredOutputs
from roseinfer.structured.strict import strict_schema_error
from roseinfer.structured.tools import Tool, ToolUse


def tool_use(body: P.ChatCompletionRequest) -> tuple[tuple[Tool, ...], ToolUse | None]:
    """(the tools the model is shown, how it must use them: None for tool_choice "none")."""
    try:
        return read_tools(body.tools, body.tool_choice, body.parallel_tool_calls)
    except ChatError as e:
        raise APIError(400, str(e), param=e.param) from None


@dataclass(frozen=True)
class Constraint:
    """A request's constraint on its output, or none (`spec` None)."""

    param: str | None = None  # the field that asked: what its failures name
    spec: StructuredOutputs | None = None
    # the tools as they constrain the answer (with response_format's schema where both came)
    tools: ToolUse | None = None
    # the parts a constraint of several is made of, each alone: a part that does not compile
    # is named by its own field (a tool's parameters, the response_format beside tools)
    parts: tuple[tuple[str, StructuredOutputs], ...] = ()
    # checked (a 400 naming it where it does not compile) and not applied: response_format
    # beside a call that must come, which leaves no text answer for it to shape (as vLLM)
    unused: tuple[tuple[str, StructuredOutputs], ...] = ()


def structured_outputs(body: P.SamplingRequest, tools: ToolUse | None = None) -> Constraint:
    """The request's one constraint (a 400 naming the second where it gives two)."""
    forms: list[tuple[str, StructuredOutputs]] = []

    def checked(param: str, **spec: object) -> StructuredOutputs:
        try:
            return StructuredOutputs(**spec)  # type: ignore[arg-type]
        except ValueError as e:  # StructuredOutputs' own checks: a 400 naming the field
            message = str(e)
            for key in spec:  # its words name its own field: say the one the request sent
                ours = "structured_outputs." + key if param == "structured_outputs" else param
                message = message.replace(f"structured_outputs {key} ", ours + " ", 1)
            raise APIError(400, message, param=param) from None

    def add(param: str, **spec: object) -> None:
        forms.append((param, checked(param, **spec)))

    param, schema = response_format_schema(body.response_format)
    parts: list[tuple[str, StructuredOutputs]] = []
    unused: tuple[tuple[str, StructuredOutputs], ...] = ()
    if tools is not None:
        parts = [(f"tools.{i}.function.parameters", StructuredOutputs(json=t.arguments_schema))
                 for i, t in enumerate(tools.tools)]  # fmt: skip
        if schema is not None:  # OpenAI's tools beside response_format
            if not tools.must_call:  # calls, or an answer in the format
                parts.append((param, checked(param, json=schema)))
                tools = dataclasses.replace(tools, answer_schema=schema)
            else:  # calls only (the Agents SDK's first turn of an agent with an output type)
                unused = ((param, checked(param, json=schema)),)
            schema = None
        forms.append(("tools", StructuredOutputs(grammar=tools.grammar())))
    if schema is not None:
        add(param, json=schema)
    so = body.structured_outputs
    if (
        so is not None
        and (so.json_, so.regex, so.grammar, so.choice, so.json_object) != (None,) * 5
    ):
        # (holding only vLLM's options, or nothing, it asks for no constraint: as vLLM)
        add("structured_outputs", json=so.json_, regex=so.regex, grammar=so.grammar,
            choice=None if so.choice is None else tuple(so.choice),
            json_object=bool(so.json_object))  # fmt: skip
    if body.guided_json is not None:
        add("guided_json", json=body.guided_json)
    if body.guided_regex is not None:
        add("guided_regex", regex=body.guided_regex)
    if body.guided_choice is not None:
        add("guided_choice", choice=tuple(body.guided_choice))
    if body.guided_grammar is not None:
        add("guided_grammar", grammar=body.guided_grammar)
    if body.json_schema is not None:
        add("json_schema", json=body.json_schema)
    if body.grammar:  # "" asks for nothing (llama.cpp's default)
        add("grammar", grammar=body.grammar)
    if len(forms) > 1:
        raise APIError(400, f"{forms[1][0]} and {forms[0][0]} both constrain the output: give one",
                       param=forms[1][0])  # fmt: skip
    if not forms:
        return Constraint()
    return Constraint(forms[0][0], forms[0][1], tools, tuple(parts), unused)


def response_format_schema(fmt: P.ResponseFormat | None) -> tuple[str, dict[str, Any] | None]:
    """(the field a schema that fails to compile names, the JSON schema `response_format`
    holds the answer to); None for `text` or no format. A malformed one is a 400 naming its
    field."""
    if fmt is None:
        return "response_format", None
    if fmt.json_schema is not None and fmt.type != "json_schema":
        # the schema would constrain nothing: refused rather than silently dropped
        raise APIError(400, f"response_format.json_schema is only used with type "
                            f"'json_schema', not {fmt.type!r}",
                       param="response_format.json_schema")  # fmt: skip
    if fmt.type == "text":
        return "response_format", None
    if fmt.type == "json_object":
        return "response_format", {"type": "object"}
    if fmt.type != "json_schema":
        raise APIError(400, f"response_format type {fmt.type!r} is not one of text, "
                       "json_object, json_schema", param="response_format.type")  # fmt: skip
    if fmt.json_schema is None or fmt.json_schema.schema_ is None:
        raise APIError(400, "response_format json_schema needs json_schema.schema",
                       param="response_format.json_schema")  # fmt: skip
    schema, param = fmt.json_schema.schema_, "response_format.json_schema.schema"
    if fmt.json_schema.strict and (error := strict_schema_error(schema, object_root=True)):
        raise APIError(400, f"{param}: {error}", param=param)
    return param, schema


async def compile_constraint(
    constraint: Constraint, check: Callable[[StructuredOutputs], None]
) -> None:
    """Compile with `check` (the engine's grammar compiler) on a worker thread (a big grammar
    blocks nobody); a 400 naming the field (of a constraint of several parts, the part that
    does not compile: a function's parameters, the response_format beside tools)."""
    assert constraint.spec is not None and constraint.param is not None
    for param, unused in constraint.unused:
        try:
            await asyncio.to_thread(check, unused)
        except GrammarError as e:
            raise APIError(400, f"{param}: {e}", param=param) from None
    try:
        await asyncio.to_thread(check, constraint.spec)
    except GrammarError as e:
        for param, part in constraint.parts:
            try:
                await asyncio.to_thread(check, part)
            except GrammarError as e_part:
                raise APIError(400, f"{param}: {e_part}", param=param) from None
        raise APIError(400, f"{constraint.param}: {e}", param=constraint.param) from None
