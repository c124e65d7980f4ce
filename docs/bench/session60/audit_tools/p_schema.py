from common import *
import json, re
try:
    import jsonschema
except ImportError:
    jsonschema = None
msgs = [{"role": "user", "content": "Describe a fictional person as JSON."}]
S = {
 "nested_enum_arrays": {"type": "object", "properties": {
    "name": {"type": "string"},
    "role": {"type": "string", "enum": ["admin", "user", "guest"]},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
    "address": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
                "required": ["city", "zip"], "additionalProperties": False}},
    "required": ["name", "role", "tags", "address"], "additionalProperties": False},
 "anyof_ref": {"type": "object", "$defs": {"Pet": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["cat", "dog"]}, "age": {"type": "integer", "minimum": 0, "maximum": 30}}, "required": ["kind", "age"], "additionalProperties": False}},
    "properties": {"pet": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}]}, "pets": {"type": "array", "items": {"$ref": "#/$defs/Pet"}, "maxItems": 2}},
    "required": ["pet", "pets"], "additionalProperties": False},
 "formats": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}, "when": {"type": "string", "format": "date"},
    "id": {"type": "string", "format": "uuid"}, "score": {"type": "number", "minimum": 0, "maximum": 1}, "n": {"type": "integer", "multipleOf": 5}},
    "required": ["email", "when", "id", "score", "n"], "additionalProperties": False},
 "len_limits": {"type": "object", "properties": {"code": {"type": "string", "minLength": 3, "maxLength": 4}, "const": {"const": "X"}},
    "required": ["code", "const"], "additionalProperties": False},
}
for name, sch in S.items():
    for strict in [True, False]:
        try:
            r = client.chat.completions.create(model=M, messages=msgs, max_tokens=200, temperature=0.8, seed=5,
                response_format={"type": "json_schema", "json_schema": {"name": name, "schema": sch, "strict": strict}})
        except Exception as e:
            show(f"{name} strict={strict} ERROR", repr(e)); continue
        c = r.choices[0]
        txt = c.message.content
        try:
            obj = json.loads(txt); v = "json ok"
            if jsonschema:
                try: jsonschema.validate(obj, sch, format_checker=jsonschema.FormatChecker()); v += ", schema ok"
                except Exception as e: v += f", SCHEMA FAIL: {str(e).splitlines()[0]}"
        except Exception as e:
            v = f"INVALID JSON {e}"
        show(f"{name} strict={strict}", {"finish": c.finish_reason, "content": txt, "check": v})
# json_object
r = client.chat.completions.create(model=M, messages=msgs, max_tokens=100, temperature=0.8, seed=5, response_format={"type": "json_object"})
show("json_object", {"finish": r.choices[0].finish_reason, "content": r.choices[0].message.content})
