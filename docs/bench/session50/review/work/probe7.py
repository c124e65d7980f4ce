import json, sys, importlib.util, llguidance
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path); m = importlib.util.module_from_spec(spec); sys.modules[name] = m; spec.loader.exec_module(m); return m
old = load("tools_old", "tools_old.py")
from roseinfer.structured import tools as new
cases = {
 "draft7_anchor_id": {"$schema": "http://json-schema.org/draft-07/schema#", "type":"object","definitions":{"B":{"enum":["q"]},"A":{"$id":"#A","type":"object","properties":{"b":{"$ref":"#/definitions/B"}},"required":["b"],"additionalProperties":False}},"properties":{"x":{"$ref":"#A"}},"required":["x"],"additionalProperties":False},
 "draft7_noschema_anchor": {"type":"object","definitions":{"A":{"$id":"#A","enum":["q"]}},"properties":{"x":{"$ref":"#A"}},"required":["x"],"additionalProperties":False},
 "anchor2020": {"type":"object","$defs":{"A":{"$anchor":"A","enum":["q"]}},"properties":{"x":{"$ref":"#A"}},"required":["x"],"additionalProperties":False},
 "schema_kw_2019_recursive": {"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"c":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["c"],"additionalProperties":False},
}
for name, params in cases.items():
    for mod, label in ((old, "old"), (new, "new")):
        use = mod.ToolUse((mod.Tool("f", parameters=params),), "named", "f")
        g = use.grammar()
        ok, errs = llguidance.LLMatcher.validate_grammar_with_warnings(g) if hasattr(llguidance.LLMatcher, "validate_grammar_with_warnings") else (None, llguidance.LLMatcher.validate_grammar(g))
        print(label, name, repr(errs)[:200] if errs else "OK")
    print("  alone:", repr(llguidance.LLMatcher.validate_grammar(llguidance.LLMatcher.grammar_from_json_schema(params)))[:150] or "OK")
