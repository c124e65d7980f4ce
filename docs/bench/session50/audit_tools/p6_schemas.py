from h import *
import jsonschema
U = [{"role": "user", "content": "Give me a JSON example of a person with a list of tags."}]
S = {
 "uniqueItems": {"type": "array", "items": {"type": "integer", "enum": [1, 2]}, "uniqueItems": True, "minItems": 2},
 "multipleOf": {"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 7, "minimum": 8}}, "required": ["n"], "additionalProperties": False},
 "oneOf-overlap": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
 "not": {"type": "object", "properties": {"a": {"not": {"type": "string"}}}, "required": ["a"]},
 "format email": {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}, "required": ["e"], "additionalProperties": False},
 "format uri": {"type": "string", "format": "uri"},
 "format madeup": {"type": "string", "format": "madeup"},
 "pattern": {"type": "string", "pattern": "^[A-Z]{3}-\\d{2}$"},
 "pattern lookahead": {"type": "string", "pattern": "^(?=.*x).{3}$"},
 "minProperties": {"type": "object", "minProperties": 2},
 "if/then": {"type": "object", "properties": {"a": {"type": "integer"}}, "if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}},
 "dependentRequired": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a"], "dependentRequired": {"a": ["b"]}},
 "contains": {"type": "array", "contains": {"const": 5}, "items": {"type": "integer"}},
 "patternProperties": {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False, "minProperties": 1},
 "exclusiveMin": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
 "string maxLength": {"type": "object", "properties": {"s": {"type": "string", "minLength": 3, "maxLength": 5}}, "required": ["s"], "additionalProperties": False},
 "allOf": {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {"type": "string"}}, "required": ["b"]}]},
 "$ref recursive": {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 1}}, "required": ["v", "kids"], "additionalProperties": False}}, "$ref": "#/$defs/node"},
 "$ref remote": {"$ref": "http://example.com/s.json"},
 "unknown keyword": {"type": "object", "foo": 1},
 "prefixItems": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
 "type null": {"type": "null"},
 "const obj": {"const": {"a": [1, 2]}},
 "enum mixed": {"enum": ["a", 1, None, {"x": 1}]},
 "true schema": True,
 "empty": {},
 "draft-04 exclusiveMinimum bool": {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1},
}
for k, sch in S.items():
    b = {"messages": U, "max_tokens": 60, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": sch}}}
    s, j = post(b)
    if s != 200:
        print(f"{s} {k}: {j['error']['param']} {j['error']['message'][:150]}"); continue
    c = j["choices"][0]; txt = c["message"]["content"]
    try:
        v = json.loads(txt)
        try:
            jsonschema.validate(v, sch if sch is not True else {}); verdict = "VALID"
        except jsonschema.ValidationError as e: verdict = f"INVALID: {e.message[:100]}"
        except Exception as e: verdict = f"validator error: {e!r:.100}"
    except ValueError: verdict = "not json"
    print(f"{s} {k}: fr={c['finish_reason']} {verdict} :: {txt[:120]!r}")
