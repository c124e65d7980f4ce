"""Every constraint form the server builds, composed after thinking (required / optional):
compiles? accepts <think>..</think> + a valid answer, rejects an invalid one?"""
from common import *
from tokenizers import AddedToken
from roseinfer.structured.tools import Tool, ToolUse
from roseinfer.structured.gbnf import gbnf_to_lark
hf = build_tokenizer()
hf.add_tokens(["<think>", "</think>", "<tool_call>", "</tool_call>"])
tok, comp = compiler_for(hf)

nested = {"type": "object", "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}},
          "required": ["x"], "additionalProperties": False}},
          "properties": {"p": {"$ref": "#/$defs/P"}, "e": {"enum": ["a", "b"]}},
          "required": ["p", "e"], "additionalProperties": False}
t_add = Tool("add", None, {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})
t_sub = Tool("sub", None, None)
CALL = '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>'
forms = [
    ("json", dict(json={"type": "object", "properties": {"a": {"type": "integer"}}}), '{"a":1}', '{"a":"x"}'),
    ("json nested $defs strict", dict(json=nested), '{"p":{"x":1},"e":"a"}', '{"p":{"x":1,"y":2},"e":"a"}'),
    ("json_object", dict(json_object=True), '{}', '[]'),
    ("regex", dict(regex="[0-9]+"), "42", "x"),
    ("regex leading \\n", dict(regex="\\n[0-9]+"), "\n42", "42"),
    ("regex leading spaces", dict(regex=" +[0-9]+"), "  42", "42"),
    ("choice", dict(choice=("yes", "no")), "no", "maybe"),
    ("choice leading space", dict(choice=(" yes", " no")), " yes", "yes"),
    ("lark", dict(grammar='start: "x" | "y"'), "x", "z"),
    ("lark %llguidance header", dict(grammar='%llguidance {}\nstart: "x" | "y"'), "x", "z"),
    ("lark %ignore", dict(grammar='%ignore /[ \\n]+/\nstart: "a" "b"'), "a b", "a c"),
    ("lark %json", dict(grammar='start: "R:" %json {"type":"integer"}'), "R:5", "R:x"),
    ("lark regex /.*/", dict(grammar='start: /[a-z<>\\/]*/'), "abc", "ABC"),
    ("gbnf", dict(grammar='root ::= "x" [0-9]+'), "x12", "y"),
    ("tools required", dict(grammar=ToolUse((t_add, t_sub), "required").grammar()), CALL, "hello"),
    ("tools named", dict(grammar=ToolUse((t_add, t_sub), "named", name="add").grammar()), CALL,
     '<tool_call>\n{"name": "sub", "arguments": {}}\n</tool_call>'),
    ("tools auto + response_format", dict(grammar=ToolUse((t_add,), "auto", answer_schema={"type": "object", "properties": {"r": {"type": "integer"}}, "required": ["r"]}).grammar()),
     '{"r":3}', "free text"),
]
for name, form, good, bad in forms:
    row = []
    for mode in ("required", "optional"):
        spec = StructuredOutputs(**form, thinking_first=mode)
        try:
            comp.check(spec)
        except Exception as e:
            row.append(f"{mode}: COMPILE ERROR {e}")
            continue
        r = (accepts(comp, tok, spec, f"<think>q</think>\n\n{good}"),
             not accepts(comp, tok, spec, f"<think>q</think>{bad}"),
             accepts(comp, tok, spec, f"q a</think>{good}") == (mode == "required"),
             accepts(comp, tok, spec, good) == (mode == "optional"))
        row.append(f"{mode}: {'ok' if all(r) else 'WRONG ' + str(r)}")
    # baseline: the constraint alone
    base = StructuredOutputs(**form)
    b = (accepts(comp, tok, base, good), not accepts(comp, tok, base, bad))
    print(f"{name:30} | {' | '.join(row)} | alone: {'ok' if all(b) else 'WRONG ' + str(b)}")
