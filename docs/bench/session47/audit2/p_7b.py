from common import *
for depth in (130, 200, 300):
    d = '{"type":"string"}'
    for _ in range(depth): d = '{"type":"object","properties":{"a":' + d + '},"required":["a"]}'
    probe(f"tool_params_schema_depth{depth}_required", "/v1/chat/completions", raw=('{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4,"tool_choice":"required","tools":[{"type":"function","function":{"name":"f","parameters":' + d + '}}]}').encode(), settle=0.6)
