"""What a request's structured output asks for (`SamplingParams.structured_outputs`), checked
when it is built; `grammar.py` compiles it."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

from roseinfer.checks import check_bools
from roseinfer.structured.depth import schema_shape_error


@dataclass(frozen=True)
class StructuredOutputs:
    """Constrain the output to a grammar: exactly one of a JSON schema (`json`, a dict or its
    JSON text), any JSON object (`json_object`), a regular expression, a choice of strings, or
    a grammar (Lark, or llama.cpp's GBNF). vLLM's `StructuredOutputsParams`; compiled and
    enforced by llguidance (roseinfer/structured/)."""

    json: dict | str | None = field(default=None, hash=False)
    regex: str | None = None
    choice: tuple[str, ...] | None = None
    grammar: str | None = None
    json_object: bool = False
    # The constraint starts after a reasoning model's thinking, text it leaves free up to the
    # first `</think>` (a server's --reasoning-parser sets it): "required" (the output is in
    # such a block, or opens one), "optional" (it may open one with `<think>`); None: from the
    # first token.
    thinking_first: str | None = None

    def __post_init__(self) -> None:
        check_bools(json_object=self.json_object)
        if self.thinking_first not in (None, "required", "optional"):
            raise ValueError("structured_outputs thinking_first must be 'required', 'optional' "
                             f"or None, got {self.thinking_first!r}")  # fmt: skip
        given = [
            name
            for name in ("json", "regex", "choice", "grammar")
            if getattr(self, name) is not None
        ] + (["json_object"] if self.json_object else [])
        if len(given) != 1:
            raise ValueError(
                "structured_outputs must set exactly one of json, regex, choice, grammar, "
                f"json_object; got {given or 'none'}"
            )
        if self.choice is not None:
            if isinstance(self.choice, str):  # tuple() would make each character a choice
                raise ValueError(
                    "structured_outputs choice must be a list of strings, not a string"
                )
            choice = tuple(self.choice)
            if not choice or not all(isinstance(c, str) for c in choice):
                raise ValueError("structured_outputs choice must be a non-empty list of strings")
            object.__setattr__(self, "choice", choice)
        for name in ("regex", "grammar"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"structured_outputs {name} must be a non-empty string")
        if self.json is not None and not isinstance(self.json, dict | str):
            raise ValueError("structured_outputs json must be a JSON schema (object or text)")
        schema = self.json
        if isinstance(schema, str):  # a schema as JSON text: its shape the same as an object's
            try:
                schema = json.loads(schema)
            except (ValueError, RecursionError):
                schema = None  # not JSON: compiling it says so, naming the field
        if schema is not None and (error := schema_shape_error(schema, "json")):
            raise ValueError(f"structured_outputs {error}")

    @functools.cached_property
    def key(self) -> tuple[str, str]:
        """The constraint as given, for caching its compiled grammar (a schema as canonical
        JSON): worked out once per object, which a request's n choices share."""
        after = "" if self.thinking_first is None else f" after thinking ({self.thinking_first})"
        if isinstance(self.json, dict):
            return "json" + after, json.dumps(self.json, sort_keys=True)
        for name in ("json", "regex", "grammar"):
            if (value := getattr(self, name)) is not None:
                return name + after, value
        if self.choice is not None:
            return "choice" + after, json.dumps(self.choice)
        return "json_object" + after, ""
