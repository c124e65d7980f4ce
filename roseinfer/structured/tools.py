"""Tool calling's model-facing side: a request's tools, the prompt that lists them for a chat
template without tool support, and the grammar that holds the model's calls to the functions'
schemas.

The call format is the Hermes / Qwen / SmolLM convention, one block per call:

    <tool_call>
    {"name": "get_weather", "arguments": {"city": "Paris"}}
    </tool_call>

The output processor reads the blocks back (roseinfer/output/tool_calls.py). Every mode but
"none" generates under the grammar: `required` and a named function must call (one call, or
with `parallel` several separated by a newline); `auto` writes free text in which a
`<tool_call>` opens a call the grammar then holds to its schema (llguidance's lazy trigger), so
arguments always validate and a call never names a function the request did not give.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urljoin

from roseinfer.structured.depth import schema_shape_error

TOOL_CALL_OPEN, TOOL_CALL_CLOSE = "<tool_call>", "</tool_call>"
# JSON as a schema's grammar writes it (grammar.py; an answer beside tools too): compact.
COMPACT = {"whitespace_flexible": False}
# The separators of `json.dumps`, as the format's examples write calls; no other whitespace.
JSON_STYLE = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
# OpenAI's rule for function names.
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# OpenAI: a function without `parameters` takes none.
NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

ToolChoice = Literal["auto", "required", "named"]


class ToolFieldError(ValueError):
    """A function definition refused, naming its field ("name" or "parameters")."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Tool:
    """One function the model may call (OpenAI's `tools[].function`)."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ToolFieldError(
                "name", f"function name {self.name!r} must be 1 to 64 letters, digits, '_' or '-'"
            )
        # A call's arguments are a JSON object (OpenAI's rule, and the only form the output
        # processor reads back as a call): a schema of another type would make every call text.
        if self.parameters is not None and (
            not isinstance(self.parameters, dict)
            or self.parameters.get("type", "object") != "object"
        ):
            raise ToolFieldError(
                "parameters",
                f"function {self.name!r}: parameters must be a JSON schema of an object "
                '("type": "object")',
            )
        if error := schema_shape_error(self.parameters, f"function {self.name!r}: parameters"):
            raise ToolFieldError("parameters", error)

    @property
    def schema(self) -> dict[str, Any]:
        return NO_PARAMETERS if self.parameters is None else self.parameters

    @property
    def arguments_schema(self) -> dict[str, Any]:
        """The schema the grammar holds a call's arguments to: `schema`, an object even where
        it leaves "type" out (a schema without one would also match a string or a number)."""
        return {**self.schema, "type": "object"}

    def as_json(self) -> dict[str, Any]:
        """OpenAI's tool object, as chat templates and the default prompt show it."""
        function: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            function["description"] = self.description
        function["parameters"] = self.schema
        return {"type": "function", "function": function}


@dataclass(frozen=True)
class ToolUse:
    """A request's tools and how the model must use them (tool_choice "none" is no ToolUse:
    the tools are shown to the model and nothing constrains or parses its output)."""

    tools: tuple[Tool, ...]
    choice: ToolChoice = "auto"
    name: str | None = None  # the function of choice "named"
    parallel: bool = True  # more than one call per answer
    # choice "auto": the JSON schema an answer without calls follows (OpenAI's response_format
    # beside tools); None: free text
    answer_schema: dict[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if not self.tools:
            raise ValueError("tools must not be empty")
        if self.answer_schema is not None and self.must_call:
            raise ValueError('an answer schema goes with choice "auto" (other choices must call)')
        names = [t.name for t in self.tools]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"function names must be unique; given twice: {', '.join(twice)}")
        if (self.choice == "named") != (self.name is not None):
            raise ValueError('a function name goes with choice "named", and only with it')
        if self.name is not None and self.name not in names:
            raise ValueError(f"tool_choice names function {self.name!r}, which is not in tools")

    @property
    def names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.tools)

    @property
    def must_call(self) -> bool:
        """The answer is calls only (required, a named function): no text, no content."""
        return self.choice != "auto"

    def grammar(self) -> str:
        """The llguidance (Lark) grammar of the answer."""
        tools = [t for t in self.tools if self.name in (None, t.name)]
        schema = call_schema(tools)
        call = f'"\\n" %json {json.dumps(schema)} "\\n{TOOL_CALL_CLOSE}"'
        if self.choice == "auto" and self.answer_schema is not None:
            # calls, or an answer in the schema: whichever the answer starts with
            calls = 'call ("\\n" call)*' if self.parallel else "call"
            return (
                f"%llguidance {{}}\nstart: answer | {calls}\n"
                f"answer: %json {json.dumps({**self.answer_schema, 'x-guidance': COMPACT})}\n"
                f'call: "{TOOL_CALL_OPEN}" {call}\n'
            )
        if self.choice == "auto":
            # A lazy trigger: free text until it contains "<tool_call>", which opens a call.
            start = "call* tail" if self.parallel else "tail | call"
            return (
                f"%llguidance {{}}\nstart: {start}\ntail: TEXT\nTEXT: /(.|\\n)*/\n"
                f'call_open[lazy]: TEXT "{TOOL_CALL_OPEN}"\ncall: call_open {call}\n'
            )
        many = self.parallel and self.choice == "required"
        start = 'call ("\\n" call)*' if many else "call"
        return f'%llguidance {{}}\nstart: {start}\ncall: "{TOOL_CALL_OPEN}" {call}\n'


