from h import *
import time
U = [{"role": "user", "content": "JSON please."}]
S = {
 "missing $ref": {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},
 "ref loop": {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}},
 "bad pattern": {"type": "string", "pattern": "["},
 "min>max": {"type": "integer", "minimum": 5, "maximum": 1},
 "minLength>maxLength": {"type": "string", "minLength": 5, "maxLength": 1},
 "enum empty": {"enum": []},
 "false prop required": {"type": "object", "properties": {"a": False}, "required": ["a"]},
 "false root": {"not": {}},
 "minItems huge": {"type": "array", "items": {"type": "integer"}, "minItems": 100000},
 "maxLength huge": {"type": "string", "minLength": 1000000},
 "required missing prop": {"type": "object", "properties": {}, "required": ["zz"], "additionalProperties": False},
 "type array": {"type": ["string", "integer"]},
 "float minimum on int": {"type": "integer", "minimum": 1.5, "maximum": 1.9},
 "nan-ish const": {"const": 1e400},
}
for k, sch in S.items():
    t0 = time.time()
    s, j = post({"messages": U, "max_tokens": 12, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": sch}}})
    dt = time.time() - t0
    if s == 200:
        c = j["choices"][0]; print(f"{s} {k} ({dt:.1f}s): fr={c['finish_reason']} {c['message']['content']!r}")
    else:
        e = j["error"] if isinstance(j, dict) else j
        print(f"{s} {k} ({dt:.1f}s): param={e.get('param')} {e.get('message','')[:160]!r}")
