from common import *
probe("regex_empty_class", "/v1/completions", {"prompt": "x", "max_tokens": 4, "guided_regex": "[^\\s\\S]"})
probe("regex_empty_class_stream", "/v1/completions", {"prompt": "x", "max_tokens": 4, "stream": True, "guided_regex": "[^\\s\\S]"})
def nest_obj(n): return '{"a":' * n + '1' + '}' * n
probe("tool_params_depth500", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":' + nest_obj(500) + '}}}}]}').encode())
d = '{"type":"string"}'
for _ in range(500): d = '{"type":"object","properties":{"a":' + d + '},"required":["a"]}'
probe("tool_params_schema_depth500", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"tools":[{"type":"function","function":{"name":"f","parameters":' + d + '}}]}').encode())
probe("tool_params_schema_depth500_required", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"tool_choice":"required","tools":[{"type":"function","function":{"name":"f","parameters":' + d + '}}]}').encode())
