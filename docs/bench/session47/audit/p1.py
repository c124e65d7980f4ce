import sys
from harness import *
C, CH = "/v1/completions", "/v1/chat/completions"
def comp(**kw): return {"prompt": "Hello", "max_tokens": 16, "temperature": 0, **kw}
def chat(**kw): return {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 16, "temperature": 0, **kw}
def nest(d):
    s = {"type": "string"}
    for _ in range(d): s = {"type": "object", "properties": {"a": s}, "required": ["a"]}
    return s
P = {}
P["baseline"] = (C, comp())
P["regex_aa"] = (C, comp(guided_regex="(a|aa)*(a|aa)*(a|aa)*b"))
P["regex_nested_plus"] = (C, comp(structured_outputs={"regex": "((a+)+)+(b+)+$"}))
P["regex_count_1000x1000"] = (C, comp(guided_regex="(a{1,1000}){1,1000}"))
P["regex_x1000_1000"] = (C, comp(guided_regex="((x|y){1000}){1000}"))
P["regex_any_100k"] = (C, comp(guided_regex="[\\s\\S]{100000}z"))
P["regex_alt_wide"] = (C, comp(guided_regex="(" + "|".join(f"w{i}q{i*7}" for i in range(20000)) + ")"))
P["rf_pattern"] = (CH, chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"a": {"type": "string", "pattern": "((a|aa)+){1,500}b{1,500}"}}, "required": ["a"]}}}))
P["schema_nest_1000"] = (CH, chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": nest(1000)}}))
P["schema_nest_100"] = (CH, chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": nest(100)}}))
P["schema_5000_props"] = (CH, chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(5000)}, "required": [f"p{i}" for i in range(5000)]}}}))
P["schema_5000_props_opt"] = (CH, chat(response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(5000)}}}}))
P["schema_recursive_ref"] = (CH, chat(guided_json={"$ref": "#/$defs/n", "$defs": {"n": {"type": "object", "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "required": ["v", "kids"]}}}))
P["schema_self_ref"] = (CH, chat(guided_json={"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}))
P["schema_anyof_many"] = (CH, chat(guided_json={"anyOf": [{"type": "object", "properties": {f"k{i}": {"const": i}}, "required": [f"k{i}"]} for i in range(3000)]}))
P["gbnf_huge"] = (C, comp(grammar="root ::= r0\n" + "\n".join(f"r{i} ::= \"t{i}\" r{i+1} | \"u{i}\"" for i in range(30000)) + "\nr30000 ::= \"end\"\n"))
P["gbnf_wide"] = (C, comp(grammar="root ::= " + " | ".join(f"\"c{i}x\"" for i in range(50000)) + "\n"))
P["choice_50000"] = (C, comp(guided_choice=[f"choice number {i}" for i in range(50000)]))
P["stop_10000"] = (C, comp(stop=[f"zz{i}qq" for i in range(10000)], max_tokens=64))
P["stop_10000_long"] = (C, comp(stop=["x" * 300 + str(i) for i in range(10000)], max_tokens=64))
P["bad_words_10000"] = (C, comp(bad_words=[f"word{i}" for i in range(10000)], max_tokens=64))
P["bad_words_10000_n16"] = (C, comp(bad_words=[f"word{i}" for i in range(10000)], max_tokens=16, n=16, temperature=1))
P["logit_bias_49152"] = (C, comp(logit_bias={str(i): 1.0 for i in range(49152)}, max_tokens=64))
P["logit_bias_50000"] = (C, comp(logit_bias={str(i): 1.0 for i in range(50000)}))
P["allowed_49152"] = (C, comp(allowed_token_ids=list(range(49152)), max_tokens=64))
