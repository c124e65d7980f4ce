"""tool_choice required, cut by max_tokens inside a second call's opening: raw markup leaks into content."""
from h import *
CH="/v1/chat/completions"
W={"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}
M=[{"role":"user","content":"What's the weather in Paris?"}]
for mt in [3,5,8,14,16,18,20,22]:
    s,j=post(CH,{"messages":M,"tools":[W],"tool_choice":"required","max_tokens":mt,"temperature":0})
    m=j["choices"][0]
    print(mt, m["finish_reason"], repr(m["message"]["content"]), [(t["function"]["name"],t["function"]["arguments"]) for t in m["message"].get("tool_calls") or []])
print("named tool_choice:")
for mt in [5,8,14]:
    b={"messages":M,"tools":[W],"tool_choice":{"type":"function","function":{"name":"get_weather"}},"max_tokens":mt,"temperature":0}
    s,j=post(CH,b); m=j["choices"][0]
    st=stext(CH,{**b,"stream":True})
    print(mt, m["finish_reason"], repr(m["message"]["content"]), m["message"].get("tool_calls"), "| streamed content:", st[1])
print("auto:")
M2=[{"role":"user","content":"Use the tool: weather in Paris?"}]
for mt in [8]:
    s,j=post(CH,{"messages":M2,"tools":[W],"tool_choice":"auto","max_tokens":mt,"temperature":0}); m=j["choices"][0]
    print(mt, m["finish_reason"], repr(m["message"]["content"]), m["message"].get("tool_calls"))