def call_schema(tools: list[Tool]) -> dict[str, Any]:
    """The JSON schema of one call's object, {"name": ..., "arguments": {...}}. Each tool's
    schema sits under `arguments` with its local `$ref`s (`#`, `#/$defs/...`,
    `#/properties/...`) rewritten to point where it now sits: as written they would name the
    call object (a recursive `"$ref": "#"` held its arguments to the call's schema)."""
    options = []
    for i, t in enumerate(tools):
        at = "#/properties/arguments" if len(tools) == 1 else f"#/anyOf/{i}/properties/arguments"
        options.append({
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": _moved(t.arguments_schema, at)},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        })  # fmt: skip
    schema = options[0] if len(options) == 1 else {"anyOf": options}
    return {**schema, "x-guidance": JSON_STYLE}


# A schema's keywords whose values are JSON data, not schemas (a "$ref" in them is data), and
# those whose values map names to schemas (a property may be named "const" or "$ref").
_DATA_KEYS = frozenset({"const", "enum", "examples", "default"})
_NAMED_SCHEMAS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


def _moved(schema: dict[str, Any], at: str) -> dict[str, Any]:
    """`schema` as a subschema at the JSON pointer `at`: its local `$ref`s prefixed with `at`
    (those that name the root's `$id` are local too). A root `$id` goes (refs resolve against
    the whole call schema now); a subschema with its own `$id` is a resource of its own, whose
    `#` refs mean that subschema: left as written."""

    root_id = schema.get("$id")
    base = root_id.rstrip("#") if isinstance(root_id, str) and root_id.rstrip("#") else None

    def local(ref: str) -> str:
        """`ref` as a local one ("#..."), where it names the root's `$id` (whole or relative to
        it); else as written."""
        if base is not None:
            uri, _, fragment = urljoin(base, ref).partition("#")
            if uri == base:
                return "#" + fragment
        return ref

    def moved(node: Any, root: bool = False) -> Any:
        if isinstance(node, list):  # allOf, anyOf, prefixItems, ...
            return [moved(v) for v in node]
        if not isinstance(node, dict) or (not root and isinstance(node.get("$id"), str)):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if root and key == "$id":
                continue
            if key in _DATA_KEYS:
                out[key] = value
            elif key in _NAMED_SCHEMAS and isinstance(value, dict):
                out[key] = {name: moved(sub) for name, sub in value.items()}
            elif key == "$ref" and isinstance(value, str) and (ref := local(value))[:1] == "#":
                # a pointer moves with the schema; an anchor ("#name") holds wherever it is
                out[key] = at + ref[1:] if ref[:2] in ("#", "#/") else ref
            else:
                out[key] = moved(value)
        return out

    return moved(schema, root=True)


def tool_prompt(tools: tuple[Tool, ...]) -> str:
    """The system prompt that lists the tools for a chat template that cannot (Qwen 2.5's
    wording: the format the grammar and the output processor use)."""
    listed = "\n".join(json.dumps(t.as_json(), ensure_ascii=False) for t in tools)
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{listed}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        f"{TOOL_CALL_OPEN}{TOOL_CALL_CLOSE} XML tags:\n{TOOL_CALL_OPEN}\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n'
        f"{TOOL_CALL_CLOSE}"
    )


def call_text(name: str, arguments: Any) -> str:
    """One call as the model writes it (a history's assistant calls, for templates without
    tool support)."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"{TOOL_CALL_OPEN}\n{body}\n{TOOL_CALL_CLOSE}"
