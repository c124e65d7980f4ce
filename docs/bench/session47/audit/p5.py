from harness import *
import json
def nest_obj(n): return '{"a":' * n + '1' + '}' * n
for depth in (500, 950):
    probe(f"guided_json_depth{depth}", "/v1/completions", raw=('{"prompt":"Hi","max_tokens":4,"guided_json":' + nest_obj(depth) + '}').encode())
    probe(f"chat_template_kwargs_depth{depth}", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"chat_template_kwargs":{"x":' + nest_obj(depth) + '}}').encode())
    probe(f"tool_params_depth{depth}", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":' + nest_obj(depth) + '}}}}]}').encode())
    probe(f"content_parts_depth{depth}", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":[{"type":"text","text":"hi","x":' + nest_obj(depth) + '}]}],"max_tokens":4}').encode())
s = json.dumps('{"a":' * 100000 + '1' + '}' * 100000)
probe("so_json_string_depth100000", "/v1/completions", raw=('{"prompt":"Hi","max_tokens":4,"structured_outputs":{"json":' + s + '}}').encode())
