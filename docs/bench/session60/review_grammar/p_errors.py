"""Compile errors and the empty-language probe, with and without thinking_first."""
from common import *
from roseinfer.structured.grammar import GrammarError
hf = build_tokenizer(); hf.add_tokens(["<think>", "</think>"])
tok, comp = compiler_for(hf)
cases = [
    ("bad regex", dict(regex="[0-9")),
    ("bad lark", dict(grammar='start: "x" | ')),
    ("lark undefined rule", dict(grammar='start: foo')),
    ("bad schema", dict(json={"type": "object", "properties": {"a": {"type": "frob"}}})),
    ("bad gbnf", dict(grammar='root ::= foo')),
    ("empty language regex", dict(regex="[^\\s\\S]")),
    ("empty language lark", dict(grammar='start: a\na: "x" a')),
    ("empty language schema", dict(json={"type": "integer", "minimum": 5, "maximum": 3})),
    ("empty language schema false", dict(json={"type":"object","properties":{"a":False},"required":["a"]})),
]
for name, form in cases:
    out = []
    for mode in (None, "required", "optional"):
        try:
            comp.check(StructuredOutputs(**form, thinking_first=mode))
            out.append(f"{mode}: compiles")
        except GrammarError as e:
            out.append(f"{mode}: GrammarError {str(e)[:150]!r}")
    print(name); [print("   ", o) for o in out]
